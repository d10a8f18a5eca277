// A handler that runs longer than the store's claimTtlMs (an acknowledgeEarly handler calling a
// slow service): the receiver renews its claim while it runs, so that the subject's next event
// waits for it instead of running beside it (and possibly writing first). A process that dies
// renews nothing, so its claim still expires claimTtlMs after the last renewal.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMemoryDedupeStore, createRedisDedupeStore, createWebhookReceiver, type DedupeStore, type WebhookErrorContext } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { createClaimRenewal, MAX_RENEWED_CLAIM_TTLS } from '../src/pipeline/claim-renewal.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';
import { createFakeService, type FakeService } from './helpers/service.js';

let service: FakeService;
let redis: RedisWithClients;
beforeAll(async () => {
  [service, redis] = await Promise.all([createFakeService(), startRedisWithClients()]);
});
afterAll(async () => {
  await redis?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CLAIM_TTL_MS = 1_000;
let prefixCounter = 0;
const stores: Array<[string, (options: { claimTtlMs: number }) => DedupeStore]> = [
  ['memory store', (options) => createMemoryDedupeStore(options)],
  ['Redis store', (options) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: `claim-renewal:${process.pid}:${++prefixCounter}:`, ...options })],
];

describe.each(stores)('%s', (_name, createStore) => {
  it(`keeps the subject of an acknowledgeEarly handler that runs for ${CLAIM_TTL_MS * 3} ms (claimTtlMs ${CLAIM_TTL_MS}): the next event waits for it, nothing is reported lost`, async () => {
    const reports: Array<{ code: unknown; context: WebhookErrorContext }> = [];
    const steps: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const receiver = createWebhookReceiver({
      publicKey: service.publicKey,
      dedupe: createStore({ claimTtlMs: CLAIM_TTL_MS }),
      acknowledgeEarly: true,
      subjectWaitMs: 5_000,
      onError: (error, context) => void reports.push({ code: (error as { code?: unknown }).code ?? String(error), context }),
    }).on('kyc.status.changed', async (event) => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      steps.push(`${event.data.kycStatus} started`);
      await sleep(event.data.kycStatus === 'pending' ? CLAIM_TTL_MS * 3 : 10);
      steps.push(`${event.data.kycStatus} done`);
      running -= 1;
    });
    const first = service.receive(receiver, eventBody('kyc.status.changed', 'usr_slow', { kycStatus: 'pending' }));
    // Past the claim's first expiry: without a renewal, approved would take the subject now.
    await sleep(CLAIM_TTL_MS + 300);
    const second = service.receive(receiver, eventBody('kyc.status.changed', 'usr_slow', { kycStatus: 'approved' }));
    expect(await Promise.all([first, second])).toEqual([{ status: 202, code: 'acknowledged' }, { status: 202, code: 'acknowledged' }]);
    expect(steps).toEqual(['pending started', 'pending done', 'approved started', 'approved done']);
    expect(mostAtOnce).toBe(1);
    expect(reports).toEqual([]);
  });
});

describe('onUnknownEvent', () => {
  it(`keeps its claim while a slow hook runs (${CLAIM_TTL_MS * 3} ms): a copy of the body that comes meanwhile waits, and is a duplicate`, async () => {
    let running = 0;
    let mostAtOnce = 0;
    const receiver = createWebhookReceiver({
      publicKey: service.publicKey,
      dedupe: createMemoryDedupeStore({ claimTtlMs: CLAIM_TTL_MS }),
      subjectWaitMs: 5_000,
      onError: () => {},
      onUnknownEvent: async () => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        await sleep(CLAIM_TTL_MS * 3);
        running -= 1;
      },
    });
    const body = JSON.stringify({ eventType: 'card.statement.created', data: { id: 'st_1' } });
    const first = service.receive(receiver, body);
    await sleep(CLAIM_TTL_MS + 300);
    expect(await Promise.all([first, service.receive(receiver, body)])).toEqual([
      { status: 200, code: 'unknown_event_type' },
      { status: 200, code: 'duplicate' },
    ]);
    expect(mostAtOnce).toBe(1);
  });
});

describe('two receivers sharing one Redis (two processes)', () => {
  it('the slow handler\'s receiver renews its claim, and the other receiver\'s delivery of the subject waits for it', async () => {
    const keyPrefix = `claim-renewal-two:${process.pid}:`;
    const steps: string[] = [];
    const reports: unknown[] = [];
    const receiverOf = (name: string) =>
      createWebhookReceiver({
        publicKey: service.publicKey,
        dedupe: createRedisDedupeStore({ client: redis.ioredis, keyPrefix, claimTtlMs: CLAIM_TTL_MS }),
        acknowledgeEarly: true,
        subjectWaitMs: 5_000,
        onError: (error) => void reports.push((error as { code?: unknown }).code ?? String(error)),
      }).on('kyc.status.changed', async (event) => {
        steps.push(`${name}: ${event.data.kycStatus} started`);
        await sleep(event.data.kycStatus === 'pending' ? CLAIM_TTL_MS * 3 : 10);
        steps.push(`${name}: ${event.data.kycStatus} done`);
      });
    const [first, second] = [receiverOf('first'), receiverOf('second')];
    const slow = service.receive(first, eventBody('kyc.status.changed', 'usr_two', { kycStatus: 'pending' }));
    await sleep(CLAIM_TTL_MS + 300);
    await Promise.all([slow, service.receive(second, eventBody('kyc.status.changed', 'usr_two', { kycStatus: 'approved' }))]);
    expect(steps).toEqual(['first: pending started', 'first: pending done', 'second: approved started', 'second: approved done']);
    expect(reports).toEqual([]);
  });
});

describe('a store without renewClaim (one you wrote)', () => {
  it('keeps a claim for claimTtlMs only: the next event runs beside the slow handler, which is reported claim_lost', async () => {
    const inner = createMemoryDedupeStore({ claimTtlMs: CLAIM_TTL_MS });
    const { renewClaim: _renew, claimTtlMs: _ttl, ...rest } = inner;
    const store: DedupeStore = { ...rest, claim: inner.claim.bind(inner), markProcessed: inner.markProcessed.bind(inner), release: inner.release.bind(inner) };
    const reports: unknown[] = [];
    const steps: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, acknowledgeEarly: true, onError: (error) => void reports.push((error as { code?: unknown }).code) })
      .on('kyc.status.changed', async (event) => {
        steps.push(`${event.data.kycStatus} started`);
        await sleep(event.data.kycStatus === 'pending' ? CLAIM_TTL_MS * 3 : 10);
        steps.push(`${event.data.kycStatus} done`);
      });
    const first = service.receive(receiver, eventBody('kyc.status.changed', 'usr_slow2', { kycStatus: 'pending' }));
    await sleep(CLAIM_TTL_MS + 300);
    await Promise.all([first, service.receive(receiver, eventBody('kyc.status.changed', 'usr_slow2', { kycStatus: 'approved' }))]);
    expect(steps).toEqual(['pending started', 'approved started', 'approved done', 'pending done']);
    expect(reports).toContain('claim_lost');
  });
});

describe('the renewal timer', () => {
  /** A store that only counts renewals. */
  const countingStore = (claimTtlMs: unknown, renew: () => boolean = () => true) => {
    const calls: string[] = [];
    const store = { ...createMemoryDedupeStore(), claimTtlMs, renewClaim: (key: string) => { calls.push(key); return renew(); } } as unknown as DedupeStore & { renewClaim: () => boolean };
    return { store, calls };
  };

  it('renews a held claim once a quarter of claimTtlMs has passed, and stops once it is released', async () => {
    const { store, calls } = countingStore(600);
    const release = createClaimRenewal(store).hold({ subject: 's', token: 't' });
    await sleep(500);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    release();
    const after = calls.length;
    await sleep(400);
    expect(calls.length).toBe(after);
  });

  it(`stops renewing after ${MAX_RENEWED_CLAIM_TTLS} times claimTtlMs: a handler that never settles loses its subject as before`, async () => {
    const { store, calls } = countingStore(60);
    createClaimRenewal(store).hold({ subject: 's', token: 't' });
    await sleep(MAX_RENEWED_CLAIM_TTLS * 60 + 100);
    const atCap = calls.length;
    expect(atCap).toBeGreaterThanOrEqual(MAX_RENEWED_CLAIM_TTLS * 2);
    await sleep(300);
    expect(calls.length).toBe(atCap);
  });

  it('swallows a renewClaim that throws, and takes a claimTtlMs of Infinity, 0 or NaN for the 2-minute default (no timer spinning every ms)', async () => {
    const { store, calls } = countingStore(60, () => { throw new Error('store down'); });
    createClaimRenewal(store).hold({ subject: 's', token: 't' });
    await sleep(200);
    expect(calls.length).toBeGreaterThan(0);
    for (const odd of [Number.POSITIVE_INFINITY, 0, Number.NaN]) {
      const spinning = countingStore(odd);
      const release = createClaimRenewal(spinning.store).hold({ subject: 's', token: 't' });
      await sleep(50);
      expect(spinning.calls).toEqual([]);
      release();
    }
  });

  it('arms a new timer when the last one never fired (a Worker drops the timers of a request that ended)', async () => {
    const { store, calls } = countingStore(600);
    const realSetTimeout = globalThis.setTimeout;
    const dropped = vi.spyOn(globalThis, 'setTimeout').mockImplementationOnce((() => ({ unref() {} })) as never);
    const renewal = createClaimRenewal(store);
    renewal.hold({ subject: 'a', token: 't1' }); // its request ends: the timer is gone
    dropped.mockRestore();
    expect(globalThis.setTimeout).toBe(realSetTimeout);
    await sleep(300); // overdue
    renewal.hold({ subject: 'b', token: 't2' });
    await sleep(400);
    expect(calls).toContain('a');
    expect(calls).toContain('b');
  });
});
