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
/** What the receiver saw of an attempt: when it arrived, its body, and how it was answered (the reply's `code`, its handler's outcome). */
interface Delivery { at: number; body: string; answer: string }

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
 * acknowledged within its 4 attempts, and whether an attempt held up by a slow handler arrived
 * after another attempt with the same body had fallen due (`heldUpRepeat`: a run the receiver
 * cannot tell from another that needs the other answer, see "what the receiver cannot tell
 * apart" below); `seen`, if given, gets each attempt as the receiver saw it.
 */
async function deliverAll(receiver: WebhookReceiver, queue: Attempt[], bodyOf: (event: number) => string, clock: VirtualClock, seen?: Delivery[]): Promise<{ acknowledgedAll: boolean; heldUpRepeat: boolean }> {
  let acknowledgedAll = true;
  let heldUpRepeat = false;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const arrivedAt = Math.max(next.at * 1_000, clock.now());
    clock.set(arrivedAt);
    const rawBody = bodyOf(next.event);
    if (arrivedAt > next.at * 1_000 && queue.some((queued) => queued.at * 1_000 <= arrivedAt && bodyOf(queued.event) === rawBody)) heldUpRepeat = true;
    const signed = await signWebhook({ rawBody, privateKey: keys.privateKey, timestamp: Math.floor(arrivedAt / 1_000) });
    const { reply } = await receiver.receive({
      method: 'POST',
      header: (name) => (name === 'x-webhook-timestamp' ? signed.timestamp : signed.signature),
      readRawBody: () => Promise.resolve(new TextEncoder().encode(rawBody)),
    });
    const timedOut = clock.now() - arrivedAt >= 30_000;
    seen?.push({ at: arrivedAt, body: rawBody, answer: (JSON.parse(reply.body) as { code: string }).code });
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
  return { acknowledgedAll, heldUpRepeat };
}

/**
 * What the partner's handler does on a call: succeed at once, fail (an outage), or take 35 s
 * (a slow database), past the service's 30-second window, and then succeed (or fail).
 */
type Call = boolean | 'slow' | 'slow and failing';
// Handlers that outlive the service's window hold the attempts due meanwhile up: they arrive
// together once it is answered, and when a failed copy's retry has fallen due by then, the
// receiver cannot tell that retry from a newer event with the same body. Two runs then see the
// same deliveries and need different answers, so no store rule ends on the platform's last state
// in both (the pairs under "what the receiver cannot tell apart" below). The property leaves such
// runs out (`heldUpRepeat`: an attempt held up past the time another attempt of its body fell
// due), about 1.5% of them, and holds on the rest, slow handlers that fail included.
const call = fc.constantFrom<Call>(false, true, 'slow', 'slow and failing');

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
  const deliveries: Delivery[] = [];
  const { acknowledgedAll, heldUpRepeat } = await deliverAll(receiver, queue, (event) => eventBody('kyc.status.changed', 'u1', { kycStatus: states[event] as never }), clock, deliveries);
  return { platform: states.at(-1), seen, acknowledgedAll, heldUpRepeat, deliveries };
}

// Gaps between changes: short, long, and on the retry waits' edges (a change can come the very
// second a retry is due).
const afterS = fc.oneof(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 91, max: 1_500 }), fc.constantFrom(59, 60, 61, 299, 300, 301, 899, 900, 901));
const change = fc.record({ afterS, state: fc.nat(STATES.length - 1) });
// Three states, so that a user often comes back to one (A -> B -> A).
const repeatingChange = fc.record({ afterS, state: fc.nat(2) });

describe.each(stores)('a late retry never brings back an older state (a model of reference 6.3 in virtual time), on %s', (_name, store) => {
  it('keeps the order of events placed in the same ms after a release forgot the place one of them was moved past (fast-check seed 1817599319)', async () => {
    // A at 1093 s outlives its window (its retry is due at 1183) and holds up C, B and A, which
    // then arrive in one ms: C is processed (its place is that ms), B is placed the ms after and
    // fails (its claim replaced C's state, and its release forgets C's place), then A is placed.
    // A must go after B, so that B's retry at 1188 is superseded by A, the platform's last state.
    const changes: Change[] = [{ afterS: 1, state: 0 }, { afterS: 91, state: 1 }, { afterS: 1, state: 0 }, { afterS: 1, state: 2 }, { afterS: 1, state: 1 }, { afterS: 1, state: 0 }];
    const { platform, seen, acknowledgedAll, heldUpRepeat, deliveries } = await run(store, changes, [false, false, 'slow', false, true]);
    expect({ acknowledgedAll, heldUpRepeat, platform }).toEqual({ acknowledgedAll: true, heldUpRepeat: false, platform: 'pending' });
    expect(deliveries.map((delivery) => `${delivery.at / 1_000} ${delivery.answer}`).slice(-3)).toEqual(['1128 processed', '1183 duplicate', '1188 superseded']);
    expect(seen).toBe('pending');
  });

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
      const { platform, seen, acknowledgedAll, heldUpRepeat } = await run(store, changes, calls);
      // A run the receiver cannot tell from another that needs the other answer is left out
      // (the pairs below show that no rule gets both right).
      fc.pre(acknowledgedAll && !heldUpRepeat);
      expect(seen).toBe(platform);
    }), { numRuns: 500 });
  });
});

// What the receiver cannot tell apart. The model's service waits for each answer before it sends
// the next attempt, so the attempts that fall due while a handler outlives the service's window
// all arrive when it is answered, in one ms. When a failed copy's retry has fallen due by then,
// the receiver sees a copy, then another, and cannot tell "a newer event, then the retry" (sent
// before the retry fell due) from "the retry, then a newer event" (sent after): the arrivals, the
// bodies and the answers are the same, and so are the store's records. It takes the first copy
// for the retry, which is right for the second history of each pair below; the first history
// sees the same deliveries up to the answer that decides (in the first pair, all of them) and
// ends on another state, so no rule ends on the platform's last state in both. (The sandbox does
// not wait for answers: there, a copy arrives when it is sent, before the retry's wait is over.)
const SLOW_AND_FAILING: Call = 'slow and failing';
const A = 0;
const B = 1;
const twins: Array<[string, Change[], Change[], Call[], number]> = [
  // The counterexample fast-check shrank to (seed -378831866). A at 1059 s fails past its
  // window (the service counts it failed at 1089, retries at 1149); A at 1118 fails the same
  // way and holds everything up to 1153. Then A, B, A arrive in that ms: A at 1119, B at 1120,
  // then the retry of the first A (due 1149), superseded in truth, taken for a newer A after B;
  // or the retry first, then B at 1150 and A at 1151.
  ['A, A, A, B (ends on A) and A, A, B, A', [{ afterS: 59, state: A }, { afterS: 59, state: A }, { afterS: 1, state: A }, { afterS: 1, state: B }],
    [{ afterS: 59, state: A }, { afterS: 59, state: A }, { afterS: 32, state: B }, { afterS: 1, state: A }], [SLOW_AND_FAILING, SLOW_AND_FAILING], Number.POSITIVE_INFINITY],
  // A at 1091 s fails past its window (retry due 1181), A at 1146 too (retry due 1236), and its
  // handler answers at 1181: the A sent at 1147 arrives then, before the first A's retry, and
  // fails at once (its retry comes at 1241); the retry fails past its window (its next at 1511).
  // The store takes them the other way round: the retry (next due 5 minutes after 1181), then a
  // newer A whose retry is due at 1271. B at 1255 is processed; the A the platform sends at 1271
  // is then answered superseded, which is right when that A at 1271 is the retry (A at 1181 sent
  // after the retry, a new A at 1241, B at 1255: the platform ends on B).
  ['A, A, A, B, A (ends on B) and A, A, A, A, B', [{ afterS: 91, state: A }, { afterS: 55, state: A }, { afterS: 1, state: A }, { afterS: 108, state: B }, { afterS: 16, state: A }],
    [{ afterS: 91, state: A }, { afterS: 55, state: A }, { afterS: 35, state: A }, { afterS: 60, state: A }, { afterS: 14, state: B }], [SLOW_AND_FAILING, SLOW_AND_FAILING, true, SLOW_AND_FAILING], 1_271_000],
  // With handlers that outlive the window and then succeed, as the property above draws them (it
  // fails on such runs, seldom: seed -1068678663). A at 1152 and 1153 fail (retries due 1212 and
  // 1213); the first retry's handler answers at 1247. The A sent at 1212 then arrives, before the
  // second retry, and is taken for it; its handler answers at 1282 (the service retries it at
  // 1337), the second retry arrives then (a duplicate), and B sent at 1213 is processed. The A at
  // 1337 is taken for a newer event and dispatched: right when it is one (A at 1214, B at 1215,
  // A at 1337), stale when it is that retry.
  ['B, A, B, A, A, A, B (ends on A) and B, A, B, A, A, A, B, A', [{ afterS: 59, state: B }, { afterS: 91, state: A }, { afterS: 1, state: B }, { afterS: 1, state: A }, { afterS: 1, state: A }, { afterS: 59, state: A }, { afterS: 1, state: B }],
    [{ afterS: 59, state: B }, { afterS: 91, state: A }, { afterS: 1, state: B }, { afterS: 1, state: A }, { afterS: 1, state: A }, { afterS: 61, state: A }, { afterS: 1, state: B }, { afterS: 122, state: A }], [false, false, false, true, true, 'slow', 'slow'], 1_337_000],
];

describe.each(stores)('what the receiver cannot tell apart: handlers that outlive the service\'s window, when states repeat, on %s', (_name, store) => {
  it.each(twins)('%s: the same deliveries until the answer that decides, and different last states', async (_pair, stale, right, calls, decidedAt) => {
    const endsStale = await run(store, stale, calls);
    const endsRight = await run(store, right, calls);
    const until = (deliveries: Delivery[]) => deliveries.filter((delivery) => delivery.at <= decidedAt);
    expect(until(endsStale.deliveries)).toEqual(until(endsRight.deliveries));
    expect(endsRight.acknowledgedAll && endsStale.acknowledgedAll).toBe(true);
    expect(endsRight.seen).toBe(endsRight.platform);
    expect(endsStale.platform).not.toBe(endsRight.platform);
    expect(endsStale.seen).toBe(endsRight.platform);
    // The property above leaves such runs out.
    expect(endsStale.heldUpRepeat).toBe(true);
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
  const { acknowledgedAll } = await deliverAll(receiver, queue, (event) => eventBody(bodies[event]!.eventType, 'u1', bodies[event]!.snapshot as never), clock);
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
