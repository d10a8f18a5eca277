// The handlers succeeded, then the deduplication store failed to record the event as processed.
// The delivery's reply does not change (the work is done), and onError is told in words that
// say what the reply was, in each place this can happen: before the reply (200 processed, or
// 200 unknown_event_type), after an early 202 (acknowledgeEarly), in a replay. The store's own
// error, which says what a failed claim means ("answered 503 and will be retried"), is the cause.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  DedupeStoreError,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';
import { listen } from './helpers/servers.js';
import { createFakeService, type FakeService } from './helpers/service.js';

let service: FakeService;
beforeAll(async () => {
  service = await createFakeService();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the Redis store throws when Redis does not answer: written for a failed claim. */
const storeDown = () => new DedupeStoreError('dedupe_store_unavailable', 'Redis did not answer EVALSHA within 2000 ms; the delivery is answered 503 and will be retried. Check that Redis is reachable.');

/** A memory store whose markProcessed fails as Redis's does (at once, or with a rejection). */
function storeThatCannotMarkProcessed(failure: () => unknown = storeDown, how: 'throws' | 'rejects' = 'rejects'): DedupeStore {
  const inner = createMemoryDedupeStore();
  return {
    claim: (...args) => inner.claim(...args),
    release: (...args) => inner.release(...args),
    markProcessed: () => {
      if (how === 'throws') throw failure();
      return Promise.reject(failure());
    },
  };
}

function receiverWith(options: Omit<WebhookReceiverOptions, 'publicKey' | 'onError'>) {
  const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
  const dispatched: string[] = [];
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (error, context) => { reports.push({ error, context }); }, ...options })
    .onAny((event) => { dispatched.push(event.eventType); });
  return { receiver, reports, dispatched };
}

const deliver = (receiver: WebhookReceiver, body: string) => service.receive(receiver, body);

/** The one report, checked for what every branch shares; returns its message. */
function onlyReport(reports: Array<{ error: unknown; context: WebhookErrorContext }>): string {
  expect(reports).toHaveLength(1);
  const [{ error, context }] = reports as [{ error: unknown; context: WebhookErrorContext }];
  expect(error).toBeInstanceOf(DedupeStoreError);
  expect(error).toMatchObject({ code: 'dedupe_store_unavailable', cause: expect.objectContaining({ message: expect.stringContaining('answered 503') }) });
  expect(context).toMatchObject({ outcome: 'dedupe_store_unavailable', afterReply: true });
  const { message } = error as Error;
  expect(message).not.toMatch(/503/);
  expect(message).toContain('the deduplication store could not record it as processed (the store\'s error is the cause)');
  expect(message).toMatch(/claimTtlMs, 2 minutes by default/);
  return message;
}

describe('a store that fails to record a processed event: onError says what the reply was, and what follows', () => {
  it.each(['throws', 'rejects'] as const)('before the reply (the store %s): answered 200 processed, and a retry of the body would be dispatched again', async (how) => {
    const { receiver, reports, dispatched } = receiverWith({ dedupe: storeThatCannotMarkProcessed(storeDown, how) });
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'u1'))).toEqual({ status: 200, code: 'processed' });
    expect(dispatched).toEqual(['kyc.status.changed']);
    const message = onlyReport(reports);
    expect(message).toBe('The handlers of kyc.status.changed:u1 succeeded, but the deduplication store could not record it as processed (the store\'s error is the cause). ' +
      'The delivery is answered 200 processed all the same (the work is done), and the service does not send it again. ' +
      'The receiver tries again to record it in the background, until the store answers (for at most ten times claimTtlMs). The store may meanwhile still hold the subject\'s claim until it expires (claimTtlMs, 2 minutes by default): later deliveries of the subject wait, and may be answered 409 and retried later. ' +
      'Should the service send this body again anyway (the 200 was lost, or came after its reply window) before that try lands, that retry is dispatched again once the claim has expired, not answered duplicate.');
  });

  it('before the reply, for an event type this SDK does not know: answered 200 unknown_event_type (also with acknowledgeEarly)', async () => {
    for (const acknowledgeEarly of [false, true]) {
      const { receiver, reports } = receiverWith({ dedupe: storeThatCannotMarkProcessed(), acknowledgeEarly });
      const body = JSON.stringify({ eventType: 'card.statement.created', data: { id: 'st_1' } });
      expect(await deliver(receiver, body)).toEqual({ status: 200, code: 'unknown_event_type' });
      const message = onlyReport(reports);
      expect(message).toMatch(new RegExp(`^The event of a type this SDK does not know \\(body SHA-256 ${sha256(body)}\\) was handled, but `));
      expect(message).toContain('The delivery is answered 200 unknown_event_type all the same');
      expect(message).toContain('later deliveries of this body wait');
    }
  });

  it('after an early 202 (acknowledgeEarly): says the 202 went out, nothing is lost, and a copy would be dispatched again', async () => {
    const { receiver, reports, dispatched } = receiverWith({ dedupe: storeThatCannotMarkProcessed(), acknowledgeEarly: true });
    expect(await deliver(receiver, eventBody('user.created', 'u2'))).toEqual({ status: 202, code: 'acknowledged' });
    expect(dispatched).toEqual(['user.created']);
    const message = onlyReport(reports);
    expect(message).toBe('The handlers of user.created:u2 succeeded after the delivery was answered 202 acknowledged (acknowledgeEarly), but the deduplication store could not record it as processed (the store\'s error is the cause). ' +
      'The service has its 202 and does not send this body again; nothing is lost. ' +
      'The receiver tries again to record it in the background, until the store answers (for at most ten times claimTtlMs). The store may meanwhile still hold the subject\'s claim until it expires (claimTtlMs, 2 minutes by default): later deliveries of the subject wait, and may be answered 409 and retried later. ' +
      'Should a copy of this body come all the same before that try lands, it is dispatched again once the claim has expired, not answered duplicate.');
  });

  it('in a replay: says the replay counts it processed and deletes the dead letter, with no reply involved', async () => {
    for (const acknowledgeEarly of [false, true]) {
      const deadLetters = createMemoryDeadLetterStore();
      const body = eventBody('kyc.status.changed', 'u3', { kycStatus: 'rejected' });
      await deadLetters.put({ bodySha256: sha256(body), rawBody: new TextEncoder().encode(body), timestamp: 1_700_000_000, signature: 'kept', receivedAt: Date.now(), errors: [] });
      const { receiver, reports, dispatched } = receiverWith({ dedupe: storeThatCannotMarkProcessed(), deadLetters, acknowledgeEarly });
      expect((await receiver.replay()).results).toEqual([{ bodySha256: sha256(body), outcome: 'processed', deleted: true }]);
      expect(dispatched).toEqual(['kyc.status.changed']);
      const message = onlyReport(reports);
      expect(message).toBe('The handlers of kyc.status.changed:u3 succeeded in receiver.replay(), but the deduplication store could not record it as processed (the store\'s error is the cause). ' +
        'The replay reports it processed and deletes its dead-letter entry all the same (no service waits for a reply). ' +
        'The receiver tries again to record it in the background, until the store answers (for at most ten times claimTtlMs). The store may meanwhile still hold the subject\'s claim until it expires (claimTtlMs, 2 minutes by default): later deliveries of the subject wait, and may be answered 409 and retried later. ' +
        'Unless that try lands first, a copy of this body that comes later is dispatched again once the claim has expired, not answered duplicate.');
    }
  });

  it('keeps the code of the store\'s error, and wraps what a store of your own throws', async () => {
    const foreign = new DedupeStoreError('unexpected_store_reply', 'a foreign value');
    const first = receiverWith({ dedupe: storeThatCannotMarkProcessed(() => foreign) });
    await deliver(first.receiver, eventBody('user.created', 'u4'));
    expect(first.reports.map(({ error }) => error)).toEqual([expect.objectContaining({ name: 'DedupeStoreError', code: 'unexpected_store_reply', cause: foreign })]);

    const plain = new Error('connection reset');
    const second = receiverWith({ dedupe: storeThatCannotMarkProcessed(() => plain, 'throws') });
    await deliver(second.receiver, eventBody('user.created', 'u5'));
    expect(second.reports.map(({ error }) => error)).toEqual([expect.objectContaining({ name: 'DedupeStoreError', code: 'dedupe_store_unavailable', cause: plain })]);
  });
});

describe('a store that fails to release the claim of a failed handler: onError says what the reply was', () => {
  /** A memory store whose release rejects as Redis's does. */
  function storeThatCannotRelease(): DedupeStore {
    const inner = createMemoryDedupeStore();
    return {
      claim: (...args) => inner.claim(...args),
      markProcessed: (...args) => inner.markProcessed(...args),
      release: () => Promise.reject(storeDown()),
    };
  }
  const releaseReports = (reports: Array<{ error: unknown; context: WebhookErrorContext }>) =>
    reports.filter(({ context }) => context.outcome === 'dedupe_store_unavailable').map(({ error }) => {
      expect(error).toMatchObject({ name: 'DedupeStoreError', code: 'dedupe_store_unavailable', cause: expect.objectContaining({ message: expect.stringContaining('answered 503') }) });
      expect((error as Error).message).not.toMatch(/503/);
      return (error as Error).message;
    });
  const failing = (options: Omit<WebhookReceiverOptions, 'publicKey' | 'onError'>) => {
    const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (error, context) => { reports.push({ error, context }); }, ...options })
      .onAny(() => { throw new Error('the partner database is down'); });
    return { receiver, reports };
  };

  it('after an early 202: no retry comes', async () => {
    const { receiver, reports } = failing({ dedupe: storeThatCannotRelease(), acknowledgeEarly: true });
    expect(await deliver(receiver, eventBody('user.created', 'u6'))).toEqual({ status: 202, code: 'acknowledged' });
    expect(releaseReports(reports)).toEqual([expect.stringMatching(/^The handlers of user\.created:u6 failed after the delivery was answered 202 acknowledged \(acknowledgeEarly\): the service sends nothing again, so redo that work yourself; but the deduplication store could not release/)]);
  });

  it('in a replay: the dead letter stays', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const body = eventBody('user.created', 'u7');
    await deadLetters.put({ bodySha256: sha256(body), rawBody: new TextEncoder().encode(body), timestamp: 1_700_000_000, signature: 'kept', receivedAt: Date.now(), errors: [] });
    const { receiver, reports } = failing({ dedupe: storeThatCannotRelease(), deadLetters });
    expect((await receiver.replay()).results).toEqual([{ bodySha256: sha256(body), outcome: 'handler_failed', deleted: false }]);
    expect(releaseReports(reports)).toEqual([expect.stringMatching(/^The handlers of user\.created:u7 failed in receiver\.replay\(\): the dead letter stays for the next replay\(\); but the deduplication store could not release this delivery's claim .*The receiver tries again to release it in the background, until the store answers \(for at most ten times claimTtlMs\)\. .*retried later\.$/)]);
  });
});

// Redis (with AOF) stops while a handler runs and comes back holding the delivery's claim: the
// handler succeeded and the delivery was answered 200, but the claim, left in the store, would
// expire into a retry due of its body (the service sends nothing again). A genuine later event
// that repeats that body, after a newer one, would then be taken for that retry and answered
// superseded. The receiver tries the settlement again until Redis answers. Two receivers over
// real HTTP and a real redis-server; the outage is the first receiver's client failing every
// command (its Redis unreachable), Redis keeping its data as AOF would. Date is faked (the
// schedule of a sandbox at 60x: claims of 2 s, retries after 1 s); timers are real.
describe('a store that came back holding the claim of a delivery answered 200 (Redis with AOF stopped mid-handler)', () => {
  let redis: RedisWithClients;
  beforeAll(async () => { redis = await startRedisWithClients(); });
  afterAll(async () => { await redis?.close(); });
  afterEach(() => { vi.useRealTimers(); });

  it.each([
    ['records it processed once Redis answers again', false],
    ['after an early 202 whose handler failed, releases it once Redis answers again', true],
  ] as const)('%s: the user\'s later return to that state, after a newer one, is dispatched, not superseded', async (_title, acknowledgeEarly) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const keyPrefix = `settle-after-outage:${process.pid}:${acknowledgeEarly}:`;
    const options = { keyPrefix, claimTtlMs: 2_000, minRetryDelayMs: 1_000, replyWindowMs: 3_000, commandTimeoutMs: 500 };
    let down = false;
    const unreachable = createRedisDedupeStore({ ...options, client: (args) => (down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')) : redis.ioredis.call(args[0]!, ...args.slice(1))) });
    const other = createRedisDedupeStore({ ...options, client: redis.nodeRedis });
    const seen: string[] = [];
    const superseded: string[] = [];
    const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    const receivers = [unreachable, other].map((dedupe, index) => createWebhookReceiver({
      publicKey: service.publicKey,
      dedupe,
      acknowledgeEarly,
      onError: (error, context) => { reports.push({ error, context }); },
      onSuperseded: (event) => { superseded.push(`${'kycStatus' in event.data ? event.data.kycStatus : ''}`); },
    }).on('kyc.status.changed', async (event) => {
      await Promise.resolve();
      seen.push(`R${index + 1} ${event.data.kycStatus}`);
      if (index === 0 && seen.length === 1) {
        down = true; // Redis stops while the handler runs
        if (acknowledgeEarly) throw new Error('partner database down');
      }
    }));
    const servers = await Promise.all(receivers.map((receiver) => listen(toNodeHandler(receiver))));
    const answered = acknowledgeEarly ? { status: 202, body: { code: 'acknowledged' } } : { status: 200, body: { code: 'processed' } };
    try {
      const pending = eventBody('kyc.status.changed', 'o1', { kycStatus: 'pending' });
      expect(await service.deliver(`${servers[0]!.url}/webhooks`, pending)).toMatchObject(answered);
      await vi.waitFor(() => { expect(reports.map(({ context }) => context.outcome)).toContain('dedupe_store_unavailable'); });
      expect(await redis.ioredis.get(`${keyPrefix}kyc.status.changed:o1`)).toMatch(/^processing:/);
      down = false; // Redis is back, with the claim
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // (the receiver's next try is 100 ms after the failure)
      vi.setSystemTime(Date.now() + 3_000); // past the claim's expiry
      expect(await service.deliver(`${servers[1]!.url}/webhooks`, eventBody('kyc.status.changed', 'o1', { kycStatus: 'approved' }))).toMatchObject(answered);
      await vi.waitFor(() => { expect(seen).toHaveLength(2); });
      vi.setSystemTime(Date.now() + 2_000);
      // The user is back to pending: a new event (the service had its 2xx for the first).
      expect(await service.deliver(`${servers[1]!.url}/webhooks`, pending)).toMatchObject(answered);
      await vi.waitFor(() => { expect(seen).toEqual(['R1 pending', 'R2 approved', 'R2 pending']); });
      expect(superseded).toEqual([]);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
