import { expect, it } from 'vitest';
import type { DedupeStore } from '../../src/dedupe/dedupe-store.js';
import { WebhookReceiverError } from '../../src/errors.js';

/** Makes a fresh, empty store with these options. */
export type StoreFactory = (options: { ttlMs?: number; claimTtlMs?: number; minRetryDelayMs?: number; replyWindowMs?: number }) => DedupeStore;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The contract of {@link DedupeStore}, the same for every store; call it inside a describe.
 * `shortTtlMs` is the TTL of the expiry cases (waited out three times over): a store reached
 * through more hops needs a longer one, so that a loaded machine does not expire a claim the
 * case still expects to hold.
 */
export function describeDedupeStoreContract(createStore: StoreFactory, { shortTtlMs = 40 } = {}): void {
  it('gives the first claim of a body to one delivery and tells the next it is in progress', async () => {
    const store = createStore({});
    const first = await store.claim('a');
    expect(first.state).toBe('claimed');
    expect(await store.claim('a')).toEqual({ state: 'processing' });
    expect((await store.claim('b')).state).toBe('claimed');
  });

  it('remembers a processed body as processed', async () => {
    const store = createStore({});
    const claim = await store.claim('a');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await store.markProcessed('a', claim.token);
    expect(await store.claim('a')).toEqual({ state: 'processed' });
  });

  it('lets the next delivery claim a body whose claim was released (a handler failed)', async () => {
    const store = createStore({});
    const claim = await store.claim('a');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await store.release('a', claim.token);
    expect((await store.claim('a')).state).toBe('claimed');
  });

  it('lets an unfinished claim expire after claimTtlMs (a process died mid-handler)', async () => {
    const store = createStore({ claimTtlMs: shortTtlMs });
    expect((await store.claim('a')).state).toBe('claimed');
    await sleep(3 * shortTtlMs);
    expect((await store.claim('a')).state).toBe('claimed');
  });

  it('renews a live claim of its token for claimTtlMs from now (renewClaim), and answers false for one that expired, another token or none', async () => {
    const store = createStore({ claimTtlMs: 10 * shortTtlMs });
    expect(store.claimTtlMs).toBe(10 * shortTtlMs);
    const claim = await store.claim('a');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await sleep(6 * shortTtlMs);
    expect(await store.renewClaim!('a', claim.token)).toBe(true);
    await sleep(6 * shortTtlMs); // past the first expiry, well within the renewed one
    expect(await store.claim('a')).toEqual({ state: 'processing' });
    expect(await store.renewClaim!('a', `${claim.token}-other`)).toBe(false);
    expect(await store.renewClaim!('b', claim.token)).toBe(false);
    await sleep(8 * shortTtlMs); // past the renewed expiry
    expect(await store.renewClaim!('a', claim.token)).toBe(false);
    expect((await store.claim('a')).state).toBe('claimed');
  });

  it('forgets a processed body after ttlMs', async () => {
    const store = createStore({ ttlMs: shortTtlMs });
    const claim = await store.claim('a');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await store.markProcessed('a', claim.token);
    await sleep(3 * shortTtlMs);
    expect((await store.claim('a')).state).toBe('claimed');
  });

  it('answers markProcessed with whether the claim was still the subject\'s: false once it expired and another delivery took the subject', async () => {
    const store = createStore({ claimTtlMs: shortTtlMs });
    const own = await store.claim('a');
    if (own.state !== 'claimed') throw new Error('expected a claim');
    expect(await store.markProcessed('a', own.token)).toBe(true);
    const stale = await store.claim('b', 'B1');
    if (stale.state !== 'claimed') throw new Error('expected a claim');
    await sleep(3 * shortTtlMs);
    const taker = await store.claim('b', 'B2');
    if (taker.state !== 'claimed') throw new Error('expected the expired claim to be taken');
    expect(await store.markProcessed('b', stale.token)).toBe(false);
    expect(await store.markProcessed('b', taker.token)).toBe(true);
  });

  it('does not release a claim that expired and was taken over by another delivery', async () => {
    const store = createStore({ claimTtlMs: shortTtlMs });
    const stale = await store.claim('a');
    if (stale.state !== 'claimed') throw new Error('expected a claim');
    await sleep(3 * shortTtlMs);
    const taker = await store.claim('a');
    if (taker.state !== 'claimed') throw new Error('expected the expired claim to be taken');
    await store.release('a', stale.token);
    // The taker still owns the subject. (Asked through its settlement rather than by another
    // claim: the taker's claim has the same short TTL, and a loaded machine can outwait it.)
    expect(await store.markProcessed('a', taker.token)).toBe(true);
    expect(await store.claim('a')).toEqual({ state: 'processed' });
  });

  it('treats only the latest processed digest of a subject as a duplicate: A -> B -> A claims three times', async () => {
    const store = createStore({});
    for (const digest of ['A', 'B', 'A']) {
      const claim = await store.claim('user.updated:u1', digest);
      if (claim.state !== 'claimed') throw new Error(`expected a claim of ${digest}, got ${claim.state}`);
      await store.markProcessed('user.updated:u1', claim.token);
    }
    expect(await store.claim('user.updated:u1', 'A')).toEqual({ state: 'processed' });
    expect((await store.claim('user.updated:u2', 'A')).state).toBe('claimed');
  });

  it('answers processing to another body of a subject while its claim is held; a released claim leaves no processed record, so A, B (failed), A dispatches the second A', async () => {
    const store = createStore({});
    const first = await store.claim('s', 'A');
    if (first.state !== 'claimed') throw new Error('expected a claim');
    await store.markProcessed('s', first.token);
    const second = await store.claim('s', 'B');
    if (second.state !== 'claimed') throw new Error('expected a claim');
    expect(await store.claim('s', 'C')).toEqual({ state: 'processing' });
    await store.release('s', second.token);
    // A again after B failed is a newer event that repeats A, not a retry of A.
    const again = await store.claim('s', 'A');
    if (again.state !== 'claimed') throw new Error(`expected a claim of the second A, got ${again.state}`);
    await store.markProcessed('s', again.token);
    expect(await store.claim('s', 'A')).toEqual({ state: 'processed' });
    expect((await store.claim('s', 'B')).state).toBe('claimed');
  });

  it('does not record a claim that expired as processed over the newer event another delivery processed since', async () => {
    const store = createStore({ claimTtlMs: shortTtlMs });
    const stale = await store.claim('s', 'A');
    if (stale.state !== 'claimed') throw new Error('expected a claim');
    await sleep(3 * shortTtlMs);
    const newer = await store.claim('s', 'B');
    if (newer.state !== 'claimed') throw new Error('expected the expired claim to be taken over');
    await store.markProcessed('s', newer.token);
    await store.markProcessed('s', stale.token);
    expect(await store.claim('s', 'B')).toEqual({ state: 'processed' });
  });

  // Retries due: a claim released with retryExpected (its delivery was answered non-2xx). These
  // stores take every copy of a failed body for its retry (minRetryDelayMs 0): the copies here
  // come milliseconds apart, where the service waits a minute.
  const claimed = async (store: DedupeStore, key: string, digest: string): Promise<string> => {
    const claim = await store.claim(key, digest);
    if (claim.state !== 'claimed') throw new Error(`expected a claim of ${digest}, got ${claim.state}`);
    return claim.token;
  };
  const fails = async (store: DedupeStore, key: string, digest: string, retryExpected = true) =>
    store.release(key, await claimed(store, key, digest), { retryExpected });
  const processes = async (store: DedupeStore, key: string, digest: string, options?: { retryExpected: boolean }) =>
    store.markProcessed(key, await claimed(store, key, digest), ...(options === undefined ? [] : [options]));

  // Places: an event's place in its subject's order is when it arrived at a receiver
  // (waitedMs before the call), not when the store ran the call.
  it('places a claim that runs late by its arrival: the older of two events whose claims ran in the other order is superseded by the newer, not the reverse (a Redis outage)', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    // Y arrived now; X arrived 300 ms before it, but its claim (queued in another client) runs after Y's.
    const y = await store.claim('s', 'Y', 0);
    if (y.state !== 'claimed') throw new Error('expected a claim of Y');
    await store.release('s', y.token, { retryExpected: true });
    const x = await store.claim('s', 'X', 300);
    if (x.state !== 'claimed') throw new Error('expected a claim of X');
    await store.release('s', x.token, { retryExpected: true });
    // The service retries X first: processed, and Y's retry stays due (it arrived after X).
    await processes(store, 's', 'X');
    await processes(store, 's', 'Y');
    expect(await store.claim('s', 'Y')).toEqual({ state: 'processed' });
    // And the other way round: Y's retry first supersedes X's.
    const reversed = createStore({ minRetryDelayMs: 0 });
    await fails(reversed, 's', 'Y');
    const lateX = await reversed.claim('s', 'X', 300);
    if (lateX.state !== 'claimed') throw new Error('expected a claim of X');
    await reversed.release('s', lateX.token, { retryExpected: true });
    await processes(reversed, 's', 'Y');
    expect(await reversed.claim('s', 'X')).toEqual({ state: 'superseded' });
  });

  it('answers superseded to a new event received before the processed one (its claim came after a key fetch): an older state', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await processes(store, 's', 'newer');
    expect(await store.claim('s', 'older', 1_000)).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'newer')).toEqual({ state: 'processed' });
    // A 409 of such an event keeps its retry due as superseded already.
    await store.expectRetry!('s', 'older-409', 1_000);
    expect(await store.claim('s', 'older-409', 1_000)).toEqual({ state: 'superseded' });
    // An event received after it is dispatched.
    expect((await store.claim('s', 'later', 0)).state).toBe('claimed');
  });

  it('answers superseded to an event received before a copy of the processed body that came sooner than its retry could, once it claims after that copy (A -> B -> A across two processes)', async () => {
    // A arrived 30 s ago and was processed; B arrived 20 s ago in another process, which
    // still verifies it; A's body again arrived 10 s ago, too soon for A's retry: the newer
    // event, answered processed (the state is A already). B then claims: older than that A.
    // (Seconds apart, so that the calls' own round trips, each placing by its own clock, never
    // change the order: a Durable Object over HTTP on a loaded machine takes tens of ms.)
    const store = createStore({ minRetryDelayMs: 600_000 });
    const a = await store.claim('s', 'A', 30_000);
    if (a.state !== 'claimed') throw new Error('expected a claim of A');
    await store.markProcessed('s', a.token);
    expect(await store.claim('s', 'A', 10_000)).toEqual({ state: 'processed' });
    expect(await store.claim('s', 'B', 20_000)).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'A', 0)).toEqual({ state: 'processed' });
    // An event received after the copy is dispatched.
    expect((await store.claim('s', 'C', 0)).state).toBe('claimed');
    // Without the copy, B is the newer event and is dispatched.
    const alone = createStore({ minRetryDelayMs: 600_000 });
    const first = await alone.claim('s', 'A', 30_000);
    if (first.state !== 'claimed') throw new Error('expected a claim of A');
    await alone.markProcessed('s', first.token);
    expect((await alone.claim('s', 'B', 20_000)).state).toBe('claimed');
  });

  it('takes a copy of the processed body that comes once its retry could for that retry: an event received before it is still dispatched', async () => {
    const delay = 2 * shortTtlMs;
    const store = createStore({ minRetryDelayMs: delay });
    const a = await store.claim('s', 'A', 0);
    if (a.state !== 'claimed') throw new Error('expected a claim of A');
    await store.markProcessed('s', a.token);
    await sleep(2 * delay);
    // A's retry (its 2xx was lost), then B, which arrived before it, claims.
    expect(await store.claim('s', 'A', 0)).toEqual({ state: 'processed' });
    expect((await store.claim('s', 'B', delay)).state).toBe('claimed');
  });

  it('keeps the retry due of an event answered 409 after such a copy superseded, when it was received before the copy', async () => {
    // Arrivals 600 ms apart (A, B, then the copy of A), well within the retry wait.
    const delay = Math.max(4 * shortTtlMs, 2_000);
    const store = createStore({ minRetryDelayMs: delay });
    const a = await store.claim('s', 'A', 1_800);
    if (a.state !== 'claimed') throw new Error('expected a claim of A');
    await store.markProcessed('s', a.token);
    expect(await store.claim('s', 'A', 600)).toEqual({ state: 'processed' });
    await store.expectRetry!('s', 'B', 1_200);
    await sleep(delay + shortTtlMs);
    expect(await store.claim('s', 'B', 0)).toEqual({ state: 'superseded' });
  });

  it(`keeps an expired claim's event as a retry due in its place (its process died mid-handler): its retry does not supersede an event received after it`, async () => {
    const store = createStore({ claimTtlMs: shortTtlMs, minRetryDelayMs: 0 });
    expect((await store.claim('s', 'E1')).state).toBe('claimed');
    await sleep(5);
    await store.expectRetry!('s', 'E2'); // E2 waited behind E1 and was answered 409
    await sleep(3 * shortTtlMs); // E1's process died: its claim expires
    await processes(store, 's', 'E1'); // the service's retry of E1, in E1's place
    await processes(store, 's', 'E2'); // E2's retry: still due, not superseded
    expect(await store.claim('s', 'E2')).toEqual({ state: 'processed' });
    // An expired claim overtaken by a newer event: its retry is superseded.
    const overtaken = createStore({ claimTtlMs: shortTtlMs, minRetryDelayMs: 0 });
    expect((await overtaken.claim('s', 'E1')).state).toBe('claimed');
    await sleep(3 * shortTtlMs);
    await processes(overtaken, 's', 'E2');
    expect(await overtaken.claim('s', 'E1')).toEqual({ state: 'superseded' });
  });

  it('keeps no retry due for an expired claim acknowledged early (the service got its 2xx and sends nothing again): its body after a newer event is a new event, claimed', async () => {
    const store = createStore({ claimTtlMs: shortTtlMs, minRetryDelayMs: 0 });
    const early = await store.claim('s', 'A', 0, undefined, { acknowledgedEarly: true });
    if (early.state !== 'claimed') throw new Error('expected a claim');
    // A renewal keeps the mark (the Redis store rewrites the claim).
    expect(await store.renewClaim!('s', early.token)).toBe(true);
    await sleep(3 * shortTtlMs); // A's process died mid-handler, after its 202
    await processes(store, 's', 'B');
    // The user went back to A: a new event, dispatched (A -> B -> A), not a late retry of A.
    expect((await store.claim('s', 'A')).state).toBe('claimed');
  });

  it('keeps the retry due of a claim acknowledged early that is released with retryExpected (answered after its handlers after all)', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    const early = await store.claim('s', 'A', 0, undefined, { acknowledgedEarly: true });
    if (early.state !== 'claimed') throw new Error('expected a claim');
    await store.release('s', early.token, { retryExpected: true });
    await processes(store, 's', 'B');
    expect(await store.claim('s', 'A')).toEqual({ state: 'superseded' });
  });

  it('claims the retry of a failed body that nothing overtook, and processes it like any other', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await fails(store, 's', 'A');
    await processes(store, 's', 'A');
    expect(await store.claim('s', 'A')).toEqual({ state: 'processed' });
  });

  it('answers the claim of a retry with its event\'s place (where its first attempt arrived), and a new event\'s claim with none (its own arrival)', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    const first = await store.claim('s', 'A', 5_000);
    if (first.state !== 'claimed') throw new Error('expected a claim');
    expect(first).not.toHaveProperty('place');
    const firstArrived = Date.now() - 5_000;
    await store.release('s', first.token, { retryExpected: true });
    const retry = await store.claim('s', 'A');
    if (retry.state !== 'claimed') throw new Error('expected a claim');
    // Placed by the store's clock (a Durable Object's, here the same machine's): within a few ms.
    expect(Math.abs(retry.place! - firstArrived)).toBeLessThan(1_000);
  });

  it('answers superseded to the retry of a failed body once a newer body of the subject was processed, and only to the first', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await fails(store, 's', 'A');
    await processes(store, 's', 'B');
    expect(await store.claim('s', 'A')).toEqual({ state: 'superseded' });
    // The subject is still on B; a second A is a newer event that repeats A (or the retry, after
    // a newer event repeating A came first): dispatched, so the subject ends on A either way.
    expect(await store.claim('s', 'B')).toEqual({ state: 'processed' });
    expect((await store.claim('s', 'A')).state).toBe('claimed');
    expect((await store.claim('other', 'A')).state).toBe('claimed');
  });

  it('supersedes every failed body that a later processed one overtook, through more failures', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await fails(store, 's', 'A');
    await fails(store, 's', 'B');
    await fails(store, 's', 'A'); // A's retry fails again: still one retry due for A
    await processes(store, 's', 'C');
    expect(await store.claim('s', 'A')).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'B')).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'C')).toEqual({ state: 'processed' });
    await processes(store, 's', 'A');
    expect(await store.claim('s', 'A')).toEqual({ state: 'processed' });
  });

  it('supersedes only the retries of events received before the one processed: two events that fail in a row are both dispatched on their retries', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await fails(store, 's', 'pending');
    await fails(store, 's', 'approved');
    // The retry of the older one is processed first: the newer one's retry stays due, not superseded.
    await processes(store, 's', 'pending');
    await processes(store, 's', 'approved');
    expect(await store.claim('s', 'approved')).toEqual({ state: 'processed' });
    // And the other way round: the newer one's retry first supersedes the older one's.
    const reversed = createStore({ minRetryDelayMs: 0 });
    await fails(reversed, 's', 'pending');
    await fails(reversed, 's', 'approved');
    await processes(reversed, 's', 'approved');
    expect(await reversed.claim('s', 'pending')).toEqual({ state: 'superseded' });
    expect(await reversed.claim('s', 'approved')).toEqual({ state: 'processed' });
  });

  it('keeps the retry of an event processed after the service\'s window (markProcessed with retryExpected) due: processed while it is the latest, superseded once a newer event was processed', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await processes(store, 's', 'A', { retryExpected: true }); // the handlers took 35 s: the service retries A
    await processes(store, 's', 'B');
    expect(await store.claim('s', 'A')).toEqual({ state: 'superseded' });
    // Only that retry: a later A is a newer event that repeats A.
    expect((await store.claim('s', 'A')).state).toBe('claimed');
    const latest = createStore({ minRetryDelayMs: 0 });
    await processes(latest, 's', 'A', { retryExpected: true });
    expect(await latest.claim('s', 'A')).toEqual({ state: 'processed' });
    await processes(latest, 's', 'B');
    expect((await latest.claim('s', 'A')).state).toBe('claimed'); // its retry came already
    // Without retryExpected (the answer was in time), nothing is due: a copy after B is a new event.
    const inTime = createStore({ minRetryDelayMs: 0 });
    await processes(inTime, 's', 'A', { retryExpected: false });
    await processes(inTime, 's', 'B');
    expect((await inTime.claim('s', 'A')).state).toBe('claimed');
    // Nor after the service's last attempt: three failures, then the 4th attempt outlives the window.
    const last = createStore({ minRetryDelayMs: 0 });
    for (let attempt = 1; attempt <= 3; attempt++) await fails(last, 's', 'A');
    await processes(last, 's', 'A', { retryExpected: true });
    await processes(last, 's', 'B');
    expect((await last.claim('s', 'A')).state).toBe('claimed');
  });

  it('counts the wait before a retry from the end of the store\'s replyWindowMs after the attempt arrived, when it was answered later (markProcessed or release with retryExpected)', async () => {
    // A sandbox whose delivery timeout is 1 s and whose first retry comes 5 s after a failure.
    // Attempts that arrived 10 s ago are answered now: the sandbox counted them failed 9 s ago, so
    // a copy of their body that comes now is their retry, superseded by the newer event B.
    const lateAnswer = async (store: DedupeStore, settle: 'markProcessed' | 'release') => {
      const claim = await store.claim('s', 'A', 10_000);
      if (claim.state !== 'claimed') throw new Error(`expected a claim of A, got ${claim.state}`);
      await store[settle]('s', claim.token, { retryExpected: true });
      await processes(store, 's', 'B');
      return (await store.claim('s', 'A')).state;
    };
    for (const settle of ['markProcessed', 'release'] as const) {
      const store = createStore({ replyWindowMs: 1_000, minRetryDelayMs: 5_000 });
      expect(store.replyWindowMs).toBe(1_000);
      expect(await lateAnswer(store, settle)).toBe('superseded');
      // With the service's 30 s, the attempt was counted failed when it was answered, just now: a
      // copy now comes sooner than its retry can, and is a newer event.
      const defaultWindow = createStore({ minRetryDelayMs: 5_000 });
      expect(defaultWindow.replyWindowMs).toBe(30_000);
      expect(await lateAnswer(defaultWindow, settle)).toBe('claimed');
    }
  });

  it('counts the reply window from when the service sent the attempt (sentMsAgo), not from its arrival: a retry on schedule after an attempt that took 2 s to arrive is its retry', async () => {
    // Reply window 10 s, first retry 5 s after a failure. The attempt was sent 15 s ago and
    // arrived 13 s ago (2 s on the way); it is answered now. The service counted it failed at the
    // end of its window, 5 s ago, and its retry comes now: superseded by the newer event B.
    const lateAnswer = async (store: DedupeStore, settle: 'markProcessed' | 'release', sentMsAgo?: number) => {
      const claim = await store.claim('s', 'A', 13_000);
      if (claim.state !== 'claimed') throw new Error(`expected a claim of A, got ${claim.state}`);
      await store[settle]('s', claim.token, sentMsAgo === undefined ? { retryExpected: true } : { retryExpected: true, sentMsAgo });
      await processes(store, 's', 'B');
      return (await store.claim('s', 'A')).state;
    };
    for (const settle of ['markProcessed', 'release'] as const) {
      expect(await lateAnswer(createStore({ replyWindowMs: 10_000, minRetryDelayMs: 5_000 }), settle, 15_000)).toBe('superseded');
      // Counted from the arrival, the failure was 3 s ago: the retry seems 2 s early, and is taken for a newer event.
      expect(await lateAnswer(createStore({ replyWindowMs: 10_000, minRetryDelayMs: 5_000 }), settle)).toBe('claimed');
      // A send time earlier than a whole window before the arrival (a skewed clock) counts as that: failed at the arrival, 13 s ago.
      expect(await lateAnswer(createStore({ replyWindowMs: 10_000, minRetryDelayMs: 14_000 }), settle, 1_000_000)).toBe('claimed');
      expect(await lateAnswer(createStore({ replyWindowMs: 10_000, minRetryDelayMs: 13_000 }), settle, 1_000_000)).toBe('superseded');
    }
  });

  it('keeps no retry due for a release without retryExpected (acknowledged early), nor after the last of the 4 attempts', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    await fails(store, 's', 'A', false);
    await processes(store, 's', 'B');
    expect((await store.claim('t', 'A')).state).toBe('claimed');
    expect((await store.claim('s', 'A')).state).toBe('claimed');
    const last = createStore({ minRetryDelayMs: 0 });
    for (let attempt = 1; attempt <= 4; attempt++) await fails(last, 's', 'A');
    await processes(last, 's', 'B');
    expect((await last.claim('s', 'A')).state).toBe('claimed');
  });

  it('takes a copy of a failed body that comes sooner than minRetryDelayMs for a newer event, not the retry', async () => {
    const store = createStore({ minRetryDelayMs: 600_000 });
    await fails(store, 's', 'true');
    await processes(store, 's', 'false');
    // The user validated again seconds later: a new event (not superseded), placed after false.
    await processes(store, 's', 'true');
    await processes(store, 's', 'false');
    expect(await store.claim('s', 'false')).toEqual({ state: 'processed' });
    // Taking every copy for the retry, the second true is answered superseded instead.
    const immediate = createStore({ minRetryDelayMs: 0 });
    await fails(immediate, 's', 'true');
    await processes(immediate, 's', 'false');
    expect(await immediate.claim('s', 'true')).toEqual({ state: 'superseded' });
  });

  it('keeps the place of a delivery answered 409 (expectRetry): a newer event processed before its retry supersedes it, an older one does not', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    const holder = await store.claim('s', 'A');
    if (holder.state !== 'claimed') throw new Error('expected a claim of A');
    // B arrives while A is handled, waits too long and is answered 409: the service sends B again.
    await store.expectRetry!('s', 'B');
    await store.markProcessed('s', holder.token);
    // A came before B: B's retry is dispatched.
    expect((await store.claim('s', 'B')).state).toBe('claimed');

    const overtaken = createStore({ minRetryDelayMs: 0 });
    const first = await overtaken.claim('s', 'A');
    if (first.state !== 'claimed') throw new Error('expected a claim of A');
    await overtaken.expectRetry!('s', 'B');
    await overtaken.markProcessed('s', first.token);
    await processes(overtaken, 's', 'C'); // the user moved on before B's retry came
    expect(await overtaken.claim('s', 'B')).toEqual({ state: 'superseded' });
  });

  it('counts the wait before a retry kept by expectRetry from failedMsAgo (a 401 answered before the body could be verified): its retry supersedes nothing newer, and is not taken for a new event; a failure told too late is not kept', async () => {
    // A arrived and was answered (401: the receiver had not fetched the rotated key) 250 ms ago;
    // verified now, with the new key. B, newer, is processed; then A's retry comes, 300 ms after
    // the refusal.
    const store = createStore({ minRetryDelayMs: 300 });
    await store.expectRetry!('s', 'A', 250, 250);
    await processes(store, 's', 'B');
    await sleep(100);
    expect(await store.claim('s', 'A')).toEqual({ state: 'superseded' });
    // Counted from now instead, the copy of A that comes 100 ms later is too soon to be its
    // retry: a new event, dispatched.
    const fromNow = createStore({ minRetryDelayMs: 300 });
    await fromNow.expectRetry!('s', 'A', 250);
    await processes(fromNow, 's', 'B');
    await sleep(100);
    expect((await fromNow.claim('s', 'A')).state).toBe('claimed');
    // Told 1 s after the refusal, past the first wait (300 ms): its retry may have come and gone,
    // so nothing is kept, and a copy of A after B is a new event.
    const late = createStore({ minRetryDelayMs: 300 });
    await late.expectRetry!('s', 'A', 1_000, 1_000);
    await processes(late, 's', 'B');
    expect((await late.claim('s', 'A')).state).toBe('claimed');
    // A failure cannot come before the arrival: failedMsAgo counts at most waitedMs.
    const clamped = createStore({ minRetryDelayMs: 300 });
    await clamped.expectRetry!('s', 'A', 100, 5_000);
    await processes(clamped, 's', 'B');
    expect((await clamped.claim('s', 'A')).state).toBe('claimed');
  });

  it('answers the retry of a 409 copy of the body in progress processed once that body is (a duplicate), and counts a 409 retry as one more attempt of its event', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    const holder = await store.claim('s', 'A');
    if (holder.state !== 'claimed') throw new Error('expected a claim of A');
    await store.expectRetry!('s', 'A');
    await store.markProcessed('s', holder.token);
    expect(await store.claim('s', 'A')).toEqual({ state: 'processed' });
    // B fails 3 times, its last attempt is answered 409: no retry comes after the 4th attempt.
    const last = createStore({ minRetryDelayMs: 0 });
    for (let attempt = 1; attempt <= 3; attempt++) await fails(last, 's', 'B');
    await last.expectRetry!('s', 'B');
    await processes(last, 's', 'C');
    expect((await last.claim('s', 'B')).state).toBe('claimed');
  });

  it('keeps the 409 of a copy of the body in progress when another event of the subject came between them (the user went back to that state): a newer event processed before its retry supersedes it', async () => {
    // R is handled (slowly); A2, then R again (the user went back to R), then A3 arrive, wait
    // and are answered 409. The second R is not a duplicate of the first: A2 came between them.
    // A3's retry is processed first; R's retry is then older than A3, not a new event.
    // (A Workers trial: R's 409 was dropped, its retry dispatched after A3, the user left on R.)
    const store = createStore({ minRetryDelayMs: 50 });
    const holder = await store.claim('s', 'R');
    if (holder.state !== 'claimed') throw new Error('expected a claim of R');
    await sleep(5);
    await store.expectRetry!('s', 'A2');
    await sleep(5);
    await store.expectRetry!('s', 'R');
    await sleep(5);
    await store.expectRetry!('s', 'A3');
    await store.markProcessed('s', holder.token);
    await sleep(70);
    await processes(store, 's', 'A3');
    expect(await store.claim('s', 'R')).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'A2')).toEqual({ state: 'superseded' });
  });

  it('keeps the 409 of a copy of the body in progress as a retry due of that same state: answered processed while that state is the latest, superseded once a newer event was processed', async () => {
    // R is handled (slowly); the service sends R again (its duplicate, or a new event with the
    // same state), which waits and is answered 409. Once R is processed its retry changes
    // nothing; once S was processed after it, that retry is older than S, not a new event.
    // (A PostgreSQL partner trial, seen on Redis too: the copy kept no place, its retry was
    // dispatched after S, and the user was left on R.)
    for (const newer of [false, true]) {
      const store = createStore({ minRetryDelayMs: 200 });
      const holder = await store.claim('s', 'R');
      if (holder.state !== 'claimed') throw new Error('expected a claim of R');
      await sleep(5);
      await store.expectRetry!('s', 'R');
      await store.markProcessed('s', holder.token);
      // Another copy, sooner than R's retry could come: the same state again, not an event after
      // the copy answered 409.
      expect(await store.claim('s', 'R')).toEqual({ state: 'processed' });
      if (newer) await processes(store, 's', 'S');
      await sleep(260);
      expect(await store.claim('s', 'R')).toEqual({ state: newer ? 'superseded' : 'processed' });
      // That retry was the copy's: R once more is a new event (the user went back to R).
      if (newer) expect((await store.claim('s', 'R')).state).toBe('claimed');
    }
  });

  it('keeps retries due for 25 times minRetryDelayMs (the schedule of a sandbox with timeScale N shrinks it N times)', async () => {
    // (At least 25 ms: the retries due then last 625 ms, well over a pause of a loaded machine.)
    const delay = Math.max(shortTtlMs / 4, 25);
    const store = createStore({ minRetryDelayMs: delay });
    await fails(store, 's', 'X');
    await processes(store, 's', 'P');
    await sleep(2 * delay); // X's retry: due, and superseded
    expect(await store.claim('s', 'X')).toEqual({ state: 'superseded' });
    await fails(store, 's', 'Y');
    await processes(store, 's', 'P2');
    await sleep(30 * delay); // past 25 x minRetryDelayMs: no retry of Y can come any more
    expect((await store.claim('s', 'Y')).state).toBe('claimed');
  });

  it('gives a free subject to the deliveries waiting for it in the order they first asked (waiters of any process), and answers every other delivery processing until then', async () => {
    const store = createStore({});
    const held = await store.claim('s', 'A');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    const b = { id: 'proc1-b', leftMs: 60_000 };
    const c = { id: 'proc2-c', leftMs: 60_000 };
    const d = { id: 'proc1-d', leftMs: 60_000 };
    expect(await store.claim('s', 'B', 0, b)).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'C', 0, c)).toEqual({ state: 'processing' });
    await store.joinLine!('s', d);
    await store.joinLine!('s', b); // keeps its place
    await store.markProcessed('s', held.token);
    // (waitedMs 0: the waiters arrived after A, in this same ms; a delivery received before the
    // processed A would be older than it, and answered superseded.)
    // Free, but B asked first: C, D, a delivery without a waiter, and a copy of the processed A wait.
    expect(await store.claim('s', 'C', 0, c)).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'D', 0, d)).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'E')).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'A')).toEqual({ state: 'processing' });
    const second = await store.claim('s', 'B', 0, b);
    if (second.state !== 'claimed') throw new Error(`expected B's claim, got ${second.state}`);
    // The line outlives a release: C is next, then D.
    await store.release('s', second.token, { retryExpected: true });
    expect(await store.claim('s', 'D', 0, d)).toEqual({ state: 'processing' });
    const third = await store.claim('s', 'C', 0, c);
    if (third.state !== 'claimed') throw new Error(`expected C's claim, got ${third.state}`);
    await store.markProcessed('s', third.token);
    // D's body repeats nothing: its turn, and then the line is empty.
    const fourth = await store.claim('s', 'D', 0, d);
    if (fourth.state !== 'claimed') throw new Error(`expected D's claim, got ${fourth.state}`);
    await store.markProcessed('s', fourth.token);
    expect(await store.claim('s', 'D')).toEqual({ state: 'processed' });
  });

  it('drops a place in line once its waiter stops waiting (leftMs), and keeps the line through a 409 (expectRetry)', async () => {
    const store = createStore({});
    const held = await store.claim('s', 'A');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    // B's place lasts a few short TTLs: long enough to still hold C back at the check below on a
    // loaded machine, short enough to lapse within the test.
    const b = { id: 'b', leftMs: 5 * shortTtlMs };
    const c = { id: 'c', leftMs: 60_000 };
    expect(await store.claim('s', 'B', 0, b)).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'C', 0, c)).toEqual({ state: 'processing' });
    await store.expectRetry!('s', 'X');
    await store.markProcessed('s', held.token);
    expect(await store.claim('s', 'C', 1, c)).toEqual({ state: 'processing' });
    await sleep(7 * shortTtlMs); // B's process gave up (or died): its place lapses
    expect((await store.claim('s', 'C', shortTtlMs, c)).state).toBe('claimed');
  });

  it('drops a waiter\'s place on leaveLine (its claim failed), so that the next waiter gets the subject at once', async () => {
    const store = createStore({});
    const held = await store.claim('s', 'A');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    expect(await store.claim('s', 'B', 0, { id: 'lost', leftMs: 60_000 })).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'C', 0, { id: 'next', leftMs: 60_000 })).toEqual({ state: 'processing' });
    await store.leaveLine!('s', { id: 'lost', leftMs: 60_000 });
    await store.leaveLine!('s', { id: 'never-waited', leftMs: 60_000 });
    await store.markProcessed('s', held.token);
    expect((await store.claim('s', 'C', 0, { id: 'next', leftMs: 60_000 })).state).toBe('claimed');
  });

  it('lets a late call of a delivery that gave its place back take no place and claim nothing (a client that reordered them)', async () => {
    const store = createStore({});
    const held = await store.claim('s', 'A');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    // The give-back runs first; the call sent before it runs after.
    await store.leaveLine!('s', { id: 'late', leftMs: 60_000 });
    expect(await store.claim('s', 'B', 0, { id: 'late', leftMs: 60_000 })).toEqual({ state: 'processing' });
    await store.joinLine!('s', { id: 'late', leftMs: 60_000 });
    await store.markProcessed('s', held.token);
    expect(await store.claim('s', 'B', 5, { id: 'late', leftMs: 59_995 })).toEqual({ state: 'processing' });
    // Nobody waits behind it: the next delivery gets the subject at once.
    expect((await store.claim('s', 'C', 0, { id: 'next', leftMs: 60_000 })).state).toBe('claimed');
  });

  // A place that lapses unanswered: its delivery's process died while it waited in line (a
  // crash, kill -9), so it never claimed and was never answered 409. The service sends it again.
  it('keeps the delivery of a place that lapses unanswered (its process died while it waited) as a retry due in its place: a newer event processed before its retry supersedes it', async () => {
    const lapse = { leftMs: 2 * shortTtlMs };
    const store = createStore({ minRetryDelayMs: 0 });
    const e0 = await claimed(store, 's', 'E0');
    // E1 waited behind E0 in the process that died (a claim answered processing); F1 joined
    // deliveries waiting in that process (joinLine, telling its body and arrival).
    expect(await store.claim('s', 'E1', 0, { id: 'dead-e1', ...lapse })).toEqual({ state: 'processing' });
    await store.joinLine!('s', { id: 'dead-f1', ...lapse, digest: 'F1', waitedMs: 0 });
    await sleep(3 * shortTtlMs); // their places lapse
    await store.markProcessed('s', e0); // (E0's process lived long enough: it arrived first)
    await processes(store, 's', 'E2'); // a newer event, processed before their retries came
    expect(await store.claim('s', 'E1')).toEqual({ state: 'superseded' });
    expect(await store.claim('s', 'F1')).toEqual({ state: 'superseded' });
    // A place that told no body (a receiver of the previous version's joinLine) lapses as before:
    // its retry is a new event.
    const untold = createStore({ minRetryDelayMs: 0 });
    const held = await claimed(untold, 's', 'E0');
    await untold.joinLine!('s', { id: 'dead-g1', ...lapse });
    await sleep(3 * shortTtlMs);
    await untold.markProcessed('s', held);
    await processes(untold, 's', 'E2');
    expect((await untold.claim('s', 'G1')).state).toBe('claimed');
  });

  it('keeps such a retry due in the place of its event, not superseded by an older processed event: an event received after it and before its retry is not superseded by it', async () => {
    const store = createStore({ minRetryDelayMs: 0 });
    const e0 = await claimed(store, 's', 'E0');
    expect(await store.claim('s', 'E1', 0, { id: 'dead-e1', leftMs: 2 * shortTtlMs })).toEqual({ state: 'processing' });
    await sleep(3 * shortTtlMs); // E1's place lapses
    await store.markProcessed('s', e0);
    await fails(store, 's', 'E3'); // E3, received after E1, fails: its retry is due
    // E1's retry: dispatched in E1's place, before E3's, so E3's retry is still handled.
    expect(await processes(store, 's', 'E1')).not.toBe(false);
    expect((await store.claim('s', 'E3')).state).toBe('claimed');
  });

  it('records one retry due for a delivery whose place lapsed unanswered, or was given back (leaveLine) or answered 409 (expectRetry) before or after it lapsed, and one more failure for such a retry of a retry due', async () => {
    // How many retries of E1 are due: after a newer event is processed, each copy of E1 takes
    // one (answered superseded), and a copy once none is left is a new event (claimed).
    const copiesOfE1 = async (answer: (store: DedupeStore, waiter: { id: string; leftMs: number }, arrived: number) => unknown, lapseFirst: boolean) => {
      const store = createStore({ minRetryDelayMs: 0 });
      const e0 = await claimed(store, 's', 'E0');
      const waiter = { id: 'e1', leftMs: 2 * shortTtlMs };
      const arrived = Date.now();
      expect(await store.claim('s', 'E1', 0, waiter)).toEqual({ state: 'processing' });
      if (lapseFirst) await sleep(3 * shortTtlMs);
      await answer(store, waiter, arrived);
      if (!lapseFirst) await sleep(3 * shortTtlMs);
      await store.markProcessed('s', e0);
      await processes(store, 's', 'E2');
      return [(await store.claim('s', 'E1')).state, (await store.claim('s', 'E1')).state];
    };
    const giveBack = (store: DedupeStore, waiter: { id: string }) => store.leaveLine!('s', { id: waiter.id, leftMs: 1 });
    const answer409 = (store: DedupeStore, arrived: number) => store.expectRetry!('s', 'E1', Date.now() - arrived);
    const one = ['superseded', 'claimed'];
    // No answer at all (its process died).
    expect(await copiesOfE1(async () => undefined, true)).toEqual(one);
    // The receiver's 409: its place given back, then its retry recorded, naming the place (this
    // version) or not (the previous one); before or after the lapse.
    for (const lapseFirst of [false, true]) {
      expect(await copiesOfE1(async (store, waiter, arrived) => { await giveBack(store, waiter); await store.expectRetry!('s', 'E1', Date.now() - arrived, 0, waiter.id); }, lapseFirst)).toEqual(one);
      // Its place named without being given back (the give-back failed).
      expect(await copiesOfE1((store, waiter, arrived) => store.expectRetry!('s', 'E1', Date.now() - arrived, 0, waiter.id), lapseFirst)).toEqual(one);
      expect(await copiesOfE1(async (store, waiter, arrived) => { await giveBack(store, waiter); await answer409(store, arrived); }, lapseFirst)).toEqual(one);
      // A receiver that records the 409 without giving the place back (the previous version).
      expect(await copiesOfE1((store, _waiter, arrived) => answer409(store, arrived), lapseFirst)).toEqual(one);
    }
    // A retry that waited in line and was answered 409 (by a receiver that does not give its place
    // back) counts one failed attempt, not two: after 3 failed attempts and a 4th answered 409, no
    // retry is due; after 2 and a 3rd answered 409, one is.
    const afterAnswer = async (failedBefore: number, lapseFirst: boolean) => {
      const store = createStore({ minRetryDelayMs: 0 });
      for (let attempt = 1; attempt <= failedBefore; attempt++) await fails(store, 's', 'E1');
      // (The retry arrives later than its event: a retry due whose event arrived within 2 ms of
      // a place's delivery is taken for that delivery's 409, recorded already.)
      await sleep(10);
      const e0 = await claimed(store, 's', 'E0');
      const arrived = Date.now();
      expect(await store.claim('s', 'E1', 0, { id: 'e1-retry', leftMs: 2 * shortTtlMs })).toEqual({ state: 'processing' });
      if (lapseFirst) await sleep(3 * shortTtlMs);
      await store.expectRetry!('s', 'E1', Date.now() - arrived);
      if (!lapseFirst) await sleep(3 * shortTtlMs);
      await store.markProcessed('s', e0);
      await processes(store, 's', 'E2');
      return (await store.claim('s', 'E1')).state;
    };
    for (const lapseFirst of [false, true]) {
      expect(await afterAnswer(2, lapseFirst)).toBe('superseded');
      expect(await afterAnswer(3, lapseFirst)).toBe('claimed');
    }
  });

  it('keeps two copies of one body that arrived together (or 40 ms apart) and waited, each answered 409 by its place (expectRetry with waiterId) or lapsed, as two retries due: both superseded by a newer event processed before them, the second answered processed after the first without one', async () => {
    // E0 is handled; the service sends X twice at once (a duplicate, reference 6.2); both copies
    // wait behind E0 and get no claim. (Partner trials: the first 409 marked the other copy's
    // place answered, so only one retry was due; the other copy's retry, after a newer event,
    // was dispatched as a new event and brought X back.)
    type Ending = 'answered' | 'lapsed';
    const twoCopies = async (apart: number, endings: [Ending, Ending], newer: boolean) => {
      // (A retry comes minRetryDelayMs after its failure at the earliest: with 0, the second copy
      // would be taken for the first one's retry.)
      const store = createStore({ minRetryDelayMs: 200 });
      const e0 = await claimed(store, 's', 'E0');
      const base = Date.now();
      const copies = [{ id: 'copy-1', arrived: base }, { id: 'copy-2', arrived: base + apart }].map((copy, index) => ({ ...copy, leftMs: endings[index] === 'lapsed' ? 2 * shortTtlMs : 60_000 }));
      for (const copy of copies) {
        await sleep(copy.arrived - Date.now()); // (a copy sent later arrives later)
        expect(await store.claim('s', 'X', Math.max(0, Date.now() - copy.arrived), { id: copy.id, leftMs: copy.leftMs })).toEqual({ state: 'processing' });
      }
      // The receiver's 409: its place given back, then its retry recorded, naming its place.
      for (const [index, copy] of copies.entries()) {
        if (endings[index] !== 'answered') continue;
        await store.leaveLine!('s', { id: copy.id, leftMs: 1 });
        await store.expectRetry!('s', 'X', Math.max(0, Date.now() - copy.arrived), 0, copy.id);
      }
      const failedBy = Date.now();
      await sleep(3 * shortTtlMs); // lapsed places lapse
      await store.markProcessed('s', e0);
      if (newer) await processes(store, 's', 'Y');
      await sleep(failedBy + 260 - Date.now()); // the retries come, a retry wait after the last 409
      const first = await store.claim('s', 'X');
      if (first.state === 'claimed') await store.markProcessed('s', first.token);
      return [first.state, (await store.claim('s', 'X')).state];
    };
    // (40 ms apart: never taken for one delivery, but the second copy was kept as a newer event,
    // so both retries were dispatched when no newer event came between.) Each case on a store of
    // its own, all at once: one after the other, they take too long through a Durable Object.
    const cases = [0, 1, 40].flatMap((apart) => (
      [['answered', 'answered'], ['answered', 'lapsed'], ['lapsed', 'answered'], ['lapsed', 'lapsed']] as Array<[Ending, Ending]>
    ).flatMap((endings) => [true, false].map((newer) => ({ label: `${apart} ms apart, ${endings.join(' and ')}, ${newer ? 'a newer event' : 'no newer event'}`, apart, endings, newer }))));
    const answers = await Promise.all(cases.map(({ apart, endings, newer }) => twoCopies(apart, endings, newer)));
    for (const [index, { label, newer }] of cases.entries()) {
      expect(answers[index], label).toEqual(newer ? ['superseded', 'superseded'] : ['claimed', 'processed']);
    }
  }, 60_000);

  it('takes a copy of the body in progress answered 409 for the user going back to that state once another event received before it is recorded (its place lapsed after the 409): dispatched on its retry, and that event superseded', async () => {
    // X is handled; Y waits behind it (its process dies); a copy of X arrives after Y, waits and
    // is answered 409: at that time nothing stood between it and X, so it repeated X. Then Y's
    // place lapses: X, Y, X is the user going back to X, and its retry is the latest state.
    const store = createStore({ minRetryDelayMs: 200 });
    const holder = await claimed(store, 's', 'X');
    await sleep(5);
    expect(await store.claim('s', 'Y', 0, { id: 'y', leftMs: 2 * shortTtlMs })).toEqual({ state: 'processing' });
    await sleep(40);
    const arrived = Date.now();
    expect(await store.claim('s', 'X', 0, { id: 'x-copy', leftMs: 60_000 })).toEqual({ state: 'processing' });
    await store.leaveLine!('s', { id: 'x-copy', leftMs: 1 });
    await store.expectRetry!('s', 'X', Date.now() - arrived, 0, 'x-copy');
    const failedAt = Date.now();
    await sleep(3 * shortTtlMs); // Y's place lapses
    await store.markProcessed('s', holder);
    await sleep(failedAt + 260 - Date.now()); // the retries come, X's copy's first
    const retry = await store.claim('s', 'X');
    expect(retry.state).toBe('claimed');
    if (retry.state === 'claimed') await store.markProcessed('s', retry.token);
    expect(await store.claim('s', 'Y')).toEqual({ state: 'superseded' });
  });

  it('keeps a copy of the claim\'s body whose place lapsed while the claim held as repeating it, though the claim has expired too by the next call (the process that held both died): its retry is answered processed after the claim\'s', async () => {
    // A partner's trial (Redis, the sandbox sending every event twice, kill -9 mid-handler): the
    // copy's lapsed place, converted after the claim had expired too, was taken for a newer event
    // with the same body, and both retries were dispatched.
    for (const newer of [false, true]) {
      const store = createStore({ claimTtlMs: 3 * shortTtlMs, minRetryDelayMs: 200 });
      const base = Date.now();
      await claimed(store, 's', 'X'); // never settled: its process dies
      expect(await store.claim('s', 'X', 0, { id: 'copy', leftMs: shortTtlMs })).toEqual({ state: 'processing' });
      await sleep(5 * shortTtlMs); // the copy's place lapses, then the claim expires
      if (newer) await processes(store, 's', 'Y');
      await sleep(Math.max(0, base + 5 * shortTtlMs + 260 - Date.now())); // the retries come
      const first = await store.claim('s', 'X');
      if (first.state === 'claimed') await store.markProcessed('s', first.token);
      expect([first.state, (await store.claim('s', 'X')).state]).toEqual(newer ? ['superseded', 'superseded'] : ['claimed', 'processed']);
    }
  });

  it('refuses an expectRetry waiterId that is not a non-empty string with invalid_waiter', async () => {
    const store = createStore({});
    for (const waiterId of ['', 42 as unknown as string]) {
      await expect(Promise.resolve().then(() => store.expectRetry!('s', 'X', 0, 0, waiterId))).rejects.toMatchObject({ code: 'invalid_waiter' });
    }
  });

  it('refuses a waiter whose place could never lapse with invalid_waiter', async () => {
    const store = createStore({});
    for (const leftMs of [Number.POSITIVE_INFINITY, Number.NaN, 0, -5, 1e14, '5' as never]) {
      const error = await Promise.resolve().then(() => store.claim('s', 'A', 0, { id: 'w', leftMs })).then(() => undefined, (caught: unknown) => caught);
      expect(error, String(leftMs)).toMatchObject({ code: 'invalid_waiter' });
    }
    expect((await store.claim('s', 'A')).state).toBe('claimed');
  });

  it('rejects a ttl that is not a positive integer with invalid_options', () => {
    expect(() => createStore({ ttlMs: 0 })).toThrow(WebhookReceiverError);
    expect(() => createStore({ claimTtlMs: 1.5 })).toThrow(/claimTtlMs must be a positive integer, got 1.5/);
  });
}

/**
 * A store whose first call is held on its way (`holdFirstCall` gives a gate that lets it go)
 * must place an event where it reached the receiver, not where the store ran its call: A
 * arrives and claims at once, its call held while B arrives; B, which waited behind A in its
 * receiver, claims after A was processed, and is the newer state: claimed, not superseded.
 */
export async function expectPlacesOnTheReceiversClock(createStore: (firstCall: Promise<void>) => DedupeStore, key: string): Promise<void> {
  let openGate!: () => void;
  const store = createStore(new Promise<void>((resolve) => (openGate = resolve)));
  const waitPast = async (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() <= until) await sleep(5);
  };
  const claimOfA = store.claim(key, 'digest-a', 0);
  await waitPast(20);
  const arrivalOfB = Date.now();
  await waitPast(50);
  openGate();
  const a = await claimOfA;
  expect(a.state).toBe('claimed');
  await store.markProcessed(key, (a as { token: string }).token);
  const b = await store.claim(key, 'digest-b', Date.now() - arrivalOfB);
  expect(b.state).toBe('claimed');
}

/**
 * A settlement of an attempt that outlived the service's reply window, applied late (the
 * transaction waited for the row, or the operation took that long to reach the store): the
 * failure must be placed when the service saw it (the end of the window after it SENT the
 * attempt), not later by that delay, or the retry that comes on schedule seems too early to be
 * one and is dispatched as a newer event. `store` has `minRetryDelayMs` 1,000 and
 * `replyWindowMs` 500; `delay(ms)` makes each of its operations from then on take `ms` more.
 */
export async function expectFailurePlacedWhenTheServiceSawIt(store: DedupeStore, delay: (ms: number) => void): Promise<void> {
  // The service sent the attempt 300 ms before it arrived (a slow network): it counted it failed
  // at sentAt + 500, 200 ms after the arrival.
  const sentAt = Date.now() - 300;
  const a = await store.claim('s', 'digest-a', 0);
  if (a.state !== 'claimed') throw new Error('expected a claim');
  // The handler outlives the window; its release then takes 300 ms more to apply.
  await sleep(400);
  delay(300);
  await store.release('s', a.token, { retryExpected: true, sentMsAgo: Date.now() - sentAt });
  delay(0);
  // A newer event of the subject is processed.
  const b = await store.claim('s', 'digest-b', 0);
  if (b.state !== 'claimed') throw new Error('expected a claim');
  await store.markProcessed('s', b.token);
  // The service's retry of A comes 1,000 ms after it saw the attempt fail: that retry
  // (superseded by B), not a newer event with A's body, which a failure placed 300 ms late would
  // make it.
  await sleep(Math.max(0, sentAt + 500 + 1_000 + 50 - Date.now()));
  expect(await store.claim('s', 'digest-a', 0)).toEqual({ state: 'superseded' });
}
