// An event whose handlers failed after an early 202 leaves the deduplication store no trace of
// its place (its claim is released with no retry due: the service got its 202). On Cloudflare
// Workers Date.now() advances only between I/O, so the next event of its subject, a few ms later,
// often arrives in the same millisecond: it was placed there, processed, and a later replay() of
// the failed event tied with it and was dispatched over it (found by a Workers trial: 9 users of
// 108 on an older state). The replay of a dead letter its event's claim kept is placed 1 ms
// earlier: the newer event supersedes it. Date is frozen here to make the tie; over HTTP, with
// memory stores and with Redis stores on a real redis-server.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDeadLetterStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  type DeadLetterStore,
  type DedupeStore,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { redis, running, service, useServiceAndRedis } from './helpers/service-and-redis.js';
import { listen } from './helpers/servers.js';

let prefixes = 0;
useServiceAndRedis();
afterEach(() => {
  vi.useRealTimers();
});

const storeKinds: Array<[string, () => { dedupe: DedupeStore; deadLetters: DeadLetterStore }]> = [
  // The stores' clocks read Date.now at each call, so that they see the frozen Date too.
  ['memory stores', () => ({ dedupe: createMemoryDedupeStore({ now: () => Date.now() }), deadLetters: createMemoryDeadLetterStore() })],
  ['Redis stores on a real redis-server', () => {
    const keyPrefix = `replay-tie:${process.pid}:${++prefixes}:`;
    return { dedupe: createRedisDedupeStore({ client: redis, keyPrefix, now: () => Date.now() }), deadLetters: createRedisDeadLetterStore({ client: redis, keyPrefix }) };
  }],
];

/** A receiver that acknowledges early over HTTP on `stores`, whose pending handler fails until `state.failPending` is false; `state.row` is the partner's row. */
async function earlyReceiver(stores: { dedupe: DedupeStore; deadLetters: DeadLetterStore }, userId: string) {
  const state = { row: undefined as string | undefined, failPending: true };
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, ...stores, acknowledgeEarly: true, onError: () => undefined })
    .on('kyc.status.changed', (event) => {
      if (event.data.kycStatus === 'pending' && state.failPending) throw new Error('the partner\'s database is down');
      state.row = event.data.kycStatus;
    });
  const server = await listen(toNodeHandler(receiver));
  running.push(server);
  const url = `${server.url}/webhooks`;
  const [pending, approved] = [eventBody('kyc.status.changed', userId, { kycStatus: 'pending' }), eventBody('kyc.status.changed', userId, { kycStatus: 'approved' })];
  // Delivered and its handlers run (after the 202) before the next.
  const deliver = async (body: string) => {
    expect((await service.deliver(url, body)).body.code).toBe('acknowledged');
    await receiver.drain();
  };
  return { receiver, state, pending, approved, deliver };
}

describe.each(storeKinds)('replay() and an event in the same millisecond, with %s', (_, createStores) => {
  it('pending fails after its 202, approved comes in the same ms and is processed; replay() supersedes pending', async () => {
    const stores = createStores();
    const { receiver, state, pending, approved, deliver } = await earlyReceiver(stores, `replay-tie-${process.pid}-${prefixes}`);
    // Both deliveries arrive in one millisecond, as on Workers.
    vi.useFakeTimers({ toFake: ['Date'] });
    const tied = Date.now();
    vi.setSystemTime(tied);
    await deliver(pending);
    expect((await stores.deadLetters.list(10)).map((entry) => entry.reason)).toEqual(['handler_failed']);
    await deliver(approved);
    expect(state.row).toBe('approved');
    // Later, the partner replays what is kept (its database is back): pending is older than approved.
    // (The clock still frozen: a replay's place is exact only to the ms it takes to reach the store.)
    vi.setSystemTime(tied + 5_000);
    state.failPending = false;
    const [kept] = await stores.deadLetters.list(10);
    expect((await receiver.replay()).results).toEqual([{ bodySha256: kept!.bodySha256, outcome: 'superseded', deleted: true }]);
    expect(state.row).toBe('approved');
  });

  it('approved is processed first, pending fails after its 202 in the same ms: replay() dispatches pending, the newer of the two', async () => {
    const stores = createStores();
    const { receiver, state, pending, approved, deliver } = await earlyReceiver(stores, `replay-tie-newer-${process.pid}-${prefixes}`);
    vi.useFakeTimers({ toFake: ['Date'] });
    const tied = Date.now();
    vi.setSystemTime(tied);
    await deliver(approved);
    await deliver(pending);
    expect(state.row).toBe('approved');
    vi.setSystemTime(tied + 5_000);
    state.failPending = false;
    const [kept] = await stores.deadLetters.list(10);
    expect(kept?.reason).toBe('handler_failed');
    expect((await receiver.replay()).results).toEqual([{ bodySha256: kept!.bodySha256, outcome: 'processed', deleted: true }]);
    expect(state.row).toBe('pending');
  });
});
