import type { ClaimOptions, DedupeClaim, SubjectWaiter } from '../dedupe/dedupe-store.js';
import { WebhookReceiverError } from '../errors.js';
import type { WebhookDelivery } from '../receiver-types.js';
import { fromStore, type Answer, type MaybePromise, type PipelineContext } from './context.js';
import { maxSubjectWaitMs } from './reply-window.js';
import type { InLine } from './subject-lines.js';

/** How a delivery that got no claim is answered; a store failure may leave work for after the reply. */
export interface ClaimAnswer extends Answer {
  readonly afterReply?: Promise<void>;
}

/** The subject this delivery holds in the deduplication store, until it is settled. */
export interface SubjectClaim {
  readonly subject: string;
  /** `''` without a store. */
  readonly token: string;
  /** The event's place, when the store says it is not the delivery's arrival (see {@link DedupeClaim}'s `place`). */
  readonly place?: number;
}

/** First and longest pause before the first in line tries the claim again, in ms. */
const FIRST_PAUSE_MS = 10;
const MAX_PAUSE_MS = 250;

const ACKNOWLEDGED_EARLY: ClaimOptions = Object.freeze({ acknowledgedEarly: true });

/**
 * Stage 4, claim: take the subject in the deduplication store, or learn that this body is its
 * latest processed event (200 `duplicate`) or the retry of a failed event that a newer one of
 * its subject has overtaken (200 `superseded`). While another delivery holds the subject, this one
 * waits in the subject's line, in arrival order, up to `subjectWaitMs`: in this process's line
 * (see subject-lines.ts), where the first tries the claim again when the holder in this process
 * settles, or after a pause (10 ms, doubling up to 250 ms) for a holder in another process, or
 * when the store wakes it (DedupeStore.watchLines: the Redis store with a subscriber); and
 * in the store's line (see `waiter` in DedupeStore.claim), which gives the subject to the
 * deliveries of every process in the order they first asked. Still waiting then: 409, and the
 * service retries later. A store that fails is answered 503 (fail closed: nothing is dispatched
 * without a claim).
 *
 * `acknowledgedEarly`: once claimed, the delivery is answered 202 before its handlers run, so
 * the store keeps no retry due should its claim expire (see {@link ClaimOptions}). Told at the
 * claim, not in a call of its own before the 202: that would cost every early delivery another
 * round trip to the store before its reply. The price is a short window, from the claim to the
 * 202 being written (and a dead-letter store's `in_flight` write in between), in which a process
 * that dies leaves the service to retry a body for which no retry is due: that retry is then
 * claimed as a new event, in its own place, and dispatched. Dispatched, even after a newer
 * event, rather than the opposite risk, which the store would otherwise run for the whole life
 * of every early delivery's handlers: a new event with that body answered `superseded` and lost.
 *
 * `tieIsOlder`: a replay of a dead letter its event's claim kept (see
 * `DeliveryMode.placedByItsClaim` in receive.ts), placed 1 ms before its arrival. The store moves an event
 * placed after another in the same millisecond past it, so an event that ties with this one came
 * after it; but a claim released without a retry due (its handlers failed after an early 202)
 * leaves the store no trace of its place, and the later event then takes the same millisecond.
 */
export function claimSubject(context: PipelineContext, subject: string, delivery: WebhookDelivery, retryExpected: boolean, acknowledgedEarly = false, tieIsOlder = false): MaybePromise<SubjectClaim | ClaimAnswer> {
  const { dedupe } = context;
  if (dedupe === undefined) return { subject, token: '' };
  // The delivery's place in the store's line, should it wait (none when it would not wait).
  const arrivedAt = Date.now();
  const waiter = context.subjectWaitMs === 0 ? undefined : context.lines.waiter(context.subjectWaitMs + lapseGraceMs(context.subjectWaitMs));
  const storeFailed = (error: unknown): ClaimAnswer => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, subject, afterReply: false });
    // After the reply (a Worker keeps it alive with waitUntil), best effort, in this order on the
    // store's connection, behind the failed call (which may still run once the store is back):
    // - the failed call may have taken a place in line (it ran, its answer was lost) or run
    //   later: give the place back, and mark it given back, so that it does not hold the subject up;
    // - the service sends this body again (503): keep its retry due in its place (expectRetry, as
    //   for a 409). Its late claim may have found the subject held by another late claim, and
    //   recorded nothing: the retry would then be taken for a new event, placed after the events
    //   that arrived after it, and supersede them. (A claim that ran and was released already
    //   keeps it: the store adds nothing for the same arrival. So its place is not named, as a
    //   409's is: the store finds it by body and arrival.)
    const afterReply: Array<() => unknown> = [];
    if (waiter !== undefined && dedupe.leaveLine !== undefined) {
      const leftMs = Math.max(1, waiter.leftMs - (Date.now() - arrivedAt));
      afterReply.push(() => dedupe.leaveLine!(subject, { id: waiter.id, leftMs }));
    }
    if (retryExpected && dedupe.expectRetry !== undefined) {
      const waitedMs = sinceReceived(delivery, Date.now());
      afterReply.push(() => dedupe.expectRetry!(subject, delivery.bodySha256, waitedMs));
    }
    if (afterReply.length === 0) return { outcome: 'dedupe_store_unavailable' };
    // Each call is sent at once (a client queues them in order); none waits for another's answer.
    const sent = afterReply.map((call) => {
      try {
        return Promise.resolve(call()).then(() => undefined, () => undefined);
      } catch {
        return undefined; // the store is down: a place lapses by itself
      }
    });
    return { outcome: 'dedupe_store_unavailable', afterReply: Promise.all(sent).then(() => undefined) };
  };
  // The store places the event where it reached this receiver (before its body was read, its
  // key fetched and its wait in line): claims that run late keep the order of arrival.
  const claim = (lineWaitMs?: number) => {
    // A replay whose event its claim placed: 1 ms earlier, so that an event of the subject that
    // shares its millisecond (on Workers, Date.now() advances only between I/O, and events a few
    // ms apart often do), which came after it, supersedes it instead of tying with it.
    const waitedMs = sinceReceived(delivery, arrivedAt + (lineWaitMs ?? 0)) + (tieIsOlder ? 1 : 0);
    // (A claim sent as the wait ends may find less than 1 ms left.)
    const place = waiter === undefined || lineWaitMs === undefined ? waiter : { id: waiter.id, leftMs: Math.max(1, waiter.leftMs - lineWaitMs) };
    // Options only when they say something: a store written before them sees the call it knew.
    return acknowledgedEarly ? dedupe.claim(subject, delivery.bodySha256, waitedMs, place, ACKNOWLEDGED_EARLY) : dedupe.claim(subject, delivery.bodySha256, waitedMs, place);
  };
  // Deliveries already waiting for the subject in this process came first: join them rather
  // than claim ahead. With a store that keeps lines, take the store's place first and this
  // process's place when the store has answered: a claim sent before (its answer not back yet)
  // is ahead in the store's line, and must be ahead here too.
  // The store is told the delivery's body and arrival with its place (a claim tells them
  // itself), so that the place, should it lapse unanswered (this process dies), becomes a retry
  // due: the service sends the body again. (Not for a replay, which the service does not send.)
  if (context.lines.has(subject)) {
    if (waiter === undefined || dedupe.joinLine === undefined) return waitInLine(context, subject, delivery, retryExpected, arrivedAt, claim, storeFailed, waiter);
    const place: SubjectWaiter = retryExpected ? { ...waiter, digest: delivery.bodySha256, waitedMs: sinceReceived(delivery, arrivedAt) } : waiter;
    return fromStore(() => dedupe.joinLine!(subject, place), () => waitInLine(context, subject, delivery, retryExpected, arrivedAt, claim, storeFailed, waiter), storeFailed);
  }
  return fromStore(claim, (answer) => (answer.state === 'processing' ? waitInLine(context, subject, delivery, retryExpected, arrivedAt, claim, storeFailed, waiter) : claimOf(subject, answer)), storeFailed);
}

/**
 * The 409 of a delivery that waited too long for its subject. The service sends it again
 * (not a replay): the store keeps its retry due, in its event's place, so that a newer event
 * processed before that retry supersedes it. A store that fails here is reported; the answer is
 * 409 all the same. After a wait (`subjectWaitMs` above 0), `onError` hears of it: the
 * partner's handlers outlast the wait, and the event comes late.
 *
 * The delivery's place in the store's line (`waiter`) is given back first (`leaveLine`), then
 * the retry recorded (`expectRetry`), one after the other and before the reply: a place that
 * lapses unanswered becomes a retry due by itself (its process died), and a place given back is
 * not one, so the store records one retry due for this delivery, not two. (Should the place
 * lapse just before its give-back runs, the store converts it and the `expectRetry` after adds
 * nothing.) Before the reply, not after it: on Workers, work after the reply lives only as long
 * as `waitUntil` keeps it, and an `expectRetry` lost there would leave no retry due but the
 * lapsed place's, failed at the arrival rather than at the 409. It costs a 409 one round trip to
 * the store more.
 */
function inProgress(context: PipelineContext, subject: string, delivery: WebhookDelivery, retryExpected: boolean, waitedMs: number, waiter: SubjectWaiter | undefined): MaybePromise<Answer> {
  const answer: Answer = { outcome: 'duplicate_in_progress' };
  if (context.subjectWaitMs > 0) {
    context.report(new WebhookReceiverError('subject_wait_exceeded',
      `A delivery of ${subject} waited ${Math.round(waitedMs)} ms (subjectWaitMs ${context.subjectWaitMs}) while an earlier event of its subject was still being handled, and was answered 409: ${retryExpected ? 'the service sends it again in 1, 5 or 15 minutes' : 'a replay, it stays in the dead-letter store for the next replay()'}. A delivery waits for every earlier handler of its subject in turn: keep their sum well under subjectWaitMs, or raise it (at most ${maxSubjectWaitMs(context.replyWindowMs)}). If no handler of the subject was running, a process that held it died mid-handler (a deploy, a crash): its claim holds the subject until claimTtlMs has passed, and its event is then retried in its place; let servers finish their requests on SIGTERM.`),
    { outcome: 'duplicate_in_progress', delivery, subject, afterReply: false });
  }
  const { dedupe } = context;
  const expectRetry = (): MaybePromise<Answer> => {
    if (!retryExpected || dedupe?.expectRetry === undefined) return answer;
    // Its place named (it never held a claim: every claim was answered `processing`), so that a
    // copy of its body that arrived beside it keeps its own place and its own retry due.
    return fromStore(() => dedupe.expectRetry!(subject, delivery.bodySha256, sinceReceived(delivery, Date.now()), 0, waiter?.id), () => answer, (error) => {
      context.report(error, { outcome: 'dedupe_store_unavailable', delivery, subject, afterReply: false });
      return answer;
    });
  };
  if (waiter === undefined || dedupe?.leaveLine === undefined) return expectRetry();
  // Best effort: a place that is not given back lapses by itself, and the store records its
  // retry once (see above); the retry's expectRetry is sent all the same.
  return fromStore(() => dedupe.leaveLine!(subject, { id: waiter.id, leftMs: 1 }), expectRetry, expectRetry);
}

/**
 * How much longer than its delivery's own wait (`subjectWaitMs`) a place in the store's line
 * lives. The receiver answers 409 when the wait ends and gives the place back at once, one round
 * trip to the store later; a place that lapsed first is converted as if its process had died, by
 * body and arrival, which can take the retry due of a copy that arrived beside it (kept by that
 * copy's failed claim) for its own, and keep one retry due for the two (a partner trial: 4 users in
 * 33 runs). A quarter of the wait, at most 1 s: a dead process's places hold the subject up that
 * much longer in the other processes.
 */
function lapseGraceMs(subjectWaitMs: number): number {
  return Math.min(1_000, Math.ceil(subjectWaitMs / 4));
}

/** Ms from when `delivery` reached the receiver to `at` (see {@link DedupeStore.claim}'s `waitedMs`). */
function sinceReceived(delivery: WebhookDelivery, at: number): number {
  return Math.max(0, at - delivery.receivedAt);
}

function claimOf(subject: string, answer: DedupeClaim): SubjectClaim | Answer {
  if (answer.state === 'claimed') {
    const { place } = answer;
    return typeof place === 'number' && Number.isFinite(place) ? { subject, token: answer.token, place } : { subject, token: answer.token };
  }
  return { outcome: answer.state === 'superseded' ? 'superseded' : 'duplicate' };
}

function waitInLine(
  context: PipelineContext,
  subject: string,
  delivery: WebhookDelivery,
  retryExpected: boolean,
  arrivedAt: number,
  claim: (waitedMs?: number) => DedupeClaim | Promise<DedupeClaim>,
  storeFailed: (error: unknown) => ClaimAnswer,
  waiter: SubjectWaiter | undefined,
): MaybePromise<SubjectClaim | ClaimAnswer> {
  const tooLong = () => inProgress(context, subject, delivery, retryExpected, Date.now() - arrivedAt, waiter);
  if (context.subjectWaitMs === 0) return tooLong();
  // Claims after a wait tell the store how long the delivery waited: whether it can be a retry
  // is judged by when it arrived.
  const storeKeepsLine = context.dedupe?.joinLine !== undefined;
  return waitForClaim(context.lines.join(subject, waiter?.id), arrivedAt + context.subjectWaitMs, subject, () => claim(Date.now() - arrivedAt), storeFailed, tooLong, storeKeepsLine);
}

/**
 * In line until `deadline` (`Date.now()` ms): the first in line tries the claim when woken or
 * after its pause. With a store that keeps lines (`storeKeepsLine`), the others try too, every
 * {@link MAX_PAUSE_MS}: the store's line decides, and should this process's order differ from it
 * (answers that come back out of order, from a Durable Object or an HTTP Redis API), the
 * store's first still gets its turn.
 */
async function waitForClaim(
  place: InLine,
  deadline: number,
  subject: string,
  claim: () => DedupeClaim | Promise<DedupeClaim>,
  storeFailed: (error: unknown) => ClaimAnswer,
  tooLong: () => MaybePromise<Answer>,
  storeKeepsLine: boolean,
): Promise<SubjectClaim | ClaimAnswer> {
  let pauseMs = FIRST_PAUSE_MS;
  for (;;) {
    const leftMs = deadline - Date.now();
    if (leftMs <= 0) {
      place.leave(false);
      return tooLong();
    }
    const first = place.first();
    await place.pause(Math.min(first ? pauseMs : storeKeepsLine ? MAX_PAUSE_MS : leftMs, leftMs));
    if (place.first()) pauseMs = first ? Math.min(2 * pauseMs, MAX_PAUSE_MS) : FIRST_PAUSE_MS;
    else if (!storeKeepsLine) continue;
    let answer: DedupeClaim;
    try {
      answer = await claim();
    } catch (error) {
      place.leave(false);
      return storeFailed(error);
    }
    if (answer.state !== 'processing') {
      place.leave(answer.state === 'claimed');
      return claimOf(subject, answer);
    }
  }
}
