// The service sends an event again while its first delivery is still being handled (a duplicate,
// reference 6, or a new event with the same state): the copy waits for its subject, is answered
// 409, and the service retries it later. Found by a partner trial (PostgreSQL, then Redis): once
// a newer event was processed before that retry, the retry was taken for a new event and
// dispatched over it, and the user was left on the older state. Real HTTP on loopback, both
// adapters, the memory store and a real redis-server; the service's schedule scaled down.
// And near copies: the service sends an event twice at once (reference 6.2) while an earlier
// event of its subject is handled; both copies wait and are answered 409. A later trial (the
// sandbox's duplicateRate) found them kept as one retry due: the second copy's retry, after a
// newer event, was dispatched as a new event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryDedupeStore, createRedisDedupeStore, createWebhookReceiver, toNodeHandler, WebhookReceiverError, type DedupeStore } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';
import { createFakeService, type Delivered, type FakeService } from './helpers/service.js';

// The service's first retry wait (1 minute), scaled down; the receiver waits well under it.
const MIN_RETRY_DELAY_MS = 400;
const SUBJECT_WAIT_MS = 100;

let service: FakeService;
let redis: RedisWithClients;
let prefixes = 0;
beforeAll(async () => {
  service = await createFakeService();
  redis = await startRedisWithClients();
});
afterAll(async () => {
  await redis?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const answered = (reply: Delivered) => `${reply.status} ${reply.body.code}`;
const kyc = (userId: string, kycStatus: 'pending' | 'approved' | 'resubmissionRequested') => eventBody('kyc.status.changed', userId, { kycStatus });

const stores: Array<[string, () => DedupeStore]> = [
  ['the memory store', () => createMemoryDedupeStore({ minRetryDelayMs: MIN_RETRY_DELAY_MS })],
  ['a real redis-server', () => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: `repeated:${process.pid}:${++prefixes}:`, minRetryDelayMs: MIN_RETRY_DELAY_MS })],
];
const adapters = ['toNodeHandler', 'handle(Request)'] as const;

/**
 * A receiver whose handler holds the first `pending` until the copy of it was answered 409;
 * `written` is the partner's database, each KYC status a handler wrote; `reported`, the codes
 * `onError` was given. `copyAnswered409(body)` plays the story's start and resolves once the
 * first delivery is processed, with the time the copy's retry comes.
 */
async function partner(store: DedupeStore, adapter: (typeof adapters)[number]) {
  const written: string[] = [];
  const reported: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding = true;
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, subjectWaitMs: SUBJECT_WAIT_MS, onError: (error) => { reported.push(error instanceof WebhookReceiverError ? error.code : String(error)); } })
    .on('kyc.status.changed', async (event) => {
      if (holding && event.data.kycStatus === 'pending') {
        holding = false;
        await held;
      }
      written.push(event.data.kycStatus);
    });
  const server: RunningServer = adapter === 'toNodeHandler' ? await listen(toNodeHandler(receiver)) : await listenFetch((request) => receiver.handle(request));
  const url = `${server.url}/webhooks`;
  const copyAnswered409 = async (body: string) => {
    const first = service.deliver(url, body);
    await sleep(20);
    expect(answered(await service.deliver(url, body)), 'the copy, while the first is handled').toBe('409 duplicate_in_progress');
    const retryAt = Date.now() + MIN_RETRY_DELAY_MS + 50;
    release();
    expect(answered(await first)).toBe('200 processed');
    return retryAt;
  };
  // The first `pending` held; two copies of `copy` sent `apartMs` apart, both answered 409.
  const twoCopiesAnswered409 = async (body: string, copy: string, apartMs: number) => {
    const first = service.deliver(url, body);
    await sleep(20);
    const copies = await Promise.all([service.deliver(url, copy), sleep(apartMs).then(() => service.deliver(url, copy))]);
    expect(copies.map(answered), 'the two copies, while the first is handled').toEqual(['409 duplicate_in_progress', '409 duplicate_in_progress']);
    const retryAt = Date.now() + MIN_RETRY_DELAY_MS + 50;
    release();
    expect(answered(await first)).toBe('200 processed');
    return retryAt;
  };
  return { url, written, reported, copyAnswered409, twoCopiesAnswered409, close: () => server.close() };
}

describe.each(stores)('a copy of the event in progress, answered 409, on %s', (_name, createStore) => {
  describe.each(adapters)('over %s', (adapter) => {
    it('is not dispatched on its retry once a newer event was processed: the user stays on the newer state', async () => {
      const { url, written, reported, copyAnswered409, close } = await partner(createStore(), adapter);
      try {
        const pending = kyc('repeated-newer', 'pending');
        const retryAt = await copyAnswered409(pending);
        expect(answered(await service.deliver(url, kyc('repeated-newer', 'approved')))).toBe('200 processed');
        await sleep(retryAt - Date.now());
        expect(answered(await service.deliver(url, pending)), 'the copy\'s retry').toBe('200 superseded');
        expect(written).toEqual(['pending', 'approved']);
        // The user going back to pending later is a new event.
        expect(answered(await service.deliver(url, pending))).toBe('200 processed');
        expect(written).toEqual(['pending', 'approved', 'pending']);
        expect(reported).toEqual(['subject_wait_exceeded']);
      } finally {
        await close();
      }
    });

    it('is answered duplicate on its retry while that state is the latest, and so is another copy sent sooner', async () => {
      const { url, written, reported, copyAnswered409, close } = await partner(createStore(), adapter);
      try {
        const pending = kyc('repeated-latest', 'pending');
        const retryAt = await copyAnswered409(pending);
        expect(answered(await service.deliver(url, pending)), 'a copy sooner than any retry').toBe('200 duplicate');
        await sleep(retryAt - Date.now());
        expect(answered(await service.deliver(url, pending)), 'the copy\'s retry').toBe('200 duplicate');
        expect(written).toEqual(['pending']);
        expect(reported).toEqual(['subject_wait_exceeded']);
      } finally {
        await close();
      }
    });
  });
});

// (Sent at once, the store took them for one delivery; 40 ms apart, for two events, the second
// dispatched again after the first when no newer event came between.)
describe.each(stores)('two copies of one event, both answered 409, on %s', (_name, createStore) => {
  describe.each(adapters)('over %s', (adapter) => {
    for (const [newer, apartMs] of [[true, 0], [false, 0], [false, 40]] as const) {
      it(`${apartMs === 0 ? 'sent at once' : `${apartMs} ms apart`}, ${newer ? 'are neither dispatched on their retries once a newer event was processed: the user stays on the newer state' : 'are dispatched once on their retries, the second retry answered duplicate'}`, async () => {
        const { url, written, reported, twoCopiesAnswered409, close } = await partner(createStore(), adapter);
        try {
          const user = `near-copies-${newer}-${apartMs}`;
          const approved = kyc(user, 'approved');
          const retryAt = await twoCopiesAnswered409(kyc(user, 'pending'), approved, apartMs);
          if (newer) expect(answered(await service.deliver(url, kyc(user, 'resubmissionRequested')))).toBe('200 processed');
          await sleep(retryAt - Date.now());
          const retries = await Promise.all([service.deliver(url, approved), service.deliver(url, approved)]);
          expect(retries.map(answered).sort(), 'the two retries').toEqual(newer ? ['200 superseded', '200 superseded'] : ['200 duplicate', '200 processed']);
          expect(written).toEqual(newer ? ['pending', 'resubmissionRequested'] : ['pending', 'approved']);
          expect(reported).toEqual(['subject_wait_exceeded', 'subject_wait_exceeded']);
        } finally {
          await close();
        }
      });
    }
  });
});
