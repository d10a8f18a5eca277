// Handlers that run longer than the 30 seconds the service waits for an answer: the service
// counts the attempt failed and retries it, and the retry is not dispatched again once the
// slow handler succeeded (200 duplicate, or superseded after a newer event), so without a report
// the partner never learns that its handlers are too slow. onError hears of it once per such delivery (handler_outlived_reply_window); not
// after an early 202, nor in a replay. Time is faked: nothing here waits 30 real seconds.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  WebhookReceiverError,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { signWebhook } from '@capi/webhook-signature';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';
import { listen } from './helpers/servers.js';
import { createFakeService, type FakeService } from './helpers/service.js';

let service: FakeService;
let redis: RedisWithClients;
beforeAll(async () => {
  service = await createFakeService();
  redis = await startRedisWithClients();
});
afterAll(async () => {
  await redis?.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A handler's work that takes `ms` of the (fake) clock. */
const takes = (ms: number): void => { vi.setSystemTime(Date.now() + ms); };

function receiverWith(options: Omit<WebhookReceiverOptions, 'publicKey' | 'onError'> = {}) {
  const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (error, context) => { reports.push({ error, context }); }, ...options });
  return { receiver, reports };
}

const deliver = (receiver: WebhookReceiver, body: string) => service.receive(receiver, body);

const windowReports = (reports: Array<{ error: unknown; context: WebhookErrorContext }>) =>
  reports.filter(({ error }) => (error as { code?: unknown } | undefined)?.code === 'handler_outlived_reply_window');

describe('a handler that outlives the service\'s 30-second reply window is reported to onError', () => {
  it('reports a handler that took 35 s (a timer on the fake clock), once; the retry of the body is then 200 duplicate', async () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { receiver, reports } = receiverWith();
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => { started = resolve; });
    receiver.on('kyc.status.changed', async () => {
      started();
      await new Promise((resolve) => setTimeout(resolve, 35_000));
    });
    const body = eventBody('kyc.status.changed', 'u1');
    const first = deliver(receiver, body);
    await handlerStarted;
    await vi.advanceTimersByTimeAsync(35_000);
    expect(await first).toEqual({ status: 200, code: 'processed' });

    expect(reports).toHaveLength(1);
    const [{ error, context }] = reports as [{ error: unknown; context: WebhookErrorContext }];
    expect(error).toBeInstanceOf(WebhookReceiverError);
    expect(context).toEqual({ outcome: 'processed', delivery: expect.objectContaining({ bodySha256: sha256(body) }), subject: 'kyc.status.changed:u1', afterReply: false });
    expect((error as WebhookReceiverError).code).toBe('handler_outlived_reply_window');
    expect((error as Error).message).toBe('A delivery of kyc.status.changed:u1 was answered 35000 ms after it reached the receiver (its wait for earlier events of its subject, then its handlers), longer than the 30000 ms the service waits for an answer: ' +
      'the service counted this attempt failed (timed out), whatever the receiver answered after, and sends the same body again 1, 5 or 15 minutes later (unless this was its 4th attempt). ' +
      'The handlers succeeded, so that retry is not dispatched again (the store keeps it due: 200 duplicate while this event is its subject\'s latest, superseded once a newer one was processed); but every such attempt counts as failed on the service\'s side, and while the handlers run, later events of the subject wait for them. ' +
      'Answer within the window: set acknowledgeEarly (the receiver answers 202 before the handlers run; a failure after it is only reported), or have the handler put the slow work on a queue of your own and return.');

    // The service's retry, as the message says: a duplicate, not dispatched, not reported again.
    expect(await deliver(receiver, body)).toEqual({ status: 200, code: 'duplicate' });
    expect(reports).toHaveLength(1);
  });

  it('keeps the retry of a delivery answered past the window due: once a newer event of the subject was processed, that retry is superseded, not dispatched over it', async () => {
    const superseded: string[] = [];
    const { receiver } = receiverWith({ onSuperseded: (event) => { superseded.push(`${event.eventType}:${'kycStatus' in event.data ? event.data.kycStatus : ''}`); } });
    const seen: string[] = [];
    receiver.on('kyc.status.changed', (event) => {
      if (seen.length === 0) takes(35_000); // the first one's database write is slow
      seen.push(event.data.kycStatus);
    });
    const pending = eventBody('kyc.status.changed', 'u8', { kycStatus: 'pending' });
    // Answered after 35 s: the service has counted it failed and retries it.
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'processed' });
    takes(5_000);
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'u8', { kycStatus: 'approved' }))).toEqual({ status: 200, code: 'processed' });
    takes(55_000); // the retry of pending, a minute after the service's window ended
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'superseded' });
    expect(seen).toEqual(['pending', 'approved']);
    expect(superseded).toEqual(['kyc.status.changed:pending']);
    // The user goes back to pending later: a newer event, dispatched.
    takes(60_000);
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'processed' });
    expect(seen).toEqual(['pending', 'approved', 'pending']);
  });

  it('counts from when the delivery reached the receiver, not from its handlers\' start: 25 s before them and 6 s in them is past the window', async () => {
    const { receiver, reports } = receiverWith();
    receiver.on('user.created', () => takes(6_000));
    const body = eventBody('user.created', 'u4');
    // A slow client (or a wait for the key, or for the subject's line): 25 s before the handlers.
    const source = await service.signedSource(body, async () => { takes(25_000); return new TextEncoder().encode(body); });
    expect((await receiver.receive(source)).reply.status).toBe(200);
    expect(windowReports(reports).map(({ error }) => (error as Error).message)).toEqual([expect.stringMatching(/^A delivery of user\.created:u4 was answered 31000 ms after it reached the receiver /)]);
  });

  it('reports a synchronous handler that blocks 31 s, and measures all the handlers of a delivery together, once', async () => {
    const { receiver, reports } = receiverWith();
    receiver.on('user.created', () => takes(31_000));
    expect(await deliver(receiver, eventBody('user.created', 'u2'))).toEqual({ status: 200, code: 'processed' });
    expect(windowReports(reports).map(({ error }) => (error as Error).message)).toEqual([expect.stringMatching(/^A delivery of user\.created:u2 was answered 31000 ms after it reached the receiver /)]);

    const twoHandlers = receiverWith();
    twoHandlers.receiver
      .on('user.created', async () => { await Promise.resolve(); takes(16_000); })
      .onAny(async () => { await Promise.resolve(); takes(16_000); });
    expect(await deliver(twoHandlers.receiver, eventBody('user.created', 'u3'))).toEqual({ status: 200, code: 'processed' });
    expect(windowReports(twoHandlers.reports).map(({ error }) => (error as Error).message)).toEqual([expect.stringMatching(/^A delivery of user\.created:u3 was answered 32000 ms after it reached the receiver /)]);
  });

  it.each([
    ['throws', () => { takes(40_000); throw new Error('database down'); }],
    ['rejects', async () => { await Promise.resolve(); takes(40_000); throw new Error('database down'); }],
  ] as const)('reports a handler that fails (%s) after 40 s besides its failure: the retry is dispatched again', async (_how, handler) => {
    const { receiver, reports } = receiverWith();
    receiver.on('kyc.phone-validation.changed', handler);
    expect(await deliver(receiver, eventBody('kyc.phone-validation.changed', 'u4'))).toEqual({ status: 500, code: 'handler_failed' });
    expect(reports.map(({ error, context }) => [(error as { code?: string }).code ?? (error as Error).message, context.outcome])).toEqual([
      ['handler_outlived_reply_window', 'handler_failed'],
      ['database down', 'handler_failed'],
    ]);
    expect((reports[0]!.error as Error).message).toContain('answered 40000 ms after it reached the receiver (its wait for earlier events of its subject, then its handlers), longer than the 30000 ms the service waits for an answer: the service counted this attempt failed (timed out), whatever the receiver answered after, and sends the same body again 1, 5 or 15 minutes later (unless this was its 4th attempt). ' +
      'The handlers failed too (reported with outcome handler_failed), so that retry is dispatched again, and times out again if the handlers are still this slow. Answer within the window: set acknowledgeEarly');
  });

  it('does not report handlers that answer within the window', async () => {
    const { receiver, reports } = receiverWith();
    receiver.on('user.created', async () => { await Promise.resolve(); takes(29_999); });
    expect(await deliver(receiver, eventBody('user.created', 'u5'))).toEqual({ status: 200, code: 'processed' });
    expect(reports).toEqual([]);
  });

  it('does not report a slow handler after an early 202 (acknowledgeEarly): the service had its answer', async () => {
    const { receiver, reports } = receiverWith({ acknowledgeEarly: true });
    let ran = false;
    receiver.on('user.created', async () => { await Promise.resolve(); takes(60_000); ran = true; });
    expect(await deliver(receiver, eventBody('user.created', 'u6'))).toEqual({ status: 202, code: 'acknowledged' });
    expect(ran).toBe(true);
    expect(reports).toEqual([]);
  });

  it('does not report a slow handler in a replay: no service waits for it', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const body = eventBody('user.created', 'u7');
    await deadLetters.put({ bodySha256: sha256(body), rawBody: new TextEncoder().encode(body), timestamp: Math.floor(Date.now() / 1000), signature: 'kept', receivedAt: Date.now(), errors: [] });
    const { receiver, reports } = receiverWith({ deadLetters });
    receiver.on('user.created', async () => { await Promise.resolve(); takes(60_000); });
    expect((await receiver.replay()).results).toEqual([{ bodySha256: sha256(body), outcome: 'processed', deleted: true }]);
    expect(reports).toEqual([]);
  });
});

// A sandbox started with --delivery-timeout 200 (deliveryTimeoutMs) and a fast retry schedule
// (minRetryDelayMs 1,000): the store is told the window (replyWindowMs), and the receiver reads
// it from the store. The clock is faked as above; the Redis store reads the same clock.
let prefixCounter = 0;
const windowStores: Array<[string, (options: { replyWindowMs?: number; minRetryDelayMs: number }) => DedupeStore]> = [
  ['memory store', (options) => createMemoryDedupeStore(options)],
  ['Redis store', (options) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: `reply-window:${process.pid}:${++prefixCounter}:`, ...options })],
];

describe.each(windowStores)('a store\'s replyWindowMs (%s): the window of a sandbox whose delivery timeout is shorter', (_name, createStore) => {
  it('reports a handler that outlives a 200 ms window (500 ms), and keeps its retry due: superseded once a newer event was processed, not dispatched over it', async () => {
    const dedupe = createStore({ replyWindowMs: 200, minRetryDelayMs: 1_000 });
    expect(dedupe.replyWindowMs).toBe(200);
    const superseded: string[] = [];
    const { receiver, reports } = receiverWith({ dedupe, onSuperseded: (event) => { superseded.push(`${'kycStatus' in event.data ? event.data.kycStatus : ''}`); } });
    const seen: string[] = [];
    receiver.on('kyc.status.changed', async (event) => {
      await Promise.resolve();
      if (seen.length === 0) takes(500); // longer than the sandbox waits
      seen.push(event.data.kycStatus);
    });
    const pending = eventBody('kyc.status.changed', 'w1', { kycStatus: 'pending' });
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'processed' });
    expect(windowReports(reports).map(({ error, context }) => [(error as Error).message, context.outcome])).toEqual([[
      expect.stringMatching(/^A delivery of kyc\.status\.changed:w1 was answered 500 ms after it reached the receiver \(its wait for earlier events of its subject, then its handlers\), longer than the 200 ms the service waits for an answer: /),
      'processed',
    ]]);
    takes(100);
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'w1', { kycStatus: 'approved' }))).toEqual({ status: 200, code: 'processed' });
    // The sandbox counted pending failed at the end of its 200 ms window, and retries it 1,000 ms
    // after that: 1,300 ms after pending arrived (800 ms after its answer, sooner than a retry
    // counted from the answer could come).
    takes(700);
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'superseded' });
    expect(seen).toEqual(['pending', 'approved']);
    expect(superseded).toEqual(['pending']);
    expect(windowReports(reports)).toHaveLength(1);
  });

  it('with the default window (30 s) the same timing reports nothing, and a later copy of the body is a newer event, dispatched', async () => {
    const dedupe = createStore({ minRetryDelayMs: 1_000 });
    expect(dedupe.replyWindowMs).toBe(30_000);
    const { receiver, reports } = receiverWith({ dedupe });
    const seen: string[] = [];
    receiver.on('kyc.status.changed', async (event) => {
      await Promise.resolve();
      if (seen.length === 0) takes(500);
      seen.push(event.data.kycStatus);
    });
    const pending = eventBody('kyc.status.changed', 'w2', { kycStatus: 'pending' });
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'processed' });
    takes(100);
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'w2', { kycStatus: 'approved' }))).toEqual({ status: 200, code: 'processed' });
    takes(700);
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'processed' });
    expect(seen).toEqual(['pending', 'approved', 'pending']);
    expect(reports).toEqual([]);
  });

  it('with a window longer than 30 s (3 minutes), the last retry of an event whose attempts all ran to the end of it is still its retry: superseded once a newer event was processed', async () => {
    // The service's minutes (minRetryDelayMs 60 s). Each attempt of pending fails after 181 s,
    // so each retry comes 1, 5 and 15 minutes after the end of a 3-minute window: the last one
    // 30 minutes after pending first arrived, past the 25 minutes a 30 s window allows.
    const { receiver } = receiverWith({ dedupe: createStore({ replyWindowMs: 180_000, minRetryDelayMs: 60_000 }) });
    const seen: string[] = [];
    receiver.on('kyc.status.changed', async (event) => {
      await Promise.resolve();
      seen.push(event.data.kycStatus);
      if (event.data.kycStatus === 'pending') {
        takes(181_000);
        throw new Error('the partner database is slow, then down');
      }
    });
    const pending = eventBody('kyc.status.changed', 'w4', { kycStatus: 'pending' });
    expect(await deliver(receiver, pending)).toEqual({ status: 500, code: 'handler_failed' }); // 0 s, fails at 181 s
    takes(59_000);
    expect(await deliver(receiver, pending)).toEqual({ status: 500, code: 'handler_failed' }); // 240 s
    takes(299_000);
    expect(await deliver(receiver, pending)).toEqual({ status: 500, code: 'handler_failed' }); // 720 s
    takes(99_000);
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'w4', { kycStatus: 'approved' }))).toEqual({ status: 200, code: 'processed' });
    takes(800_000);
    expect(await deliver(receiver, pending)).toEqual({ status: 200, code: 'superseded' }); // 1,800 s: the last retry
    expect(seen).toEqual(['pending', 'pending', 'pending', 'approved']);
  });

  it('reports a handler that fails after outliving a 200 ms window besides its failure', async () => {
    const { receiver, reports } = receiverWith({ dedupe: createStore({ replyWindowMs: 200, minRetryDelayMs: 1_000 }) });
    receiver.on('user.created', async () => { await Promise.resolve(); takes(250); throw new Error('database down'); });
    expect(await deliver(receiver, eventBody('user.created', 'w3'))).toEqual({ status: 500, code: 'handler_failed' });
    expect(reports.map(({ error, context }) => [(error as { code?: string }).code ?? (error as Error).message, context.outcome])).toEqual([
      ['handler_outlived_reply_window', 'handler_failed'],
      ['database down', 'handler_failed'],
    ]);
    expect((reports[0]!.error as Error).message).toContain('answered 250 ms after it reached the receiver (its wait for earlier events of its subject, then its handlers), longer than the 200 ms the service waits for an answer');
  });
});

// The service's reply window starts when it SENDS an attempt, not when the attempt reaches the
// receiver: an attempt 400 ms on the way that outlives the window failed 400 ms sooner than its
// arrival plus the window, and its retry, on schedule, comes 400 ms sooner too. Two receivers
// over real HTTP share one store (two store objects over one redis-server for Redis, as two
// processes would); the clock is faked (Date only), and the service signs with it.
describe.each(windowStores)('the reply window counts from the send (%s): an outlived attempt that took 400 ms to arrive', (name, createStore) => {
  it('recognises its retry on schedule: superseded by the newer event processed meanwhile, not dispatched over it', async () => {
    const options = { replyWindowMs: 3_000, minRetryDelayMs: 1_000 };
    const first = createStore(options);
    // The Redis store's prefix is the factory's last one: the second process's store shares it.
    const second = name === 'Redis store' ? createRedisDedupeStore({ client: redis.nodeRedis, keyPrefix: `reply-window:${process.pid}:${prefixCounter}:`, ...options }) : first;
    const seen: string[] = [];
    const superseded: string[] = [];
    const receivers = [first, second].map((dedupe, index) => {
      const { receiver } = receiverWith({ dedupe, onSuperseded: (event) => { superseded.push(`${'kycStatus' in event.data ? event.data.kycStatus : ''}`); } });
      receiver.on('kyc.status.changed', async (event) => {
        await Promise.resolve();
        seen.push(`R${index + 1} ${event.data.kycStatus}`);
        if (index === 0 && event.data.kycStatus === 'pending') {
          takes(3_500); // past the window: the partner database is slow, then down
          throw new Error('partner database down');
        }
      });
      return receiver;
    });
    const servers = await Promise.all(receivers.map((receiver) => listen(toNodeHandler(receiver))));
    try {
      const sentAt = 1_800_000_000_000; // a whole second: the signature's timestamp is exact
      vi.setSystemTime(sentAt);
      const pending = eventBody('kyc.status.changed', 'w5', { kycStatus: 'pending' });
      const signedPending = await signWebhook({ rawBody: pending, privateKey: service.privateKey });
      takes(400); // on the way
      const post = (url: string, body: string, headers: Record<string, string>) => fetch(`${url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
        .then(async (response) => ({ status: response.status, code: ((await response.json()) as { code: string }).code }));
      // Answered 3,900 ms after it was sent; the service gave up at 3,000 ms and retries 1,000 ms later.
      expect(await post(servers[0]!.url, pending, signedPending.headers)).toEqual({ status: 500, code: 'handler_failed' });
      vi.setSystemTime(sentAt + 3_950);
      expect(await service.deliver(`${servers[1]!.url}/webhooks`, eventBody('kyc.status.changed', 'w5', { kycStatus: 'approved' }))).toMatchObject({ status: 200, body: { code: 'processed' } });
      // The retry, on schedule (and at once: no latency this time), 4,000 ms after the first send.
      vi.setSystemTime(sentAt + 4_000);
      expect(await service.deliver(`${servers[1]!.url}/webhooks`, pending)).toMatchObject({ status: 200, body: { code: 'superseded' } });
      expect(seen).toEqual(['R1 pending', 'R2 approved']);
      expect(superseded).toEqual(['pending']);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
