import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetterEntry, DeadLetterStore } from '../src/dead-letter/dead-letter-store.js';
import { createMemoryDeadLetterStore } from '../src/dead-letter/memory-dead-letter-store.js';
import { createRedisDeadLetterStore } from '../src/dead-letter/redis-dead-letter-store.js';
import { DeadLetterStoreError, WebhookReceiverError } from '../src/errors.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';

let redis: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
let prefixCounter = 0;

beforeAll(async () => {
  redis = await startRedisServer();
  ioredis = new Redis({ port: redis.port, host: '127.0.0.1' });
  nodeRedis = createClient({ socket: { port: redis.port, host: '127.0.0.1' } });
  await nodeRedis.connect();
});

afterAll(async () => {
  ioredis?.disconnect();
  await nodeRedis?.close();
  await redis?.close();
});

const freshPrefix = () => `dead-letter-test:${process.pid}:${++prefixCounter}:`;

function entry(digest: string, receivedAt: number, body: Uint8Array = new TextEncoder().encode(`{"n":"${digest}"}`)): DeadLetterEntry {
  return {
    bodySha256: digest,
    rawBody: body,
    timestamp: 1_700_000_000,
    signature: 'c2lnbmF0dXJl',
    receivedAt,
    errors: [{ path: '/data/kycStatus', keyword: 'enum', message: '/data/kycStatus must be one of: ...' }],
  };
}

const stores: Array<[string, () => DeadLetterStore]> = [
  ['memory store', () => createMemoryDeadLetterStore()],
  ['Redis store over ioredis', () => createRedisDeadLetterStore({ client: ioredis, keyPrefix: freshPrefix() })],
  ['Redis store over node-redis', () => createRedisDeadLetterStore({ client: nodeRedis, keyPrefix: freshPrefix() })],
];

describe.each(stores)('%s keeps dead letters until they are deleted', (_name, createStore) => {
  it('lists what was put, oldest first, byte for byte (also bytes that are not UTF-8)', async () => {
    const store = createStore();
    const notUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0x7b]);
    await store.put(entry('b', 2_000));
    await store.put(entry('a', 1_000, notUtf8));
    await store.put(entry('c', 3_000));
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['a', 'b', 'c']);
    expect([...listed[0]!.rawBody]).toEqual([...notUtf8]);
    expect(listed[1]).toEqual({ ...entry('b', 2_000), rawBody: expect.any(Uint8Array) });
    expect(new TextDecoder().decode(listed[1]!.rawBody)).toBe('{"n":"b"}');
    expect((await store.list(2)).map((kept) => kept.bodySha256)).toEqual(['a', 'b']);
  });

  it('keeps one entry per body digest, in its first place', async () => {
    const store = createStore();
    await store.put(entry('a', 1_000));
    await store.put(entry('b', 2_000));
    await store.put({ ...entry('a', 5_000), timestamp: 1_700_000_060 });
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['a', 'b']);
    expect(listed[0]!.timestamp).toBe(1_700_000_060);
  });

  it('forgets a deleted entry and ignores an unknown digest', async () => {
    const store = createStore();
    await store.put(entry('a', 1_000));
    await store.put(entry('b', 2_000));
    await store.delete('a');
    await store.delete('never-kept');
    expect((await store.list(10)).map((kept) => kept.bodySha256)).toEqual(['b']);
  });
});

describe('refuses what it cannot keep, with a typed error', () => {
  it('the memory store refuses a new entry beyond maxEntries instead of dropping an old one', () => {
    const store = createMemoryDeadLetterStore({ maxEntries: 1 });
    store.put(entry('a', 1));
    expect(() => store.put(entry('b', 2))).toThrow(expect.objectContaining({ name: 'DeadLetterStoreError', code: 'dead_letter_store_full' }));
    expect(() => store.put(entry('a', 3))).not.toThrow();
  });

  it('names a bad option or client', () => {
    expect(() => createMemoryDeadLetterStore({ maxEntries: 0 })).toThrow(WebhookReceiverError);
    expect(() => createRedisDeadLetterStore({ client: {} as never })).toThrow(expect.objectContaining({ code: 'unsupported_redis_client' }));
  });

  it('rejects with dead_letter_store_unavailable when Redis does not answer in time', async () => {
    const store = createRedisDeadLetterStore({ client: () => new Promise(() => undefined), commandTimeoutMs: 20 });
    const failure = Promise.resolve(store.put(entry('a', 1)));
    await expect(failure).rejects.toBeInstanceOf(DeadLetterStoreError);
    await expect(failure).rejects.toMatchObject({ code: 'dead_letter_store_unavailable' });
  });
});
