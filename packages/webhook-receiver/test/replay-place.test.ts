// A dead letter is kept in its event's place, not where its latest attempt arrived. The retry of
// an event whose handler failed again is kept (replace) where that event's first attempt arrived,
// as the deduplication store's claim answers (`place`); kept where the retry arrived, a later
// replay() took it for newer than the events received between the two and brought an older state
// back (found by a partner trial: the source-of-funds answer went back to an earlier value). Over
// HTTP, with memory stores and with Redis stores on a real redis-server. The stores' first wait
// before a retry (minRetryDelayMs) is a few hundred ms here, a sandbox's schedule sped up.
import { describe, expect, it } from 'vitest';
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

const RETRY_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let prefixes = 0;
useServiceAndRedis();

const storeKinds: Array<[string, () => { dedupe: DedupeStore; deadLetters: DeadLetterStore }]> = [
  ['memory stores', () => ({ dedupe: createMemoryDedupeStore({ minRetryDelayMs: RETRY_MS }), deadLetters: createMemoryDeadLetterStore() })],
  ['Redis stores on a real redis-server', () => {
    const keyPrefix = `replay-place:${process.pid}:${++prefixes}:`;
    return { dedupe: createRedisDedupeStore({ client: redis, keyPrefix, minRetryDelayMs: RETRY_MS }), deadLetters: createRedisDeadLetterStore({ client: redis, keyPrefix }) };
  }],
];

describe.each(storeKinds)('a dead letter of an event that failed on its retry too is kept in its event\'s place, with %s', (_, createStores) => {
  it('pending fails twice, approved fails once; live, approved ends processed and pending superseded; replay() then supersedes pending too', async () => {
    const stores = createStores();
    // The partner's row: the user's latest KYC status, as the handlers wrote it.
    let row: string | undefined;
    const attempts = new Map<string, number>();
    const failFirst: Record<string, number> = { pending: 2, approved: 1 };
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, ...stores, onError: () => undefined })
      .on('kyc.status.changed', (event) => {
        const status = event.data.kycStatus;
        const attempt = (attempts.get(status) ?? 0) + 1;
        attempts.set(status, attempt);
        if (attempt <= (failFirst[status] ?? 0)) throw new Error(`the partner's database is down (${status}, attempt ${attempt})`);
        row = status;
      });
    const server = await listen(toNodeHandler(receiver));
    running.push(server);
    const url = `${server.url}/webhooks`;
    const userId = `replay-place-${process.pid}-${prefixes}`;
    const [pending, approved] = [eventBody('kyc.status.changed', userId, { kycStatus: 'pending' }), eventBody('kyc.status.changed', userId, { kycStatus: 'approved' })];
    const code = async (body: string) => (await service.deliver(url, body)).body.code;

    expect(await code(pending)).toBe('handler_failed');
    const pendingArrived = Date.now();
    await sleep(10);
    expect(await code(approved)).toBe('handler_failed');
    // The service's first retries, a minute later (here RETRY_MS): pending fails again, approved is processed.
    await sleep(RETRY_MS + 50);
    expect(await code(pending)).toBe('handler_failed');
    expect(await code(approved)).toBe('processed');
    const [kept] = await stores.deadLetters.list(10);
    expect(kept?.reason).toBe('handler_failed');
    // The second retry of pending, 5 minutes after (here 5 x RETRY_MS): older than approved.
    await sleep(5 * RETRY_MS + 50);
    expect(await code(pending)).toBe('superseded');
    expect(row).toBe('approved');
    // Later, the partner replays what is kept: pending stays superseded, and its entry goes.
    expect((await receiver.replay()).results).toEqual([{ bodySha256: kept!.bodySha256, outcome: 'superseded', deleted: true }]);
    expect(row).toBe('approved');
    expect(await stores.deadLetters.list(10)).toEqual([]);
    // Because it was kept in the place of pending's first attempt, before approved's: not where its retry arrived.
    expect(kept!.receivedAt).toBeLessThanOrEqual(pendingArrived);
  });
});
