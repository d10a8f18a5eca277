import type { DedupeClaim } from '../dedupe/dedupe-store.js';
import type { WebhookDelivery } from '../receiver-types.js';
import { fromStore, type Answer, type MaybePromise, type PipelineContext } from './context.js';
import type { InLine } from './subject-lines.js';

/** The subject this delivery holds in the deduplication store, until it is settled. */
export interface SubjectClaim {
  readonly subject: string;
  /** `''` without a store. */
  readonly token: string;
}

/** First and longest pause before the first in line tries the claim again, in ms. */
const FIRST_PAUSE_MS = 10;
const MAX_PAUSE_MS = 250;

/**
 * Stage 4, claim: take the subject in the deduplication store, or learn that this body is its
 * latest processed event (200 `duplicate`) or the retry of a failed event that a newer one of
 * its subject has overtaken (200 `superseded`). While another delivery holds the subject, this one
 * waits in the subject's line, in arrival order, up to `subjectWaitMs`: in this process's line
 * (see subject-lines.ts), where the first tries the claim again when the holder in this process
 * settles, or after a pause (10 ms, doubling up to 250 ms) for a holder in another process; and
 * in the store's line (see `waiter` in DedupeStore.claim), which gives the subject to the
 * deliveries of every process in the order they first asked. Still waiting then: 409, and the
 * service retries later. A store that fails is answered 503 (fail closed: nothing is dispatched
 * without a claim).
 */
export function claimSubject(context: PipelineContext, subject: string, delivery: WebhookDelivery, retryExpected: boolean): MaybePromise<SubjectClaim | Answer> {
  const { dedupe } = context;
  if (dedupe === undefined) return { subject, token: '' };
  const storeFailed = (error: unknown): Answer => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: false });
    return { outcome: 'dedupe_store_unavailable' };
  };
  // The delivery's place in the store's line, should it wait (none when it would not wait).
  const arrivedAt = Date.now();
  const waiter = context.subjectWaitMs === 0 ? undefined : context.lines.waiter(context.subjectWaitMs);
  const claim = (waitedMs?: number) => dedupe.claim(subject, delivery.bodySha256, waitedMs,
    waiter === undefined || waitedMs === undefined ? waiter : { id: waiter.id, leftMs: waiter.leftMs - waitedMs });
  // Deliveries already waiting for the subject in this process came first: join them, in the
  // store's line too, rather than claim ahead.
  if (context.lines.has(subject)) {
    const joined = waiter === undefined || dedupe.joinLine === undefined ? undefined : () => dedupe.joinLine!(subject, waiter);
    return waitInLine(context, subject, delivery, retryExpected, arrivedAt, claim, storeFailed, joined);
  }
  return fromStore(claim, (answer) => (answer.state === 'processing' ? waitInLine(context, subject, delivery, retryExpected, arrivedAt, claim, storeFailed) : claimOf(subject, answer)), storeFailed);
}

/**
 * The 409 of a delivery that waited too long for its subject. The service sends it again
 * (not a replay): the store keeps its retry due, in its event's place, so that a newer event
 * processed before that retry supersedes it. A store that fails here is reported; the answer is
 * 409 all the same.
 */
function inProgress(context: PipelineContext, subject: string, delivery: WebhookDelivery, retryExpected: boolean, waitedMs: number): MaybePromise<Answer> {
  const answer: Answer = { outcome: 'duplicate_in_progress' };
  const { dedupe } = context;
  if (!retryExpected || dedupe?.expectRetry === undefined) return answer;
  return fromStore(() => dedupe.expectRetry!(subject, delivery.bodySha256, waitedMs), () => answer, (error) => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: false });
    return answer;
  });
}

function claimOf(subject: string, answer: DedupeClaim): SubjectClaim | Answer {
  if (answer.state === 'claimed') return { subject, token: answer.token };
  return { outcome: answer.state === 'superseded' ? 'superseded' : 'duplicate' };
}

function waitInLine(
  context: PipelineContext,
  subject: string,
  delivery: WebhookDelivery,
  retryExpected: boolean,
  arrivedAt: number,
  claim: (waitedMs?: number) => DedupeClaim | Promise<DedupeClaim>,
  storeFailed: (error: unknown) => Answer,
  joinStoreLine?: () => void | Promise<void>,
): MaybePromise<SubjectClaim | Answer> {
  const tooLong = () => inProgress(context, subject, delivery, retryExpected, Date.now() - arrivedAt);
  if (context.subjectWaitMs === 0) return tooLong();
  // Claims after a wait tell the store how long the delivery waited: whether it can be a retry
  // is judged by when it arrived.
  return waitForClaim(context.lines.join(subject), arrivedAt + context.subjectWaitMs, subject, () => claim(Date.now() - arrivedAt), storeFailed, tooLong, joinStoreLine);
}

/** In line until `deadline` (`Date.now()` ms): the first in line tries the claim when woken or after its pause. */
async function waitForClaim(
  place: InLine,
  deadline: number,
  subject: string,
  claim: () => DedupeClaim | Promise<DedupeClaim>,
  storeFailed: (error: unknown) => Answer,
  tooLong: () => MaybePromise<Answer>,
  joinStoreLine: (() => void | Promise<void>) | undefined,
): Promise<SubjectClaim | Answer> {
  if (joinStoreLine !== undefined) {
    try {
      await joinStoreLine();
    } catch (error) {
      place.leave(false);
      return storeFailed(error);
    }
  }
  let pauseMs = FIRST_PAUSE_MS;
  for (;;) {
    const leftMs = deadline - Date.now();
    if (leftMs <= 0) {
      place.leave(false);
      return tooLong();
    }
    await place.pause(place.first() ? Math.min(pauseMs, leftMs) : leftMs);
    if (!place.first()) continue;
    pauseMs = Math.min(2 * pauseMs, MAX_PAUSE_MS);
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
