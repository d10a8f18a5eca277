// A later copy of a kept body (A -> B -> A; an in_flight entry becoming handler_failed) takes
// the earlier entry's digest in one store operation (replace), so that a store failing in
// between no longer loses both. The failure here is real: a Redis at its maxmemory
// (noeviction) still runs the delete's script (HDEL and ZREM free memory) and refuses any script
// at its first write, as it refuses writes when it is full in production.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDeadLetterStore,
  createWebhookReceiver,
  type DeadLetterStore,
  type WebhookErrorContext,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';
import { createFakeService, type FakeService } from './helpers/service.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const kyc = (userId: string, kycStatus: string) => eventBody('kyc.status.changed', userId, { kycStatus } as never);

let service: FakeService;
// A redis-server of its own: these tests fill it up.
let server: RedisWithClients;
const redis = () => server.ioredis;
let prefixCounter = 0;
beforeAll(async () => {
  [service, server] = await Promise.all([createFakeService(), startRedisWithClients()]);
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  await redis().config('SET', 'maxmemory', '0');
});

/** Redis is full from now on (noeviction, the default): every write is refused with OOM. */
const fillRedis = async () => { await redis().config('SET', 'maxmemory', '1'); };

function receiverWith(deadLetters: DeadLetterStore, options: { acknowledgeEarly?: boolean; handler?: () => Promise<void> } = {}) {
  const errors: Array<{ error: Error; context: WebhookErrorContext }> = [];
  const receiver = createWebhookReceiver({
    publicKey: service.publicKey,
    dedupe: createMemoryDedupeStore(),
    deadLetters,
    acknowledgeEarly: options.acknowledgeEarly,
    onError: (error, context) => { errors.push({ error: error as Error, context }); },
  }).on('kyc.status.changed', options.handler ?? (() => undefined));
  return { receiver, errors };
}

const deliver = async (receiver: ReturnType<typeof receiverWith>['receiver'], body: string) => {
  const { status, code } = await service.receive(receiver, body);
  return `${status} ${code}`;
};

const kept = async (store: DeadLetterStore) => (await store.list(10)).map((entry) => [entry.bodySha256, entry.reason]);

describe('a Redis dead-letter store that refuses the write of a later copy (full: maxmemory) keeps the earlier entry', () => {
  const redisLetters = () => createRedisDeadLetterStore({ client: redis(), keyPrefix: `replace:${++prefixCounter}:` });

  it('A -> B -> A of events the schema refuses: the second A is answered 503 and the first A stays; its retry then keeps A after B', async () => {
    const letters = redisLetters();
    const { receiver } = receiverWith(letters);
    const a = kyc('usr_back', 'someNewStatus');
    const b = kyc('usr_back', 'anotherNewStatus');
    expect(await deliver(receiver, a)).toBe('202 invalid_event_dead_lettered');
    expect(await deliver(receiver, b)).toBe('202 invalid_event_dead_lettered');
    await fillRedis();
    expect(await deliver(receiver, a)).toBe('503 dead_letter_store_unavailable');
    // Before replace: the delete went through and the put was refused, leaving [[b]]: the first A lost.
    expect(await kept(letters)).toEqual([[sha256(a), 'invalid_event'], [sha256(b), 'invalid_event']]);
    await redis().config('SET', 'maxmemory', '0');
    expect(await deliver(receiver, a)).toBe('202 invalid_event_dead_lettered');
    expect(await kept(letters)).toEqual([[sha256(b), 'invalid_event'], [sha256(a), 'invalid_event']]);
  });

  it('handlers that fail after an early 202: the in_flight entry stays, and the report says so', async () => {
    const letters = redisLetters();
    const { receiver, errors } = receiverWith(letters, {
      acknowledgeEarly: true,
      handler: async () => {
        await fillRedis();
        throw new Error('handler bug');
      },
    });
    const body = kyc('usr_early_full', 'approved');
    expect(await deliver(receiver, body)).toBe('202 acknowledged');
    // Before replace: [] (the in_flight entry deleted, the handler_failed one refused): the event lost.
    expect(await kept(letters)).toEqual([[sha256(body), 'in_flight']]);
    const storeReports = errors.filter(({ error }) => error.name === 'DeadLetterStoreError');
    expect(storeReports.map(({ error, context }) => [context.outcome, context.afterReply, error.message])).toEqual([
      ['acknowledged', true, expect.stringContaining('Its in_flight entry, kept before the 202, is still in the store')],
    ]);
  });

  it('handlers that fail again on a retry (500): the handler_failed entry of the first failure stays, and the report says so', async () => {
    const letters = redisLetters();
    let failures = 0;
    const { receiver, errors } = receiverWith(letters, {
      handler: async () => {
        if (++failures === 2) await fillRedis();
        throw new Error('handler bug');
      },
    });
    const body = kyc('usr_fails_twice', 'approved');
    expect(await deliver(receiver, body)).toBe('500 handler_failed');
    const [first] = await letters.list(10);
    expect(await deliver(receiver, body)).toBe('500 handler_failed');
    expect(failures).toBe(2);
    // Before replace: [] (the first entry deleted, the second refused).
    expect(await letters.list(10)).toEqual([{ ...first, rawBody: expect.any(Uint8Array) }]);
    const storeReports = errors.filter(({ error }) => error.name === 'DeadLetterStoreError');
    expect(storeReports.map(({ error }) => error.message)).toEqual([expect.stringContaining('An entry of the same body kept earlier, if any, is still in the store.')]);
  });
});

describe('a dead-letter store of your own without replace: delete then put, as before', () => {
  /** The memory store's put, list and delete only (a store written before replace); `put` refuses while `full.value` is set. */
  function storeWithoutReplace(full: { value: boolean }): DeadLetterStore {
    const inner = createMemoryDeadLetterStore();
    return {
      put: (entry) => {
        if (full.value) throw new Error('store full');
        return inner.put(entry);
      },
      list: (limit) => inner.list(limit),
      delete: (digest) => inner.delete(digest),
    };
  }

  it('keeps A -> B -> A in that order; a put that fails after the delete leaves no A, and the retry keeps it again', async () => {
    const full = { value: false };
    const letters = storeWithoutReplace(full);
    const { receiver } = receiverWith(letters);
    const a = kyc('usr_own', 'someNewStatus');
    const b = kyc('usr_own', 'anotherNewStatus');
    for (const body of [a, b, a]) expect(await deliver(receiver, body)).toBe('202 invalid_event_dead_lettered');
    expect(await kept(letters)).toEqual([[sha256(b), 'invalid_event'], [sha256(a), 'invalid_event']]);
    expect(await deliver(receiver, b)).toBe('202 invalid_event_dead_lettered');
    full.value = true;
    expect(await deliver(receiver, a)).toBe('503 dead_letter_store_unavailable');
    // The documented window of a store without replace.
    expect(await kept(letters)).toEqual([[sha256(b), 'invalid_event']]);
    full.value = false;
    expect(await deliver(receiver, a)).toBe('202 invalid_event_dead_lettered');
    expect(await kept(letters)).toEqual([[sha256(b), 'invalid_event'], [sha256(a), 'invalid_event']]);
  });

  it('reports that the earlier entry was deleted when the put fails after the delete (handlers failing before the reply)', async () => {
    const full = { value: false };
    const letters = storeWithoutReplace(full);
    const { receiver, errors } = receiverWith(letters, { handler: async () => { throw new Error('handler bug'); } });
    const body = kyc('usr_own_fails', 'approved');
    expect(await deliver(receiver, body)).toBe('500 handler_failed');
    full.value = true;
    expect(await deliver(receiver, body)).toBe('500 handler_failed');
    expect(await letters.list(10)).toEqual([]);
    const storeReports = errors.filter(({ error }) => error.name === 'DeadLetterStoreError');
    expect(storeReports.map(({ error }) => error.message)).toEqual([expect.stringContaining('The store has no replace(): an entry of the same body kept earlier, if any, was deleted before the put failed.')]);
  });
});
