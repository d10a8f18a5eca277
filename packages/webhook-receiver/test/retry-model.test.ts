// A model of the service's delivery (reference 6.3) against one receiver, in virtual time: the
// platform changes a user's KYC status at random moments, each change is sent at once, an
// answer other than 2xx is retried after 1, 5 and 15 minutes (4 attempts in all), and the
// partner's handler fails on the calls the run picks (an outage, a flaky database). Whatever
// fails, once every event has been acknowledged, the state the handlers saw last must be the
// platform's last one: a late retry never brings back an older state, and no newer event is
// lost to one, also when a change brings back a state (the same body) whose retry is due.
import fc from 'fast-check';
import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DedupeStore } from '../src/dedupe/dedupe-store.js';
import { createMemoryDedupeStore } from '../src/dedupe/memory-store.js';
import { createRedisDedupeStore } from '../src/dedupe/redis-store.js';
import { createWebhookReceiver, type WebhookReceiver } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';

const RETRY_AFTER_S = [60, 300, 900];
const STATES = ['pending', 'approved', 'rejected', 'requiresAction', 'processing', 'documentsRequested'] as const;

let keys: { publicKey: string; privateKey: string };
let redis: RedisWithClients;
let prefixes = 0;
beforeAll(async () => {
  keys = await generateWebhookKeyPair();
  redis = await startRedisWithClients();
  // The receiver's clock too (it notes when each delivery arrives): virtual, and still while a
  // delivery runs, as the service's schedule assumes.
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterAll(async () => {
  vi.useRealTimers();
  await redis?.close();
});

/** A store on the run's virtual clock. */
type StoreOnClock = (now: () => number) => DedupeStore;
const stores: Array<[string, StoreOnClock]> = [
  ['the memory store', (now) => createMemoryDedupeStore({ now })],
  ['the Redis store', (now) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: `model:${process.pid}:${++prefixes}:`, now })],
];

interface Change { afterS: number; state: number }
interface Attempt { at: number; event: number; attempt: number }

/** The run's virtual clock, in ms: the stores read it, and `advance` moves the receiver's `Date` with it. */
interface VirtualClock { now(): number; set(ms: number): void; advance(ms: number): void }

function virtualClock(): VirtualClock {
  let nowMs = 0;
  const clock: VirtualClock = {
    now: () => nowMs,
    set: (ms) => { nowMs = ms; vi.setSystemTime(ms); },
    advance: (ms) => clock.set(nowMs + ms),
  };
  return clock;
}

/**
 * Sends the queued first attempts, answered one at a time in the order they are sent (a
 * change's first attempt before any later one, as the sandbox sends them), and each retry 1, 5
 * and 15 minutes after the service saw the attempt fail: a non-2xx answer, or none within its 30
 * seconds (a handler that outlived them, whatever it answered after). Attempts due while a slow
 * handler runs arrive when it is done, in their order. Resolves to whether every event was
 * acknowledged within its 4 attempts.
 */
async function deliverAll(receiver: WebhookReceiver, queue: Attempt[], bodyOf: (event: number) => string, clock: VirtualClock): Promise<boolean> {
  let acknowledgedAll = true;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const arrivedAt = Math.max(next.at * 1_000, clock.now());
    clock.set(arrivedAt);
    const rawBody = bodyOf(next.event);
    const signed = await signWebhook({ rawBody, privateKey: keys.privateKey, timestamp: Math.floor(arrivedAt / 1_000) });
    const { reply } = await receiver.receive({
      method: 'POST',
      header: (name) => (name === 'x-webhook-timestamp' ? signed.timestamp : signed.signature),
      readRawBody: () => Promise.resolve(new TextEncoder().encode(rawBody)),
    });
    const timedOut = clock.now() - arrivedAt >= 30_000;
    if (reply.status >= 200 && reply.status < 300 && !timedOut) continue;
    if (next.attempt === 4) {
      acknowledgedAll = false;
      continue;
    }
    const failedAtS = Math.floor(arrivedAt / 1_000) + (timedOut ? 30 : 0);
    const retry = { at: failedAtS + RETRY_AFTER_S[next.attempt - 1]!, event: next.event, attempt: next.attempt + 1 };
    // A retry falls due before a change sent at the same second (it was scheduled first).
    const place = queue.findIndex((queued) => queued.at > retry.at || (queued.at === retry.at && queued.attempt === 1));
    queue.splice(place === -1 ? queue.length : place, 0, retry);
  }
  return acknowledgedAll;
}

/**
 * What the partner's handler does on a call: succeed at once, fail (an outage), or take 35 s
 * (a slow database), past the service's 30-second window, and then succeed (or fail).
 */
type Call = boolean | 'slow' | 'slow and failing';
// Slow handlers that then FAIL are left out of the property: with a state that repeats, their
// delayed retries can still end stale, with or without the late-answer rule (a counterexample
// the model found: A, A, A, B, A with the first, second and fourth calls slow and failing and the
// third failing ends on B). See the receiver README's "Duplicates" for the coincidences left.
const call = fc.constantFrom<Call>(false, true, 'slow');

/** Runs the model; returns the platform's last state, the handlers' last, and whether every event was acknowledged. */
async function run(store: StoreOnClock, changes: Change[], calls: Call[]) {
  const clock = virtualClock();
  let callCount = 0;
  let seen: string | undefined;
  const receiver = createWebhookReceiver({
    publicKey: keys.publicKey,
    // The signature's timestamp is the second an attempt arrives; a slow handler ahead of it
    // may have held it up for 35 s since.
    toleranceSeconds: 60,
    dedupe: store(clock.now),
    onError: () => undefined,
  }).on('kyc.status.changed', (event) => {
    const behaviour = calls[callCount++] ?? false;
    if (behaviour === 'slow' || behaviour === 'slow and failing') clock.advance(35_000);
    if (behaviour === true || behaviour === 'slow and failing') throw new Error('the partner database is down');
    seen = event.data.kycStatus;
  });
  const states: string[] = [];
  const queue: Attempt[] = [];
  let at = 1_000;
  for (const change of changes) {
    at += change.afterS;
    states.push(STATES[change.state]!);
    queue.push({ at, event: states.length - 1, attempt: 1 });
  }
  const acknowledgedAll = await deliverAll(receiver, queue, (event) => eventBody('kyc.status.changed', 'u1', { kycStatus: states[event] as never }), clock);
  return { platform: states.at(-1), seen, acknowledgedAll };
}

// Gaps between changes: short, long, and on the retry waits' edges (a change can come the very
// second a retry is due).
const afterS = fc.oneof(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 91, max: 1_500 }), fc.constantFrom(59, 60, 61, 299, 300, 301, 899, 900, 901));
const change = fc.record({ afterS, state: fc.nat(STATES.length - 1) });
// Three states, so that a user often comes back to one (A -> B -> A).
const repeatingChange = fc.record({ afterS, state: fc.nat(2) });

describe.each(stores)('a late retry never brings back an older state (a model of reference 6.3 in virtual time), on %s', (_name, store) => {
  it('ends on the platform\'s last state after any failures, when every change is a state not seen before', async () => {
    const distinctChanges = fc.uniqueArray(change, { minLength: 1, maxLength: STATES.length, selector: (entry) => entry.state });
    await fc.assert(fc.asyncProperty(distinctChanges, fc.array(fc.boolean(), { maxLength: 20 }), async (changes, failing) => {
      const { platform, seen, acknowledgedAll } = await run(store, changes, failing);
      fc.pre(acknowledgedAll);
      expect(seen).toBe(platform);
    }), { numRuns: 200 });
  });

  it('ends on the platform\'s last state after any failures, when states repeat', async () => {
    await fc.assert(fc.asyncProperty(fc.array(repeatingChange, { minLength: 1, maxLength: 10 }), fc.array(fc.boolean(), { maxLength: 30 }), async (changes, failing) => {
      const { platform, seen, acknowledgedAll } = await run(store, changes, failing);
      fc.pre(acknowledgedAll);
      expect(seen).toBe(platform);
    }), { numRuns: 500 });
  });

  it('ends on the platform\'s last state when handlers also outlive the service\'s 30-second window (it retries what it did not hear answered in time), when states repeat', async () => {
    await fc.assert(fc.asyncProperty(fc.array(repeatingChange, { minLength: 1, maxLength: 10 }), fc.array(call, { maxLength: 30 }), async (changes, calls) => {
      const { platform, seen, acknowledgedAll } = await run(store, changes, calls);
      fc.pre(acknowledgedAll);
      expect(seen).toBe(platform);
    }), { numRuns: 500 });
  });
});

// The same model for a user's whole life: the user registers (user.created), then the platform
// changes the KYC status, the source-of-funds answer or the phone validation, and sends that
// change's event, which carries the whole User as it is then. The receiver orders and supersedes
// per subject, one event type of one user, so each event type keeps the field it is about: a
// partner whose handlers take from an event only its own field (and whose user.created handler
// fills in only what the user's row lacks: its retry can come after the later events) ends on
// the platform's last state for every field. The rest of a snapshot is as old as its event: a
// late retry of one type's event carries the fields of the others as they were (the READMEs'
// "Take from each event the field it is about").
const FIELDS = [
  { eventType: 'kyc.status.changed', field: 'kycStatus', values: ['pending', 'approved', 'requiresAction'] },
  { eventType: 'kyc.source-of-funds.changed', field: 'isSourceOfFundsAnswered', values: [false, true] },
  { eventType: 'kyc.phone-validation.changed', field: 'isPhoneValidated', values: [false, true] },
] as const;
type UserFields = Record<(typeof FIELDS)[number]['field'], unknown>;
type UserEventType = 'user.created' | (typeof FIELDS)[number]['eventType'];

interface FieldChange { afterS: number; which: number; value: number }

const snapshotOf = (user: UserFields): UserFields => ({ kycStatus: user.kycStatus, isSourceOfFundsAnswered: user.isSourceOfFundsAnswered, isPhoneValidated: user.isPhoneValidated });

/**
 * Runs a user's life, registration first; returns the platform's last fields, what the
 * partner's row holds with field-wise handlers and with handlers that copy the whole snapshot,
 * and whether every event was acknowledged.
 */
async function runLife(store: StoreOnClock, changes: FieldChange[], failing: boolean[]) {
  const clock = virtualClock();
  let calls = 0;
  const fail = () => {
    if (failing[calls++] === true) throw new Error('the partner database is down');
  };
  // The partner's row of the user: none until a handler writes it.
  const fieldWise: Partial<UserFields> = {};
  let wholeSnapshot: UserFields | undefined;
  const receiver = createWebhookReceiver({ publicKey: keys.publicKey, toleranceSeconds: 0, dedupe: store(clock.now), onError: () => undefined })
    .on('user.created', (event) => {
      fail();
      // Fills in only what the row lacks (inserts the row when there is none).
      for (const { field } of FIELDS) if (!(field in fieldWise)) fieldWise[field] = event.data[field];
      wholeSnapshot = snapshotOf(event.data);
    });
  for (const { eventType, field } of FIELDS) {
    receiver.on(eventType, (event) => {
      fail();
      // Upserts its own field.
      fieldWise[field] = event.data[field];
      wholeSnapshot = snapshotOf(event.data);
    });
  }
  const platform: UserFields = { kycStatus: 'pending', isSourceOfFundsAnswered: false, isPhoneValidated: false };
  const bodies: Array<{ eventType: UserEventType; snapshot: UserFields }> = [{ eventType: 'user.created', snapshot: { ...platform } }];
  let at = 1_000;
  const queue: Attempt[] = [{ at, event: 0, attempt: 1 }];
  for (const change of changes) {
    at += change.afterS;
    const { eventType, field, values } = FIELDS[change.which]!;
    platform[field] = values[change.value % values.length];
    bodies.push({ eventType, snapshot: { ...platform } });
    queue.push({ at, event: bodies.length - 1, attempt: 1 });
  }
  const acknowledgedAll = await deliverAll(receiver, queue, (event) => eventBody(bodies[event]!.eventType, 'u1', bodies[event]!.snapshot as never), clock);
  return { platform, fieldWise, wholeSnapshot, acknowledgedAll };
}

const fieldChange = fc.record({ afterS, which: fc.nat(FIELDS.length - 1), value: fc.nat(2) });

describe.each(stores)("a user's whole life: each event type keeps its own field (model of reference 6.3), on %s", (_name, store) => {
  it("ends on the platform's last KYC status, source-of-funds answer and phone validation after any failures", async () => {
    await fc.assert(fc.asyncProperty(fc.array(fieldChange, { minLength: 1, maxLength: 12 }), fc.array(fc.boolean(), { maxLength: 30 }), async (changes, failing) => {
      const { platform, fieldWise, acknowledgedAll } = await runLife(store, changes, failing);
      fc.pre(acknowledgedAll);
      expect(fieldWise).toEqual(platform);
    }), { numRuns: 300 });
  });

  it('a handler that copies the whole snapshot is set back by a late retry of another event type', async () => {
    // The source-of-funds answer fails, the KYC status changes and is processed, the retry of the
    // source-of-funds event comes a minute later carrying the KYC status from before.
    const changes: FieldChange[] = [{ afterS: 1, which: 1, value: 1 }, { afterS: 10, which: 0, value: 1 }];
    const { platform, fieldWise, wholeSnapshot, acknowledgedAll } = await runLife(store, changes, [false, true]);
    expect(acknowledgedAll).toBe(true);
    expect(platform).toEqual({ kycStatus: 'approved', isSourceOfFundsAnswered: true, isPhoneValidated: false });
    expect(fieldWise).toEqual(platform);
    expect(wholeSnapshot).toEqual({ ...platform, kycStatus: 'pending' });
  });

  it("a retry of user.created after the user's later events adds only what the row lacks", async () => {
    // Registration fails; the KYC status changes and is processed (its handler upserts the row);
    // the retry of user.created comes a minute later with the status from before.
    const { platform, fieldWise, wholeSnapshot, acknowledgedAll } = await runLife(store, [{ afterS: 10, which: 0, value: 1 }], [true]);
    expect(acknowledgedAll).toBe(true);
    expect(fieldWise).toEqual(platform);
    expect(wholeSnapshot).toEqual({ ...platform, kycStatus: 'pending' });
  });
});
