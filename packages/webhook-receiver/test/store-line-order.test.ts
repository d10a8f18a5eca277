// The order of a subject's waiting deliveries when this process's line and the store's line
// could disagree: the store's answers come back late or out of order (a slow round trip to Redis,
// a Durable Object), or a call fails after the store applied it. The store is the memory store
// behind a wrapper that delays or drops its answers, as a network does; the receiver is real,
// over loopback HTTP.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '@capi/webhook-signature';
import { createMemoryDedupeStore, createWebhookReceiver, DedupeStoreError, toNodeHandler, type DedupeStore } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, type RunningServer } from './helpers/servers.js';

let service: FakeService;
const running: RunningServer[] = [];
beforeAll(async () => { service = await createFakeService(); });
afterAll(async () => { await Promise.all(running.splice(0).map((server) => server.close())); });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (body: string) => createHash('sha256').update(body).digest('hex');

/**
 * The memory store, applied at once, answering a body's first claim after `delays` ms (none:
 * at once), or failing it (`'lost'`: applied, but the answer never comes, as a timeout).
 */
function networkStore(delays: Map<string, number | 'lost'>): DedupeStore & { leftLine: string[] } {
  const inner = createMemoryDedupeStore({ minRetryDelayMs: 0 });
  const leftLine: string[] = [];
  return {
    leftLine,
    claim(key, digest, waitedMs, waiter) {
      const answer = inner.claim(key, digest, waitedMs, waiter);
      const delay = delays.get(digest!) ?? 0;
      delays.delete(digest!);
      if (delay === 'lost') return Promise.reject(new DedupeStoreError('dedupe_store_unavailable', 'the answer was lost'));
      return new Promise((resolve) => setTimeout(() => resolve(answer), delay));
    },
    markProcessed: (key, token) => inner.markProcessed(key, token),
    release: (key, token, options) => inner.release(key, token, options),
    expectRetry: (key, digest, waitedMs) => inner.expectRetry(key, digest, waitedMs),
    joinLine: (key, waiter) => new Promise((resolve) => setTimeout(() => resolve(inner.joinLine(key, waiter)), 1)),
    leaveLine: (key, waiter) => {
      leftLine.push(waiter.id);
      inner.leaveLine(key, waiter);
    },
  };
}

/** A receiver over `store` whose handler holds `pending` until `release()`. */
async function start(store: DedupeStore) {
  const seen: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, subjectWaitMs: 3_000, onError: () => undefined })
    .on('kyc.status.changed', async (event) => {
      seen.push(event.data.kycStatus);
      if (event.data.kycStatus === 'pending') await held;
    });
  const server = await listen(toNodeHandler(receiver));
  running.push(server);
  return { url: `${server.url}/webhooks`, seen, release };
}

const bodies = (subject: string) => Object.fromEntries((['pending', 'approved', 'rejected', 'processing'] as const)
  .map((kycStatus) => [kycStatus, eventBody('kyc.status.changed', subject, { kycStatus })])) as Record<'pending' | 'approved' | 'rejected' | 'processing', string>;

describe("the store's line decides when this process's order differs from it", () => {
  it('answers that come back out of order (a Durable Object): the delivery the store has first is handled first, without a 409', async () => {
    const body = bodies('line-1');
    const { url, seen, release } = await start(networkStore(new Map([[sha256(body.approved), 300]])));
    const first = service.deliver(url, body.pending);
    await sleep(50);
    const second = service.deliver(url, body.approved); // in the store's line now; its answer is slow
    await sleep(50);
    const third = service.deliver(url, body.rejected); // behind it in the store, ahead of it here
    await sleep(300);
    release();
    expect((await Promise.all([first, second, third])).map((reply) => reply.body.code)).toEqual(['processed', 'processed', 'processed']);
    expect(seen).toEqual(['pending', 'approved', 'rejected']);
  });

  it('a delivery that joins this process\'s line while an earlier claim\'s answer is on its way: each in the store\'s order, without a 409', async () => {
    const body = bodies('line-2');
    const { url, seen, release } = await start(networkStore(new Map([[sha256(body.approved), 20], [sha256(body.rejected), 90]])));
    const first = service.deliver(url, body.pending);
    await sleep(50);
    const approved = service.deliver(url, body.approved);
    await sleep(10);
    const rejected = service.deliver(url, body.rejected);
    await sleep(40); // approved waits in this process's line; rejected's answer is not back
    const processing = service.deliver(url, body.processing);
    await sleep(200);
    release();
    expect((await Promise.all([first, approved, rejected, processing])).map((reply) => reply.body.code)).toEqual(['processed', 'processed', 'processed', 'processed']);
    expect(seen).toEqual(['pending', 'approved', 'rejected', 'processing']);
  });

  it('gives back the place a failed claim took (answered 503), so that it does not hold the subject up', async () => {
    const body = bodies('line-3');
    const store = networkStore(new Map([[sha256(body.approved), 'lost']]));
    const { url, seen, release } = await start(store);
    const first = service.deliver(url, body.pending);
    await sleep(50);
    expect((await service.deliver(url, body.approved)).status).toBe(503);
    expect(store.leftLine).toHaveLength(1);
    // The store dropped that place (the contract tests show the next waiter then claims at once).
    const rejected = service.deliver(url, body.rejected);
    await sleep(50);
    release();
    expect((await Promise.all([first, rejected])).map((reply) => reply.body.code)).toEqual(['processed', 'processed']);
    expect(seen).toEqual(['pending', 'rejected']);
  });

  it('keeps the retry of a delivery answered 503 in its place (expectRetry), also when its claim ran late and recorded nothing: that retry does not supersede an event that arrived after it', async () => {
    const body = bodies('line-5');
    // approved's claim runs while pending holds the subject (it waits in the store's line), and
    // its answer is lost: 503, and the store holds nothing of approved but a place given back.
    const store = networkStore(new Map([[sha256(body.approved), 'lost']]));
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let rejectedFails = true;
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, subjectWaitMs: 3_000, onError: () => undefined })
      .on('kyc.status.changed', async (event) => {
        if (event.data.kycStatus === 'pending') await held;
        if (event.data.kycStatus === 'rejected' && rejectedFails) {
          rejectedFails = false;
          throw new Error('the partner database is down');
        }
        seen.push(event.data.kycStatus);
      });
    const server = await listen(toNodeHandler(receiver));
    running.push(server);
    const url = `${server.url}/webhooks`;
    const first = service.deliver(url, body.pending);
    await sleep(50);
    expect((await service.deliver(url, body.approved)).status).toBe(503);
    await sleep(10);
    const rejected = service.deliver(url, body.rejected); // arrives after approved, and fails
    await sleep(50);
    release();
    expect((await Promise.all([first, rejected])).map((reply) => `${reply.status} ${reply.body.code}`)).toEqual(['200 processed', '500 handler_failed']);
    // The service's retries, in the order of the first attempts: approved's is the retry of the
    // event it was (placed where it arrived), so it does not supersede rejected's.
    expect((await service.deliver(url, body.approved)).body.code).toBe('processed');
    expect((await service.deliver(url, body.rejected)).body.code).toBe('processed');
    expect(seen).toEqual(['pending', 'approved', 'rejected']);
  });

  it('hands the give-back to waitUntil on handle(request, { waitUntil }), so that a Worker runs it after the 503', async () => {
    const body = bodies('line-4');
    const store = networkStore(new Map([[sha256(body.approved), 'lost']]));
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, subjectWaitMs: 3_000, onError: () => undefined })
      .on('kyc.status.changed', () => undefined);
    const { headers } = await signWebhook({ rawBody: body.approved, privateKey: service.privateKey });
    const kept: Promise<unknown>[] = [];
    const response = await receiver.handle(new Request('http://127.0.0.1/webhooks', { method: 'POST', headers, body: body.approved }), { waitUntil: (work) => void kept.push(work) });
    expect(response.status).toBe(503);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(store.leftLine).toHaveLength(1);
  });
});

describe('what the store is told of a waiting delivery, should its process die', () => {
  it('tells joinLine the delivery\'s body and arrival, and on a 409 gives the place back before expectRetry records the retry', async () => {
    const body = bodies('line-5');
    const inner = createMemoryDedupeStore({ minRetryDelayMs: 0 });
    const calls: string[] = [];
    const store: DedupeStore = {
      claim: (key, digest, waitedMs, waiter) => inner.claim(key, digest, waitedMs, waiter),
      markProcessed: (key, token) => inner.markProcessed(key, token),
      release: (key, token, options) => inner.release(key, token, options),
      expectRetry: (key, digest, waitedMs, failedMsAgo, waiterId) => {
        calls.push(`expectRetry ${digest === sha256(body.approved) ? 'approved' : digest === sha256(body.rejected) ? 'rejected' : digest}${waiterId === undefined ? '' : ' naming its place'}`);
        return inner.expectRetry(key, digest, waitedMs, failedMsAgo, waiterId);
      },
      joinLine: (key, waiter) => {
        calls.push(`joinLine ${waiter.digest === sha256(body.rejected) ? 'rejected' : waiter.digest} ${typeof waiter.waitedMs} leftMs ${waiter.leftMs}`);
        return inner.joinLine(key, waiter);
      },
      leaveLine: (key, waiter) => {
        calls.push('leaveLine');
        return inner.leaveLine(key, waiter);
      },
    };
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, subjectWaitMs: 300, onError: () => undefined })
      .on('kyc.status.changed', async (event) => { if (event.data.kycStatus === 'pending') await held; });
    const server = await listen(toNodeHandler(receiver));
    running.push(server);
    const url = `${server.url}/webhooks`;
    const first = service.deliver(url, body.pending);
    await sleep(50);
    const approved = service.deliver(url, body.approved); // waits behind pending: 409
    await sleep(20);
    const rejected = service.deliver(url, body.rejected); // joins the line here: 409 too
    expect((await Promise.all([approved, rejected])).map((reply) => reply.status)).toEqual([409, 409]);
    release();
    await first;
    // The rejected delivery told its body and arrival when it joined the line (the approved one's
    // claim told them itself), its place to live a quarter of subjectWaitMs past its own wait (so
    // that it does not lapse just before its 409 gives it back); each 409 gave its place back
    // before its retry was recorded, naming the place. (The two 409s may interleave on a loaded
    // machine: the k-th expectRetry comes after k give-backs.)
    expect(calls).toContain('joinLine rejected number leftMs 375');
    const settlements = calls.filter((call) => call === 'leaveLine' || call.startsWith('expectRetry'));
    expect(settlements.filter((call) => call !== 'leaveLine').sort()).toEqual(['expectRetry approved naming its place', 'expectRetry rejected naming its place']);
    settlements.forEach((call, index) => {
      if (call === 'leaveLine') return;
      const retriesSoFar = settlements.slice(0, index + 1).filter((each) => each !== 'leaveLine').length;
      expect(settlements.slice(0, index).filter((each) => each === 'leaveLine').length, `give-backs before ${call}`).toBeGreaterThanOrEqual(retriesSoFar);
    });
  });
});
