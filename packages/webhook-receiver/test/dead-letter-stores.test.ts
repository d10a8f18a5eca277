import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryDeadLetterStore } from '../src/dead-letter/memory-dead-letter-store.js';
import { createRedisDeadLetterStore } from '../src/dead-letter/redis-dead-letter-store.js';
import { DeadLetterStoreError, WebhookReceiverError } from '../src/errors.js';
import { deadLetterEntry, describeDeadLetterReplaceContract, describeDeadLetterStoreContract, type DeadLetterStoreFactory } from './helpers/dead-letter-store-contract.js';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

let redis: RedisWithClients;
let prefixCounter = 0;

beforeAll(async () => {
  redis = await startRedisWithClients();
});

afterAll(async () => {
  await redis?.close();
});

const freshPrefix = () => `dead-letter-test:${process.pid}:${++prefixCounter}:`;

const entry = deadLetterEntry;

const stores: Array<[string, DeadLetterStoreFactory]> = [
  ['memory store', (options) => createMemoryDeadLetterStore(options)],
  ['Redis store over ioredis', (options) => createRedisDeadLetterStore({ client: redis.ioredis, keyPrefix: freshPrefix(), ...options })],
  ['Redis store over node-redis', (options) => createRedisDeadLetterStore({ client: redis.nodeRedis, keyPrefix: freshPrefix(), ...options })],
  ['Redis store over a command function', (options) => createRedisDeadLetterStore({ client: (args) => redis.ioredis.call(args[0]!, ...args.slice(1)), keyPrefix: freshPrefix(), ...options })],
];

describe.each(stores)('%s replaces an entry in one operation (replace)', (_name, createStore) => {
  describeDeadLetterReplaceContract(createStore, { bounded: true });
});

describe.each(stores)('%s keeps dead letters until they are deleted', (_name, createStore) => {
  describeDeadLetterStoreContract(createStore);
});

describe('refuses what it cannot keep, with a typed error', () => {
  it('the memory store refuses a new entry beyond maxEntries instead of dropping an old one', () => {
    const store = createMemoryDeadLetterStore({ maxEntries: 1 });
    store.put(entry('a', 1));
    expect(() => store.put(entry('b', 2))).toThrow(expect.objectContaining({ name: 'DeadLetterStoreError', code: 'dead_letter_store_full' }));
    expect(() => store.put(entry('a', 3))).not.toThrow();
  });

  describe.each([
    ['ioredis', () => redis.ioredis],
    ['node-redis', () => redis.nodeRedis],
  ] as const)('the Redis store over %s, on a real redis-server', (_client, client) => {
    it('refuses a new entry beyond maxEntries instead of dropping an old one, keeps a repeat of a kept one, and takes one again after a delete', async () => {
      const keyPrefix = freshPrefix();
      const store = createRedisDeadLetterStore({ client: client(), keyPrefix, maxEntries: 2 });
      await store.put(entry('a', 1));
      await store.put(entry('b', 2));
      const full = Promise.resolve(store.put(entry('c', 3)));
      await expect(full).rejects.toBeInstanceOf(DeadLetterStoreError);
      await expect(full).rejects.toMatchObject({ code: 'dead_letter_store_full', message: expect.stringContaining('maxEntries (2)') });
      // A redelivery of a kept body: not refused, and the first entry stays as it was.
      await store.put({ ...entry('a', 5), timestamp: 1_700_000_060 });
      expect((await store.list(10)).map((kept) => [kept.bodySha256, kept.receivedAt])).toEqual([['a', 1], ['b', 2]]);
      // Nothing of the refused entry was written: neither in the hash nor in the order.
      expect(await redis.ioredis.hlen(`${keyPrefix}dead-letters`)).toBe(2);
      expect(await redis.ioredis.zcard(`${keyPrefix}dead-letters:order`)).toBe(2);
      await store.delete('a');
      await store.put(entry('c', 3));
      expect((await store.list(10)).map((kept) => kept.bodySha256)).toEqual(['b', 'c']);
      await expect(Promise.resolve(store.put(entry('d', 4)))).rejects.toMatchObject({ code: 'dead_letter_store_full' });
    });
  });

  it('the Redis store counts the entries of every process: concurrent puts from two clients keep exactly maxEntries', async () => {
    const keyPrefix = freshPrefix();
    const stores = [redis.ioredis, redis.nodeRedis].map((client) => createRedisDeadLetterStore({ client, keyPrefix, maxEntries: 5 }));
    const settled = await Promise.allSettled(Array.from({ length: 20 }, (_, index) => stores[index % 2]!.put(entry(`e${index}`, index))));
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(5);
    expect(settled.filter((result) => result.status === 'rejected').map((result) => (result as PromiseRejectedResult).reason.code))
      .toEqual(Array.from({ length: 15 }, () => 'dead_letter_store_full'));
    expect(await redis.ioredis.hlen(`${keyPrefix}dead-letters`)).toBe(5);
    expect(await redis.ioredis.zcard(`${keyPrefix}dead-letters:order`)).toBe(5);
  });

  it('names a bad option or client', () => {
    expect(() => createMemoryDeadLetterStore({ maxEntries: 0 })).toThrow(WebhookReceiverError);
    for (const maxEntries of [0, -1, 1.5, Number.POSITIVE_INFINITY, '10' as unknown as number]) {
      expect(() => createRedisDeadLetterStore({ client: redis.ioredis, maxEntries })).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('maxEntries') }));
    }
    expect(() => createRedisDeadLetterStore({ client: {} as never })).toThrow(expect.objectContaining({ code: 'unsupported_redis_client' }));
  });

  it('rejects with dead_letter_store_unavailable when Redis does not answer in time', async () => {
    const store = createRedisDeadLetterStore({ client: () => new Promise(() => undefined), commandTimeoutMs: 20 });
    const failure = Promise.resolve(store.put(entry('a', 1)));
    await expect(failure).rejects.toBeInstanceOf(DeadLetterStoreError);
    await expect(failure).rejects.toMatchObject({ code: 'dead_letter_store_unavailable' });
  });
});

// The README (and the maxEntries TSDoc) size the Redis store's memory by its entries: keep that
// figure in step with what an entry of a typical event takes on a real redis-server.
describe('the README\'s Redis memory per dead letter', () => {
  it('matches what entries of a typical user event take (within 15%)', async () => {
    const stated = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1]) * 1_000;
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const tsdoc = readFileSync(join(packageDir, 'src/dead-letter/redis-dead-letter-store.ts'), 'utf8');
    const readmeBytes = stated(readme, /An entry takes about ([\d.]+) KB of Redis memory for a typical\s+event/);
    expect(stated(tsdoc, /about ([\d.]+) KB an entry for a typical event/)).toBe(readmeBytes);
    const keyPrefix = freshPrefix();
    const store = createRedisDeadLetterStore({ client: redis.ioredis, keyPrefix });
    const count = 2_000;
    for (let index = 0; index < count; index++) {
      // As the receiver keeps a schema-refused delivery (its body, digest, signature and problems)
      // of an onboarded user with two cards: a body of about 1 KB.
      const rawBody = new TextEncoder().encode(eventBody('kyc.status.changed', `usr_${index}`, {
        kycStatus: 'verifiedByPartner' as never,
        phone: '+4915112345678',
        bankingDetails: { providerIban: 'DE89370400440532013000', providerBic: 'COBADEFFXXX', providerIbanStatus: 'active', address: '1 Bank Street, 10115 Berlin' },
        cards: ['virtual', 'physical'].map((kind) => ({ id: `card-${kind}-${index}`, cardToken: `tok-${kind}-${index}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: '2026-03-01T10:15:00.000Z', virtual: kind === 'virtual' })),
      }));
      expect(rawBody.byteLength).toBeGreaterThan(1_000);
      await store.put({
        ...entry(createHash('sha256').update(rawBody).digest('hex'), 1_700_000_000_000 + index, rawBody),
        signature: `${'A'.repeat(85)}w==`,
        errors: [{ path: '/data/kycStatus', keyword: 'enum', message: '/data/kycStatus must be one of: notStarted, documentsRequested, pending, processing, approved, resubmissionRequested, rejected, requiresAction' }],
      });
    }
    // Both keys, every element counted (SAMPLES 0).
    const keyBytes = async (key: string) => Number(await redis.ioredis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const perEntry = ((await keyBytes(`${keyPrefix}dead-letters`)) + (await keyBytes(`${keyPrefix}dead-letters:order`))) / count;
    expect(perEntry).toBeGreaterThan(readmeBytes * 0.85);
    expect(perEntry).toBeLessThan(readmeBytes * 1.15);
  });
});
