import { DedupeStoreError } from '../errors.js';
import type { ClaimOptions, DedupeClaim, MarkProcessedOptions, ReleaseOptions, SubjectWaiter } from './dedupe-store.js';

/**
 * What a store keeps per subject (`<eventType>:<data.id>`): the latest processed body's digest,
 * or a claim in progress, and the bodies of the subject whose retry is due. The transitions
 * below are the store contract of {@link DedupeStore} for one subject; the memory store and the
 * Durable Object store apply them (each atomically in its own way), the Redis store in Lua.
 *
 * A claim that is released (its handler failed) or that expires (its process died) leaves the
 * subject with no processed record, not the one before: an event of the subject was received
 * and not handled, so the next delivery of the subject is dispatched whatever its body. Were the
 * record before restored, a newer event that repeats it (A, then B fails, then A again before
 * B's retry) would be taken for a retry of A and never dispatched.
 *
 * A claim released with a retry expected (the delivery was answered non-2xx, so the service
 * sends the body again) keeps its event among the subject's `retries` (one entry per event: two
 * events with the same body that failed are two entries). So does a claim that expired (its
 * process died mid-handler, or the store lost its release): the service sends that body again
 * too. Each event of the subject has a place in the subject's order (`since`): when its first
 * delivery ARRIVED at a receiver (the receiver's clock, before any wait for the key or for the
 * subject), not when the store ran the claim, so that claims that run late (queued in a Redis
 * client during an outage, or after a first key fetch) keep the order the platform sent in; its
 * retries keep that place. Once an event is processed, the retries due of the events received
 * BEFORE it are superseded: the first delivery of such a digest is answered `superseded` and not
 * dispatched, since it would bring back a state older than the one processed; so is a new event
 * received before it that claims after it. The retries of events received after it stay due
 * and are dispatched in their place (two events that fail in a row are both handled, in the
 * order of their retries), also when one has the processed body.
 *
 * Time tells a retry from a newer event with the same body: the service waits
 * `minRetryDelayMs` times {@link RETRY_WAIT_FACTORS} after a failed attempt before it retries
 * it. A copy of a failed body that comes sooner is not its retry: it is a newer event, placed
 * after the others. So is a copy of the processed body that comes sooner than the processed
 * attempt's retry could (had its answer been lost) while an event received after it waits for
 * its retry; without such an event, such a copy is answered `processed` (its state is the one
 * processed already), and its arrival is kept (`repeatedAt`): should an event that arrived
 * before it claim after it (two processes: A processed in one, B still being verified in the
 * other when A's copy claims), that copy was the newer event (A -> B -> A), and B is answered
 * `superseded`, so that the subject stays on the platform's latest state, A.
 *
 * Deliveries that wait for the subject (it is being handled, or others wait before them) keep
 * their places in its `line`, in the order they first asked: the subject goes to the first of
 * them, so that deliveries waiting in different processes are handled in the order they
 * arrived. A place lapses when its delivery stops waiting (it is answered 409 then).
 *
 * A place whose delivery told its body (`digest`, and its arrival: see {@link SubjectWaiter})
 * and that lapses without its delivery having claimed, given its place back (`leaveLine`) or
 * been answered 409 with its retry recorded (`expectRetry`) is a delivery that got no answer:
 * its process died while it waited. The service sends it again, so it becomes a retry due of its
 * body, in its place, as if it had been answered 409 ({@link expectSubjectRetry}'s rules), failed
 * at its arrival (see {@link withLapsedPlaces}). Without this, its retry would be placed as a new
 * event, after the events received since, and bring an older state back over them.
 */
export interface SubjectRecord {
  /** `released`: no event in progress and none processed, only retries due. */
  state: 'processing' | 'processed' | 'released';
  token: string;
  /** Digest of the body processed (or being processed) for this subject; `''` when released. */
  digest: string;
  /** When the state above ends (a claim expires, a processed body is forgotten). */
  expiresAt: number;
  /** Failed attempts of the event being processed (or processed), before this claim (a retry's count goes on). */
  failures?: number;
  /**
   * The place in the subject's order of the event being processed or processed (see
   * {@link RetryDue.since}); left out when it is `claimedAt` (the event's first attempt).
   */
  since?: number;
  /** When the attempt of the event being processed (or processed) arrived at a receiver (before it read the body, fetched a key or waited in its subject's line). */
  claimedAt?: number;
  /**
   * A processed record's: when the latest copy of its body arrived that came sooner than the
   * processed attempt's retry could, after that attempt (answered `processed`: a newer event
   * that brought the same state back, or a copy the service sent at once). An event received
   * before it is older than that state (see {@link latestArrivalOf}).
   */
  repeatedAt?: number;
  /** A claim's: until when its event's retries can come, should it fail or expire (see {@link RetryDue.expiresAt}). */
  dueUntil?: number;
  /**
   * A claim's: its delivery is answered 2xx before its handlers settle ({@link ClaimOptions}),
   * so the service sends no retry of it: should the claim expire, no retry is due.
   */
  acknowledgedEarly?: true;
  /** Bodies of the subject answered non-2xx after their handler failed, whose retry is due. */
  retries?: RetryDue[];
  /** The deliveries waiting for the subject, first first. */
  line?: LinePlace[];
}

/** A delivery's place in its subject's line (see {@link SubjectWaiter}). */
export interface LinePlace {
  id: string;
  /** When its delivery stops waiting. */
  expiresAt: number;
  /**
   * Given back (`leaveLine`: a call of that delivery to the store failed): not a place any more,
   * but a mark that a late call of that delivery (sent before, run after) takes no place and
   * claims nothing. A mark that keeps `digest` is a place whose delivery's failure is recorded
   * already (it lapsed, or its 409 was: see {@link withLapsedPlaces}): a 409 of that delivery told
   * after it adds nothing.
   */
  left?: true;
  /** Digest of its delivery's body, when the receiver told it: should the place lapse, that body's retry is due. */
  digest?: string;
  /** With `digest`: when its delivery arrived at a receiver (its event's place, should it be a new one). */
  arrivedAt?: number;
  /** With `digest`: until when its delivery's retries can come (as {@link SubjectRecord.dueUntil}); a place that lapses later is only dropped. */
  dueUntil?: number;
}

/** What a place in line knows of its delivery (see {@link LinePlace.digest}). */
export interface WaitingDelivery {
  readonly digest: string;
  readonly arrivedAt: number;
  readonly dueUntil: number;
}

/** The delivery of a place: `digest`, arrived at `arrivedAt`, whose retries can come for the retry-due window after that. */
export function waitingDelivery(digest: string, arrivedAt: number, minRetryDelayMs: number, replyWindowMs: number): WaitingDelivery {
  return { digest, arrivedAt, dueUntil: arrivedAt + retryDueWindow(minRetryDelayMs, replyWindowMs) };
}

/**
 * Arrivals of one delivery computed in two calls (each `now` less the `waitedMs` the receiver
 * measured from one `receivedAt`, on clocks read microseconds apart) are within this many ms.
 */
export const SAME_ARRIVAL_MS = 2;

function sameArrival(a: number, b: number): boolean {
  return Math.abs(a - b) <= SAME_ARRIVAL_MS;
}

/** A body of the subject whose delivery failed and whose retry the service will send. */
export interface RetryDue {
  digest: string;
  /** An event of the subject received after this one was processed since. */
  superseded: boolean;
  /**
   * A copy of the body of the event in progress (or processed), or of a retry due's, answered
   * 409 with no other event of the subject received between the two (see
   * {@link expectSubjectRetry}): the same state, so not newer than that event once it is
   * processed (its retry is answered `processed`), and superseded like it by a newer event
   * processed before its retry.
   */
  repeats?: true;
  /** Failed attempts so far (the service makes 4 in all, reference 6.3). */
  failures: number;
  /**
   * The event's place in the subject's order: when its first delivery arrived at a receiver, in
   * ms (see {@link SubjectRecord}). Only places are compared. (The previous major counted 1, 2,
   * 3...: such places read as older than any arrival time.)
   */
  since: number;
  /**
   * When the service saw its latest attempt fail: when the handler failed (the 500 answer), or
   * at the end of the service's reply window (the store's `replyWindowMs`, 30 seconds by
   * default: {@link REPLY_WINDOW_MS}) after the attempt arrived, if the handler outlived it.
   * The service's wait before the next attempt counts from then: `minRetryDelayMs` times
   * {@link RETRY_WAIT_FACTORS}.
   */
  failedAt: number;
  /** The event's first arrival plus {@link retryDueWindow} (25 minutes by default): the service's last attempt comes before. */
  expiresAt: number;
}

/**
 * How long an event's retries stay due after its first attempt: the whole schedule (1, 5 and 15
 * minutes between attempts, reference 6.3, and up to 30 seconds an attempt: see {@link retryDueWindow} for longer ones), about 23 minutes,
 * and room for a queue at the service. Counted from the first attempt, not the last failure,
 * so that attempts answered otherwise (409, 503) cannot stretch it past the service's last
 * attempt. A retry that comes later is dispatched like any new body.
 */
export const RETRY_DUE_MS = 25 * 60 * 1000;

/**
 * How long an event's retries stay due for a store whose `minRetryDelayMs` is the service's
 * first wait: {@link RETRY_DUE_MS} in those units (25 of them), so that against a sandbox whose
 * schedule runs N times faster the window shrinks with it; {@link RETRY_DUE_MS} when
 * `minRetryDelayMs` is 0 (no schedule known). A store whose `replyWindowMs` is longer than the
 * service's 30 s adds the difference for each of the {@link DELIVERY_ATTEMPTS}: attempts that
 * run to the end of a longer window push the last retry later (a window of 3 minutes against the
 * service's minutes: 35 minutes).
 */
export function retryDueWindow(minRetryDelayMs: number, replyWindowMs = REPLY_WINDOW_MS): number {
  const schedule = minRetryDelayMs > 0 ? (RETRY_DUE_MS / 60_000) * minRetryDelayMs : RETRY_DUE_MS;
  return schedule + DELIVERY_ATTEMPTS * Math.max(0, replyWindowMs - REPLY_WINDOW_MS);
}

/**
 * How long the service waits for an answer before it counts the attempt failed (reference 6.3):
 * the default of the stores' `replyWindowMs` (a sandbox's `deliveryTimeoutMs` can be another).
 */
export const REPLY_WINDOW_MS = 30_000;

/**
 * How long ago the service saw an attempt fail, for `expectRetry`: `failedMsAgo`, within the
 * attempt's life (0 to `waitedMs`, the time since it arrived); anything else (negative, NaN)
 * counts as now.
 */
export function failedAgo(waitedMs: number, failedMsAgo: number): number {
  return failedMsAgo > 0 ? Math.min(failedMsAgo, Math.max(0, waitedMs)) : 0;
}

/** A settlement's `sentMsAgo` (see {@link ReleaseOptions.sentMsAgo}) as whole ms above 0, or `undefined` (none, or no retry expected). */
export function sentMsAgoOf(options: MarkProcessedOptions | ReleaseOptions | undefined): number | undefined {
  const sentMsAgo = options?.retryExpected === true ? options.sentMsAgo : undefined;
  return typeof sentMsAgo === 'number' && Number.isFinite(sentMsAgo) && sentMsAgo >= 1 ? Math.floor(sentMsAgo) : undefined;
}

/** Attempts the service makes of one delivery: the first and 3 retries (reference 6.3). */
export const DELIVERY_ATTEMPTS = 4;

/**
 * The service's waits before the retries after the 1st, 2nd and 3rd failed attempt (1, 5 and
 * 15 minutes, reference 6.3), in units of the first: a store's `minRetryDelayMs` times these.
 */
export const RETRY_WAIT_FACTORS = [1, 5, 15] as const;

/** Whether a copy of a body that arrives at `at` can be this retry due: the service's wait after its last failure is over. */
function canBeRetry(retry: RetryDue, at: number, minRetryDelayMs: number): boolean {
  return at - retry.failedAt >= minRetryDelayMs * (RETRY_WAIT_FACTORS[retry.failures - 1] ?? 1);
}

/**
 * A claim of the subject by a delivery whose body has `digest`, at time `at`. `record` is the
 * record to keep afterwards (the same object when nothing changed). `minRetryDelayMs`: see
 * {@link SubjectRecord}.
 */
export function claimSubject(
  before: SubjectRecord | undefined,
  digest: string,
  at: number,
  claimTtlMs: number,
  tokenId: string,
  minRetryDelayMs = 0,
  receivedAt = at,
  waiter?: SubjectWaiter,
  replyWindowMs = REPLY_WINDOW_MS,
  options?: ClaimOptions,
): { claim: DedupeClaim; record: SubjectRecord | undefined } {
  // A claim in progress: wait. Otherwise find the retry due that this delivery can be: of its
  // body, whose wait is over; one that is not superseded first (two retries due with the same
  // body are the same content: dispatching it in the newer one's place loses nothing, while
  // taking it for the superseded one would lose the newer one if its own copy never came),
  // then the earliest in the subject's order.
  // Deliveries that wait before this one (in any process) have the subject first.
  const stored = withLapsedPlaces(before, at, minRetryDelayMs);
  const line = liveList(stored?.line, at);
  // A call of a delivery that gave its place back: it is gone, and its late call changes nothing.
  if (waiter !== undefined && line?.some((place) => place.left && place.id === waiter.id)) return { claim: { state: 'processing' }, record: stored };
  const first = line?.find((place) => !place.left);
  if ((stored !== undefined && stored.state === 'processing' && stored.expiresAt > at) || (first !== undefined && first.id !== waiter?.id)) {
    return { claim: { state: 'processing' }, record: waiter === undefined ? stored : joinLine(stored, waiter, at, digest === '' ? undefined : waitingDelivery(digest, receivedAt, minRetryDelayMs, replyWindowMs)) };
  }
  // No live claim: an expired one is now a retry due.
  const record = withoutExpiredClaim(stored, at, minRetryDelayMs, replyWindowMs);
  const live = record !== undefined && record.expiresAt > at;
  // This delivery leaves the line (it was first, if it was in it).
  const rest = first === undefined ? line : withoutEmpty(line!.filter((place) => place !== first));
  const retries = liveRetries(record, at);
  // Whether a copy can be a retry depends on when it arrived, not on when it got the subject
  // after waiting in line.
  const due = retryDueOf(retries, digest, receivedAt, minRetryDelayMs);
  const others = due === undefined ? retries : withoutEmpty(retries!.filter((retry) => retry !== due));
  const processed = live && record.state === 'processed' ? record : undefined;
  // The latest processed body of the subject: a retry of it (which answers the retry due it may
  // be), unless it is the retry of a newer event with the same body, or a copy sooner than the
  // processed attempt's retry could come while newer events wait for theirs.
  if (processed?.digest === digest && !(due === undefined ? repeatsWhileNewerWait(processed, retries, receivedAt, minRetryDelayMs) : isNewer(due, processed))) {
    // A copy sooner than the processed attempt's retry could come, and no retry due: not a
    // retry (a newer event with the same state, or a copy sent at once). Its arrival is kept.
    const repeated = due === undefined && receivedAt > latestArrivalOf(processed) && soonerThanItsRetry(processed, receivedAt, minRetryDelayMs)
      ? { ...processed, repeatedAt: receivedAt }
      : processed;
    return { claim: { state: 'processed' }, record: due === undefined && repeated.line === rest ? repeated : lined({ ...repeated, retries: others }, rest) };
  }
  // A retry overtaken by a newer event, or a new event received before the processed one (or
  // before a copy of its body that came sooner than its retry could) that claims after it (it
  // waited for a key fetch, or its claim ran late, or ran in another process): older than the
  // state processed, not dispatched.
  if (due?.superseded === true || (due === undefined && processed !== undefined && receivedAt < latestArrivalOf(processed))) {
    return { claim: { state: 'superseded' }, record: live ? lined(due === undefined ? record! : { ...record!, retries: others }, rest) : released(others, rest) };
  }
  // A different body (or an expired record, or an expired claim): a new event for this subject,
  // placed where it arrived; or the retry due, in its event's place.
  const token = `${tokenId}:${digest}`;
  const claimed: SubjectRecord = { state: 'processing', token, digest, expiresAt: at + claimTtlMs, claimedAt: receivedAt };
  if (due !== undefined) {
    claimed.failures = due.failures;
    claimed.since = due.since;
    claimed.dueUntil = due.expiresAt;
  } else {
    const place = freePlace(receivedAt, processed, retries);
    if (place !== receivedAt) claimed.since = place;
    // Should it fail or expire, its retries can come until then.
    claimed.dueUntil = receivedAt + retryDueWindow(minRetryDelayMs, replyWindowMs);
  }
  if (options?.acknowledgedEarly === true) claimed.acknowledgedEarly = true;
  if (others !== undefined) claimed.retries = others;
  if (rest !== undefined) claimed.line = rest;
  // The event's place, when it is not this delivery's arrival (see DedupeClaim).
  const place = claimed.since;
  return { claim: place === undefined || place === receivedAt ? { state: 'claimed', token } : { state: 'claimed', token, place }, record: claimed };
}

/**
 * The record after `joinLine(key, waiter)`: the waiter keeps its place in the subject's line, or
 * takes the last one, until `waiter.leftMs` from `at`. `delivery`: what the waiter told of its
 * delivery (see {@link deliveryOfWaiter}), kept in its place; none: the place lapses as it is.
 */
export function joinSubjectLine(record: SubjectRecord | undefined, waiter: SubjectWaiter, at: number, minRetryDelayMs = 0, delivery?: WaitingDelivery): SubjectRecord {
  return joinLine(withLapsedPlaces(record, at, minRetryDelayMs), waiter, at, delivery);
}

/**
 * What `joinLine`'s waiter tells of its delivery (its `digest`, and `waitedMs` before `at`, or the
 * arrival a Durable Object's adapter computed: `arrivedAt`), or `undefined` when it tells no digest.
 */
export function deliveryOfWaiter(waiter: SubjectWaiter, arrivedAt: number, minRetryDelayMs: number, replyWindowMs: number): WaitingDelivery | undefined {
  return waiter.digest === undefined ? undefined : waitingDelivery(waiter.digest, arrivedAt, minRetryDelayMs, replyWindowMs);
}

/** `record` with `waiter` in its line (a claim answered `processing`, or `joinLine`), its lapsed places converted already. */
function joinLine(record: SubjectRecord | undefined, waiter: SubjectWaiter, at: number, delivery: WaitingDelivery | undefined): SubjectRecord {
  const line = liveList(record?.line, at);
  if (line !== undefined && line.some((place) => place.id === waiter.id)) return line === record!.line ? record! : lined(record!, line);
  const place: LinePlace = { id: waiter.id, expiresAt: at + waiter.leftMs };
  if (delivery !== undefined) Object.assign(place, delivery);
  const joined = [...(line ?? []), place];
  return record === undefined ? released(undefined, joined)! : lined(record, joined);
}

/**
 * The record after `leaveLine(key, waiter)`: the waiter's place is given back, and marked, until
 * it would have lapsed, so that a call of that delivery that runs late takes no place again.
 */
export function leaveSubjectLine(before: SubjectRecord | undefined, waiter: SubjectWaiter, at: number, minRetryDelayMs = 0): SubjectRecord {
  const record = withLapsedPlaces(before, at, minRetryDelayMs);
  const line = liveList(record?.line, at) ?? [];
  const mine = line.find((place) => place.id === waiter.id);
  if (mine?.left) return line === record!.line ? record! : lined(record!, line);
  const marked: LinePlace = { id: waiter.id, expiresAt: mine?.expiresAt ?? at + waiter.leftMs, left: true };
  const next = mine === undefined ? [...line, marked] : line.map((place) => (place === mine ? marked : place));
  return record === undefined ? released(undefined, next)! : lined(record, next);
}

/** Refuses an `expectRetry` waiter id that no waiter could have (see {@link checkWaiter}). */
export function checkWaiterId(waiterId: string | undefined): void {
  if (waiterId !== undefined && (typeof waiterId !== 'string' || waiterId === '')) {
    throw new DedupeStoreError('invalid_waiter', `expectRetry's waiterId must be the non-empty id of the delivery's SubjectWaiter, or left out, got ${JSON.stringify(String(waiterId).slice(0, 40))}.`);
  }
}

/** Longest wait a {@link SubjectWaiter} may announce: a day (the receiver's is at most its store's `replyWindowMs`, 30 s by default). */
const MAX_WAITER_LEFT_MS = 86_400_000;

/** Refuses a waiter whose place could never lapse, or that a store could not keep. */
export function checkWaiter(waiter: SubjectWaiter): void {
  const { id, leftMs, digest, waitedMs } = waiter;
  if (typeof leftMs !== 'number' || !(leftMs > 0 && leftMs <= MAX_WAITER_LEFT_MS) || typeof id !== 'string' || id === '') {
    throw new DedupeStoreError('invalid_waiter', `A waiter needs a non-empty id and a leftMs in ms above 0 and at most ${MAX_WAITER_LEFT_MS}, got ${JSON.stringify({ id, leftMs: String(leftMs) })}.`);
  }
  // (A line holds one place a line: a digest with a line break could not be kept.)
  if ((digest !== undefined && (typeof digest !== 'string' || digest === '' || digest.includes('\n'))) || (waitedMs !== undefined && (typeof waitedMs !== 'number' || !(waitedMs >= 0 && waitedMs <= MAX_WAITER_LEFT_MS)))) {
    throw new DedupeStoreError('invalid_waiter', `A waiter's digest must be a non-empty string on one line and its waitedMs a number of ms from 0 to ${MAX_WAITER_LEFT_MS}, got ${JSON.stringify({ digest: String(digest).slice(0, 80), waitedMs: String(waitedMs) })}.`);
  }
}

/** The retry due that a copy of `digest` arriving at `at` can be (see {@link claimSubject}). */
function retryDueOf(retries: RetryDue[] | undefined, digest: string, at: number, minRetryDelayMs: number): RetryDue | undefined {
  let due: RetryDue | undefined;
  for (const retry of retries ?? []) {
    if (retry.digest !== digest || !canBeRetry(retry, at, minRetryDelayMs)) continue;
    if (due === undefined || (due.superseded && !retry.superseded) || (due.superseded === retry.superseded && retry.since < due.since)) due = retry;
  }
  return due;
}

/**
 * The record after `renewClaim(key, token)`: the claim of `token`, still live, lives
 * `claimTtlMs` from `at`; anything else is left as it is (`renewed: false`).
 */
export function renewSubjectClaim(record: SubjectRecord | undefined, token: string, at: number, claimTtlMs: number): { record: SubjectRecord | undefined; renewed: boolean } {
  if (record === undefined || record.state !== 'processing' || record.token !== token || record.expiresAt <= at) return { record, renewed: false };
  return { record: { ...record, expiresAt: Math.max(record.expiresAt, at + claimTtlMs) }, renewed: true };
}

/**
 * The record after `expectRetry(key, digest)`: a delivery of the subject was answered non-2xx
 * without a claim (409: an earlier event of the subject was still being handled), so the
 * service sends its body again. If it was the retry of a retry due, that event counts one more
 * failed attempt, in its place (none is kept after the last attempt). Otherwise it is a newer
 * event, placed after the event in progress and every retry due, and its retry is now due: a
 * newer event processed before that retry supersedes it, an older one does not. A copy of the
 * body in progress (or of the latest processed one) with no other event between them (a
 * duplicate the service sent, reference 6, or a new event with the same state) is kept too, as
 * repeating that state ({@link RetryDue.repeats}): its retry is answered `duplicate` while that
 * state is the latest processed, and `superseded` once a newer event was processed (so is a
 * copy of a retry due's body with nothing between). The delivery's place in line, if it still
 * has one (its receiver did not give it back first), is marked answered, and a delivery whose
 * place lapsed and was converted already (see {@link withLapsedPlaces}) adds nothing.
 *
 * `waiterId` (see `DedupeStore.expectRetry`): the delivery's place, found by its id; it never held
 * a claim. Without it, its place is found by body and arrival (within {@link SAME_ARRIVAL_MS}),
 * which takes a copy that arrived beside it for the same delivery.
 */
export function expectSubjectRetry(before: SubjectRecord | undefined, digest: string, at: number, minRetryDelayMs = 0, receivedAt = at, failedAt = at, replyWindowMs = REPLY_WINDOW_MS, waiterId?: string): SubjectRecord | undefined {
  const stored = withLapsedPlaces(before, at, minRetryDelayMs);
  // A failure told late (a refusal verified once the key came): its retry may have come and been
  // handled already, and recording it now would supersede a later copy of its body, a new event.
  if (failedAt < at && at - failedAt >= minRetryDelayMs) return stored;
  const line = liveList(stored?.line, at);
  let answered: LinePlace[] | undefined;
  if (waiterId === undefined) {
    // The delivery's place is found by its body and arrival (a receiver of the previous version).
    // This delivery's place lapsed and its failure was recorded then: its 409, told after, adds nothing.
    if (line?.some((place) => place.left && isPlaceOf(place, digest, receivedAt))) return stored;
    // Its place, if it still has one (a receiver that did not give it back first), is answered:
    // it will not become a retry due when it lapses.
    answered = line?.map((place) => (!place.left && isPlaceOf(place, digest, receivedAt) ? answeredMark(place) : place));
  } else {
    // The delivery's own place, found by its id: another delivery's place with the same body and
    // arrival (a copy the service sent beside it) is left alone, its failure to be told by itself.
    const own = line?.find((place) => place.id === waiterId);
    // Its place lapsed and its failure was recorded then (or this 409 was told already): nothing to add.
    if (own?.left === true && own.digest !== undefined) return stored;
    // Its place, or the mark it left giving it back, is answered, with its delivery: it will not
    // become a retry due, and the place of a copy that lapses later counts it (withLapsedPlaces).
    // Kept until every such copy's place has lapsed (a receiver waits at most the reply window,
    // and its places live up to 1 s longer), not for the whole retry-due window: a subject's 409s
    // do not pile up in its line.
    answered = own === undefined ? line : line!.map((place) => (place === own ? {
      id: own.id,
      left: true,
      digest: own.digest ?? digest,
      arrivedAt: own.arrivedAt ?? receivedAt,
      dueUntil: own.dueUntil ?? at + retryDueWindow(minRetryDelayMs, replyWindowMs),
      expiresAt: Math.max(own.expiresAt, at + replyWindowMs + 1_000 + SAME_ARRIVAL_MS),
    } : place));
  }
  const marked = answered !== undefined && answered.some((place, index) => place !== line![index]) ? lined(stored!, answered) : stored;
  const record = withoutExpiredClaim(marked, at, minRetryDelayMs, replyWindowMs);
  const live = record !== undefined && record.expiresAt > at;
  const next = withFailedAttempt(record, liveRetries(record, at) ?? [], digest, at, minRetryDelayMs, receivedAt, failedAt, at + retryDueWindow(minRetryDelayMs, replyWindowMs), waiterId !== undefined);
  if (next === undefined) return record;
  const kept = liveList(record?.line, at);
  if (!live) return released(withoutEmpty(next), kept);
  const { retries: _, ...state } = record;
  return lined(next.length === 0 ? state : { ...state, retries: next }, kept);
}

/**
 * `retries` once a delivery of `digest` that arrived at `receivedAt` failed at `failedAt`
 * without a claim (a 409, or a place that lapsed), `record` being the subject's state: if it was
 * the retry of a retry due, that event counts one more failed attempt, in its place (none is
 * kept after the last attempt); otherwise it is a newer event, placed where it arrived, due until
 * `expiresAt` (a copy of the body in progress or of the latest processed one, with no retry due
 * of another event received between the two, flagged {@link RetryDue.repeats}). `undefined`
 * when nothing is added: an arrival whose retry is due already.
 */
function withFailedAttempt(record: SubjectRecord | undefined, retries: RetryDue[], digest: string, at: number, minRetryDelayMs: number, receivedAt: number, failedAt: number, expiresAt: number, unrecorded = false): RetryDue[] | undefined {
  const live = record !== undefined && record.expiresAt > at;
  const due = retryDueOf(retries, digest, receivedAt, minRetryDelayMs);
  if (due !== undefined) {
    const others = retries.filter((retry) => retry !== due);
    return due.failures + 1 < DELIVERY_ATTEMPTS ? [...others, { ...due, failures: due.failures + 1, failedAt }] : others;
  }
  // The same arrival again (a 503's give-back after its claim ran and was released): kept already.
  // Not when the caller knows this delivery's failure is not recorded (`unrecorded`: a delivery
  // known by its place, which never held a claim, or a lapsed place whose copies were counted):
  // a retry due of its body placed at its arrival is then a copy's that arrived in the same ms.
  if (!unrecorded && retries.some((retry) => retry.digest === digest && retry.since === receivedAt)) return undefined;
  // A copy of the claim's body that comes once the claim's own retry could (counting its attempt
  // failed at its arrival, as when a claim expires): that retry, answered without a claim while
  // the claim still held (its process died: the claim holds until it expires). It is one more
  // failed attempt of the claim's event, in its place.
  if (live && isRetryOfClaim(record, digest, receivedAt, minRetryDelayMs)) {
    const failures = (record.failures ?? 0) + 2;
    return failures < DELIVERY_ATTEMPTS ? [...retries, { digest, superseded: false, failures, since: placeOf(record), failedAt, expiresAt: record.dueUntil ?? expiresAt }] : retries;
  }
  // A copy of the body of the subject's latest event received before it (the event in progress
  // or processed, or a retry due placed after it), with no other event of the subject received
  // between the two (a duplicate the service sent, or a new event with the same state): its
  // retry is due all the same, flagged as repeating that state (see RetryDue.repeats). Without
  // it, once a newer event is processed, that retry would be taken for a new event after it and
  // bring the older state back; and two copies answered 409 would both be dispatched, the second
  // as newer than the first. With another event between (a 409 kept as its retry due), it is
  // the user going back to that state: kept like any newer event.
  // Placed where it arrived (after the events placed in that ms before it); received before the
  // processed event (or a copy of it that was a newer event), it is older than it.
  const since = freePlace(receivedAt, live ? record : undefined, retries);
  const state = live && record.state !== 'released' ? record : undefined;
  const repeats = latestEventBefore(state, retries, since)?.digest === digest;
  const superseded = live && record.state === 'processed' && receivedAt < latestArrivalOf(record);
  const added: RetryDue = { digest, superseded, failures: 1, since, failedAt, expiresAt };
  if (repeats) added.repeats = true;
  // Recorded after the event placed next (a later delivery's 409 told before this place
  // lapsed): that event now comes right after this one, so it repeats this one's state if it has
  // its body (a copy), and repeats nothing if not (the user went back to it after this one).
  const next = nextRetryAfter(state, retries, since);
  if (next === undefined || next.superseded || (next.repeats === true) === (next.digest === digest)) return [...retries, added];
  const { repeats: _, ...after } = next;
  const changed: RetryDue = next.digest === digest ? { ...after, repeats: true } : after;
  return [...retries.map((retry) => (retry === next ? changed : retry)), added];
}

/**
 * The retry due of the subject's next event placed after `place`, `undefined` when that event is
 * the live `state`'s or there is none.
 */
function nextRetryAfter(state: SubjectRecord | undefined, retries: readonly RetryDue[], place: number): RetryDue | undefined {
  let next: RetryDue | undefined;
  for (const retry of retries) {
    if (retry.since > place && (next === undefined || retry.since < next.since)) next = retry;
  }
  return next !== undefined && state !== undefined && placeOf(state) > place && placeOf(state) < next.since ? undefined : next;
}

/**
 * The subject's latest event placed before `place`: the live `state`'s, or a retry due's;
 * `undefined` when there is none.
 */
function latestEventBefore(state: SubjectRecord | undefined, retries: readonly RetryDue[], place: number): { readonly digest: string } | undefined {
  let latest: { readonly digest: string; readonly since: number } | undefined = state === undefined || placeOf(state) >= place ? undefined : { digest: state.digest, since: placeOf(state) };
  for (const retry of retries) {
    if (retry.since < place && (latest === undefined || retry.since > latest.since)) latest = retry;
  }
  return latest;
}

/**
 * Whether a copy of `digest` arriving at `receivedAt` can be the retry of `record`'s claim: the
 * claim's body, its delivery not acknowledged early (the service then sends no retry), and the
 * service's wait after the claim's attempt over, counted from the attempt's arrival (the earliest
 * the service could have seen it fail: its connection reset as its process died). A live process
 * answers within the reply window, later than that, so such a copy comes while the claim still
 * holds only when its process died, or its handlers ran past `minRetryDelayMs` (which the
 * receiver's docs advise against). Unknown schedule (`minRetryDelayMs` 0): `false`.
 */
function isRetryOfClaim(record: SubjectRecord, digest: string, receivedAt: number, minRetryDelayMs: number): boolean {
  if (record.state !== 'processing' || record.digest !== digest || record.acknowledgedEarly === true || record.claimedAt === undefined || minRetryDelayMs === 0) return false;
  return receivedAt - record.claimedAt >= minRetryDelayMs * (RETRY_WAIT_FACTORS[record.failures ?? 0] ?? 1);
}

/**
 * Whether `retries` holds a retry due of the event `record` is about (its body, in its place):
 * kept already, from a copy of its body answered while the claim held (see
 * {@link isRetryOfClaim}), so that its claim's expiry or failure adds no second one.
 */
function hasRetryOfEvent(retries: readonly RetryDue[] | undefined, record: SubjectRecord): boolean {
  const place = placeOf(record);
  return retries?.some((retry) => retry.digest === record.digest && retry.since === place) === true;
}

/**
 * `stored` with each place in line that lapsed unanswered turned into what the service will do
 * about it (see {@link SubjectRecord}): its delivery never had a claim nor an answer (its process
 * died while it waited), so the service sends its body again. Every transition that reads the
 * line applies this first, before the lapsed places are dropped, so that no operation on the
 * subject sees the line without them, however late it runs. Such a place, unless its delivery
 * claimed, gave it back or had its 409 recorded (`expectRetry`, which marks it), and while its
 * delivery's retries can still come (`dueUntil`), becomes a retry due as a 409 would
 * ({@link withFailedAttempt}: one more failure of the retry due it was the retry of, or a new
 * event in its place, superseded if the processed event arrived after it), and is kept as a mark
 * until then, so that a 409 of that delivery told after it adds nothing. None is added when a
 * retry due of its body and its arrival is kept already (its 409 recorded before its place
 * could be marked): one that no other place's mark with that body and arrival accounts for (a
 * copy the service sent beside it, whose failure was recorded: each copy keeps its own).
 *
 * When it failed is unknown: between its arrival and its place's lapse. It is counted failed at
 * its arrival, the early side (see {@link attemptFailedAt} on why early is safe). And it is
 * recorded however late this runs, unlike a failure told late to `expectRetry`: its retry cannot
 * have come before, since a retry comes at least `minRetryDelayMs` after the failure, the place
 * lapses within the receiver's wait (at most the reply window) after the arrival, and any call
 * about the subject, that retry's claim included, converts the place first.
 */
export function withLapsedPlaces(stored: SubjectRecord | undefined, at: number, minRetryDelayMs: number): SubjectRecord | undefined {
  const line = stored?.line;
  if (line === undefined || !line.some((place) => lapsedUnanswered(place, at))) return stored;
  let retries = liveRetries(stored, at) ?? [];
  const next: LinePlace[] = [];
  for (const [index, place] of line.entries()) {
    if (place.expiresAt > at) {
      next.push(place);
    } else if (lapsedUnanswered(place, at)) {
      const { digest, arrivedAt, dueUntil } = place;
      // Kept already: a retry due of its body and arrival that no other delivery's recorded
      // failure accounts for (a copy the service sent beside it, answered before, whose mark is
      // counted even once lapsed, or converted above).
      const recorded = retries.filter((retry) => retry.digest === digest && sameArrival(retry.since, arrivedAt)).length;
      const others = line.filter((other, position) => position !== index && (other.left === true || (position < index && lapsedUnanswered(other, at))) && other.digest === digest && other.arrivedAt !== undefined && sameArrival(other.arrivedAt, arrivedAt)).length;
      // Judged as the subject stood when the place lapsed: a claim that has expired since (its
      // process died too) still held the subject then, and a copy of its body repeats it.
      if (recorded <= others) {
        retries = withFailedAttempt(stored, retries, digest, Math.min(at, place.expiresAt), minRetryDelayMs, arrivedAt, arrivedAt, dueUntil, true) ?? retries;
      }
      next.push(answeredMark(place));
    }
  }
  const { retries: _, line: __, ...state } = stored!;
  if (state.state === 'released') return released(withoutEmpty(retries), withoutEmpty(next));
  const record: SubjectRecord = retries.length === 0 ? state : { ...state, retries };
  return lined(record, withoutEmpty(next));
}

/** A place that lapsed while its delivery still waited for an answer, and whose retries can still come (see {@link withLapsedPlaces}). */
function lapsedUnanswered(place: LinePlace, at: number): place is LinePlace & WaitingDelivery {
  return place.expiresAt <= at && place.left !== true && place.digest !== undefined && place.arrivedAt !== undefined && (place.dueUntil ?? 0) > at;
}

/** Whether `place` is that of the delivery of `digest` that arrived at `receivedAt`. */
function isPlaceOf(place: LinePlace, digest: string, receivedAt: number): boolean {
  return place.digest === digest && place.arrivedAt !== undefined && sameArrival(place.arrivedAt, receivedAt);
}

/** The mark of a place whose delivery's failure is recorded: given back, with its delivery, until its retries stop coming. */
function answeredMark(place: LinePlace): LinePlace {
  return { ...place, left: true, expiresAt: Math.max(place.expiresAt, place.dueUntil ?? 0) };
}

/**
 * A retry due of an event received after the processed one (not superseded by it), unless it
 * repeats that event's state ({@link RetryDue.repeats}).
 */
function isNewer(retry: RetryDue, processed: SubjectRecord): boolean {
  return !retry.superseded && retry.since > placeOf(processed) && !(retry.repeats === true && retry.digest === processed.digest);
}

/** The place in the subject's order of the event a record's state is about (see {@link SubjectRecord.since}). */
function placeOf(record: SubjectRecord): number {
  return record.since ?? record.claimedAt ?? 0;
}

/**
 * When the event of a record's state arrived, as far as the record knows: its place, unless that
 * was moved past a place taken in the same ms (see {@link freePlace}), or its claim's arrival.
 */
function arrivalOf(record: SubjectRecord): number {
  return Math.min(placeOf(record), record.claimedAt ?? Number.POSITIVE_INFINITY);
}

/**
 * The latest arrival of the state a processed record holds: that of its event
 * ({@link arrivalOf}), or of a later copy of its body that could not be its retry
 * ({@link SubjectRecord.repeatedAt}). An event of the subject received before it is older.
 */
function latestArrivalOf(record: SubjectRecord): number {
  const arrival = arrivalOf(record);
  return record.repeatedAt !== undefined && record.repeatedAt > arrival ? record.repeatedAt : arrival;
}

/**
 * The place of a new event that arrived at `receivedAt`: that ms, or the first one after it that
 * no event of the subject holds (`state`'s, the retries due') and that the next ms is not held
 * either, so that events that arrive in the same ms keep the order in which the store placed
 * them. An event placed in that ms before this one may have been moved to the next free place,
 * and the place it was moved past be free again (a claim that replaced the processed state and
 * was released forgets that state's place): this one goes after it. (An event that arrived a ms
 * later is taken for such a one: within the ms or two that places are measured to.)
 */
function freePlace(receivedAt: number, state: SubjectRecord | undefined, retries: readonly RetryDue[] | undefined): number {
  const taken = (place: number) => (state !== undefined && placeOf(state) === place) || retries?.some((retry) => retry.since === place) === true;
  let place = receivedAt;
  while (taken(place) || taken(place + 1)) place++;
  return place;
}

/**
 * `record` with a claim that expired (its process died mid-handler, or the store lost its
 * release) turned into what the service will do about it: send the body again. Its event joins
 * the retries due, in its place, counted failed from when its attempt arrived (the service saw it
 * fail between then and the end of its reply window), until its retries stop coming. Without
 * this, the retry would be placed as a new event, after the events received since, and supersede
 * them. A claim whose delivery was acknowledged early leaves no retry due: the service got its
 * 2xx and sends nothing again, and a retry due would take the next copy of its body (a new
 * event bringing that state back) for a late retry. The same record when there is no expired claim.
 */
function withoutExpiredClaim(record: SubjectRecord | undefined, at: number, minRetryDelayMs: number, replyWindowMs: number): SubjectRecord | undefined {
  if (record === undefined || record.state !== 'processing' || record.expiresAt > at) return record;
  const retries = liveRetries(record, at) ?? [];
  if (record.acknowledgedEarly === true) return released(withoutEmpty(retries), liveList(record.line, at));
  const failures = (record.failures ?? 0) + 1;
  const failedAt = record.claimedAt ?? 0;
  const expiresAt = record.dueUntil ?? (record.claimedAt ?? at) + retryDueWindow(minRetryDelayMs, replyWindowMs);
  if (failures < DELIVERY_ATTEMPTS && expiresAt > at && !hasRetryOfEvent(retries, record)) retries.push({ digest: record.digest, superseded: false, failures, since: placeOf(record), failedAt, expiresAt });
  return released(withoutEmpty(retries), liveList(record.line, at));
}

/**
 * A copy of the processed body that comes before the service could retry it (had its answer
 * been lost: the wait after that attempt, counted from when it was received; never after the
 * last attempt) is not its retry: while events received after it still wait for their retries,
 * that copy is a newer event with the same body, and must come after them. (Without such
 * events it changes nothing, and is answered `processed`, as a replay would be.)
 */
function repeatsWhileNewerWait(processed: SubjectRecord, retries: RetryDue[] | undefined, at: number, minRetryDelayMs: number): boolean {
  return soonerThanItsRetry(processed, at, minRetryDelayMs) && retries !== undefined && retries.some((retry) => isNewer(retry, processed));
}

/**
 * Whether a copy of the processed body arriving at `at` comes before the service could retry
 * the processed attempt (the wait after it, counted from its arrival; never after the last
 * attempt). Unknown (no claim time, or no retry schedule: `minRetryDelayMs` 0): `false`.
 */
function soonerThanItsRetry(processed: SubjectRecord, at: number, minRetryDelayMs: number): boolean {
  if (processed.claimedAt === undefined || minRetryDelayMs === 0) return false;
  const attempt = (processed.failures ?? 0) + 1;
  return attempt >= DELIVERY_ATTEMPTS || at - processed.claimedAt < minRetryDelayMs * RETRY_WAIT_FACTORS[attempt - 1]!;
}

/**
 * The record after `markProcessed(key, token, options)`: unchanged when another delivery took the
 * expired claim over. The retries due of events received before this one are now superseded.
 * With `retryExpected` (the handlers outlived the service's reply window, so it counted the
 * attempt failed and sends the body again), the event is also a retry due, in its place, as after
 * a failed handler: while it is the subject's latest, its retry is answered `processed`; once a
 * newer event was processed, `superseded`. Without it that retry would be taken for a new event
 * and bring the older state back. `replyWindowMs`: the service's wait for an answer (the store's
 * option), from whose end a retry's wait counts when the attempt outlived it.
 */
export function markSubjectProcessed(before: SubjectRecord | undefined, key: string, token: string, at: number, ttlMs: number, minRetryDelayMs = 0, options?: MarkProcessedOptions, replyWindowMs = REPLY_WINDOW_MS): SubjectRecord {
  const stored = withLapsedPlaces(before, at, minRetryDelayMs);
  if (stored !== undefined && stored.token !== token && stored.expiresAt > at) return stored;
  // Another delivery's claim that expired: its event's retry is due (not this one's own claim,
  // which this settles).
  const record = stored?.token === token ? stored : withoutExpiredClaim(stored, at, minRetryDelayMs, replyWindowMs);
  const digest = digestOfToken(token, key);
  const live = liveRetries(record, at);
  // Without its claim's place (the claim expired, and another delivery may have taken the
  // subject since), it supersedes nothing: the events received meanwhile may be newer. It is
  // then placed after them, so that none counts as newer than it.
  const mine = record?.token === token;
  const since = mine ? placeOf(record) : Number.NEGATIVE_INFINITY;
  const place = mine ? since : 1 + Math.max(0, ...(live ?? []).map((retry) => retry.since));
  // Zeros are left out: most subjects keep a processed record alone, held in memory by the
  // memory store (a property added later costs a V8 object more than one in its literal).
  const processed: SubjectRecord = { state: 'processed', token, digest, expiresAt: at + ttlMs, claimedAt: mine ? record.claimedAt : undefined };
  if (place !== 0 && place !== processed.claimedAt) processed.since = place;
  if (mine && record.failures) processed.failures = record.failures;
  // The retries due of events received before this one are superseded (an older event with
  // this same body included: it must not bring the state back after a newer event). Those of
  // events received after it stay due, and are dispatched in their place.
  let retries = withoutEmpty(live?.map((retry) => (retry.superseded || retry.since >= since ? retry : { ...retry, superseded: true })));
  if (mine && options?.retryExpected === true) retries = withRetryDue(retries, record, at, minRetryDelayMs, replyWindowMs, sentMsAgoOf(options));
  if (retries !== undefined) processed.retries = retries;
  const line = liveList(record?.line, at);
  if (line !== undefined) processed.line = line;
  return processed;
}

/**
 * The record after `release(key, token, options)`: unchanged when the claim is no longer this
 * token's; otherwise no processed record (see {@link SubjectRecord}), and the body among the
 * retries due when the service will send it again. `replyWindowMs`: see {@link markSubjectProcessed}.
 */
export function releaseSubject(before: SubjectRecord | undefined, token: string, at: number, options?: ReleaseOptions, minRetryDelayMs = 0, replyWindowMs = REPLY_WINDOW_MS): SubjectRecord | undefined {
  const record = withLapsedPlaces(before, at, minRetryDelayMs);
  if (record?.token !== token) return record;
  const retries = liveRetries(record, at);
  return released(options?.retryExpected === true ? withRetryDue(retries, record, at, minRetryDelayMs, replyWindowMs, sentMsAgoOf(options)) : retries, liveList(record.line, at));
}

/**
 * `retries` and the retry due of the claim `record` settles at `at` (its handler failed, or
 * outlived the service's reply window): one more failed attempt, in its event's place, counted
 * from when the service saw it fail (see {@link attemptFailedAt}), until its retries stop coming;
 * none after the service's last attempt.
 */
function withRetryDue(retries: RetryDue[] | undefined, record: SubjectRecord, at: number, minRetryDelayMs: number, replyWindowMs: number, sentMsAgo?: number): RetryDue[] | undefined {
  const failures = (record.failures ?? 0) + 1;
  if (failures >= DELIVERY_ATTEMPTS || hasRetryOfEvent(retries, record)) return retries;
  const due: RetryDue = { digest: record.digest, superseded: false, failures, since: placeOf(record), failedAt: attemptFailedAt(record.claimedAt ?? at, at, replyWindowMs, sentMsAgo), expiresAt: record.dueUntil ?? at + retryDueWindow(minRetryDelayMs, replyWindowMs) };
  return [...(retries ?? []), due];
}

/**
 * When the service saw an attempt that arrived at `claimedAt` fail, for a claim settled at `at`
 * (released, or marked processed past the window): now (a 500), or the end of the service's
 * reply window (`replyWindowMs`) if the handlers outlived it. That window starts when the
 * service SENT the attempt, earlier than its arrival by the network's latency; counted from the
 * arrival, the failure would be placed that much late, and the retry, which comes on schedule
 * (`minRetryDelayMs` after the service's own failure, plus the retry's latency), would arrive
 * before its wait seemed over: it would be taken for a newer event with the same body, handled
 * after the events received since, and bring the older state back over them. So the window is
 * anchored on the send time: `sentMsAgo` (the receiver's estimate, from the signature's
 * timestamp: whole seconds rounded down, so never late) when given, kept between `replyWindowMs`
 * before the arrival (an attempt sent earlier had failed before it arrived) and the arrival.
 *
 * Why early rather than late: a failure placed too early lets a copy of the body that comes
 * sooner than the retry could (a newer event repeating that state) be taken for the retry, in
 * the older event's place. If a newer event was processed meanwhile that copy is answered
 * `superseded`, but the retry due it took is then gone, so the real retry, which still comes,
 * is handled as the newer event it stands for, in its own place: the subject ends in the right
 * state. A failure placed too late loses the newer event for good: the real retry is
 * dispatched over it, and the newer event's own retry is then answered `superseded`.
 */
export function attemptFailedAt(claimedAt: number, at: number, replyWindowMs: number, sentMsAgo: number | undefined): number {
  const sentAt = typeof sentMsAgo === 'number' && sentMsAgo > 0 ? Math.min(claimedAt, Math.max(claimedAt - replyWindowMs, at - sentMsAgo)) : claimedAt;
  return Math.min(at, sentAt + replyWindowMs);
}

/**
 * When the record may be deleted: its state, every retry due and every place in line have
 * expired, and no place that lapses could still become a retry due.
 */
export function recordExpiry(record: SubjectRecord): number {
  // A claim that expires becomes a retry due (see withoutExpiredClaim) until `dueUntil`.
  let expiresAt = record.state === 'processing' ? Math.max(record.expiresAt, record.dueUntil ?? 0) : record.expiresAt;
  for (const retry of record.retries ?? []) expiresAt = Math.max(expiresAt, retry.expiresAt);
  // So does a place that lapses unanswered (see withLapsedPlaces), until its own `dueUntil`.
  for (const place of record.line ?? []) expiresAt = Math.max(expiresAt, place.expiresAt, place.left || place.digest === undefined ? 0 : place.dueUntil ?? 0);
  return expiresAt;
}

/** No event in progress or processed: the retries due and the line, if any. */
function released(retries: RetryDue[] | undefined, line: LinePlace[] | undefined): SubjectRecord | undefined {
  if (retries === undefined && line === undefined) return undefined;
  const record: SubjectRecord = { state: 'released', token: '', digest: '', expiresAt: 0 };
  if (retries !== undefined) record.retries = retries;
  if (line !== undefined) record.line = line;
  return record;
}

/** `record` with `line` as its line (none: without one). */
function lined(record: SubjectRecord, line: LinePlace[] | undefined): SubjectRecord {
  if (record.line === line) return record;
  if (line !== undefined) return { ...record, line };
  const { line: _, ...rest } = record;
  return rest;
}

function liveRetries(record: SubjectRecord | undefined, at: number): RetryDue[] | undefined {
  return liveList(record?.retries, at);
}

/** The entries of `list` that have not expired at `at` (none: `undefined`). */
function liveList<T extends { expiresAt: number }>(list: T[] | undefined, at: number): T[] | undefined {
  if (list === undefined) return undefined;
  return withoutEmpty(list.every((entry) => entry.expiresAt > at) ? list : list.filter((entry) => entry.expiresAt > at));
}

function withoutEmpty<T>(list: T[] | undefined): T[] | undefined {
  return list === undefined || list.length === 0 ? undefined : list;
}

/** Tokens are `<id>:<digest>`: markProcessed learns the digest even after the record was evicted. */
function digestOfToken(token: string, key: string): string {
  const at = token.indexOf(':');
  return at === -1 ? key : token.slice(at + 1);
}
