import type { WebhookEvent } from '@capi/event-types';
import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';
import type { SubjectClaim } from './claim.js';
import { fromStore, isPromiseLike, type MaybePromise, type PipelineContext } from './context.js';
import { DEFAULT_CLAIM_TTL_MS } from '../dedupe/dedupe-store.js';
import { unrefTimer } from '../unref-timer.js';

/**
 * Stage 6, settle, after the handlers succeeded: the subject's latest processed event is now
 * this body. The delivery is answered 2xx all the same when the store fails here (the work is
 * done); onError is told, in words that say how the delivery was answered (the store's own
 * error, worded for a failed claim, says "answered 503": it becomes the cause), and a later copy
 * of the body may then be processed again (at-least-once while the store is down). A store that
 * answers that the claim was no longer this delivery's is reported too (`claim_lost`).
 * `answered`: the outcome the delivery gets, `processed` or `unknown_event_type`;
 * `retryExpected`: it is answered after the service's window (see reply-window.ts), which sends
 * the body again, so the store keeps that retry due.
 */
export function markProcessed(context: PipelineContext, claim: SubjectClaim, delivery: WebhookDelivery, settlement: Settlement, answered: 'processed' | 'unknown_event_type', retryExpected = false): MaybePromise<void> {
  const options = retryExpected ? { retryExpected, sentMsAgo: sentMsAgo(delivery) } : undefined;
  const mark = () => (options !== undefined ? context.dedupe?.markProcessed(claim.subject, claim.token, options) : context.dedupe?.markProcessed(claim.subject, claim.token));
  return settleInStore(context, claim, delivery, true, mark,
    (error) => {
      // Tried again after the reply (see keepTrying): answered 2xx, the delivery must not
      // leave a claim whose expiry reads as an attempt that failed.
      keepTrying(context, mark);
      return notMarkedProcessed(claim, delivery, settlement, answered, error);
    },
    (owned) => {
      if (owned === false) context.report(claimLost(claim, settlement), { outcome: settlement.afterReply ? 'acknowledged' : answered, delivery, subject: claim.subject, afterReply: settlement.afterReply });
    });
}

/** First and longest pause of {@link keepTrying}, in ms. */
const FIRST_SETTLE_RETRY_MS = 100;
const MAX_SETTLE_RETRY_MS = 2_000;
/** How many times the store's `claimTtlMs` {@link keepTrying} goes on for, at most (as long as a running handler's claim is renewed). */
const SETTLE_RETRY_CLAIM_TTLS = 10;

/**
 * A settlement that the store failed, tried again in the background until the store answers
 * (every 100 ms, doubling up to 2 s, for at most ten times its `claimTtlMs`, 20 minutes by
 * default): the delivery's claim token still holds the subject, so the settlement lands where
 * the first one would have, if the store comes back before another delivery of the subject has
 * found the claim expired. Otherwise a claim left in the store (a Redis restart with AOF kept it)
 * would expire into a retry due of its body, in its event's place, though the service had its
 * 2xx and sends nothing again: a genuine later event that repeats that body (the user went back
 * to that state after a newer one) would be taken for that retry and answered `superseded`. A
 * settlement that runs late finds the claim no longer its own and changes nothing, or (no state
 * left in the store) records what the first would have. Best effort: a timer that does not hold
 * the process (a graceful stop does not wait for it), and nothing more is reported.
 */
function keepTrying(context: PipelineContext, settle: () => unknown): void {
  const given = context.dedupe?.claimTtlMs;
  const claimTtlMs = typeof given === 'number' && Number.isFinite(given) && given > 0 ? given : DEFAULT_CLAIM_TTL_MS;
  const giveUpAt = Date.now() + SETTLE_RETRY_CLAIM_TTLS * claimTtlMs;
  const attempt = (pauseMs: number): void => {
    const timer = setTimeout(() => {
      let answered: Promise<unknown>;
      try {
        answered = Promise.resolve(settle());
      } catch (error) {
        answered = Promise.reject(error);
      }
      answered.then(undefined, () => {
        const next = Math.min(2 * pauseMs, MAX_SETTLE_RETRY_MS);
        if (Date.now() + next < giveUpAt) attempt(next);
      });
    }, pauseMs);
    unrefTimer(timer);
  };
  attempt(FIRST_SETTLE_RETRY_MS);
}

/**
 * The store no longer held this delivery's claim when its handlers finished: it expired
 * (`claimTtlMs`) and another delivery took the subject, or the store lost it (a Redis restart or
 * failover without persistence). Another event of the subject may then have been handled
 * meanwhile, concurrently with these handlers, and whichever wrote last is in the partner's data.
 */
function claimLost(claim: SubjectClaim, settlement: Settlement): WebhookReceiverError {
  return new WebhookReceiverError('claim_lost',
    `The handlers of ${claim.subject} finished${settlement.afterReply ? ' (after an early 202, acknowledgeEarly)' : ''}, but the deduplication store no longer held this delivery's claim: ` +
    'it expired (claimTtlMs, 2 minutes by default) and another delivery took the subject, or the store lost it (a Redis restart or failover without persistence). ' +
    `Another event of ${claim.subject} may have been handled meanwhile, at the same time as these handlers, and your data holds whichever wrote last: check it against the API. ` +
    'The stores of this package (memory, Redis, Durable Object, transactional) renew the claims of running handlers, so with them this means at least two renewals in a row failed (the store unreachable, or the event loop blocked, for about half of claimTtlMs), the handlers ran longer than ten times claimTtlMs, or the store lost its data; with a store of your own without renewClaim, keep claimTtlMs above your longest handlers (acknowledgeEarly ones included). Keep the store\'s data through restarts (Redis appendonly, a failover that keeps writes).');
}

/**
 * What a failed `markProcessed` means for this delivery, where it failed: before the reply,
 * after an early 202 (`acknowledgeEarly`), or in a replay. The store's error is the cause, and
 * its code is kept.
 */
function notMarkedProcessed(claim: SubjectClaim, delivery: WebhookDelivery, settlement: Settlement, answered: 'processed' | 'unknown_event_type', cause: unknown): DedupeStoreError {
  const unknownType = answered === 'unknown_event_type';
  const what = unknownType ? `The event of a type this SDK does not know (body SHA-256 ${delivery.bodySha256}) was handled` : `The handlers of ${claim.subject} succeeded`;
  const failed = 'but the deduplication store could not record it as processed (the store\'s error is the cause)';
  const lingers = `The receiver tries again to record it in the background, until the store answers (for at most ten times claimTtlMs). The store may meanwhile still hold the subject's claim until it expires (claimTtlMs, 2 minutes by default): later deliveries of ${unknownType ? 'this body' : 'the subject'} wait, and may be answered 409 and retried later.`;
  let answer: string;
  if (settlement.replay) {
    answer = `${what} in receiver.replay(), ${failed}. The replay reports it ${answered} and deletes its dead-letter entry all the same (no service waits for a reply). ` +
      `${lingers} Unless that try lands first, a copy of this body that comes later is dispatched again once the claim has expired, not answered duplicate.`;
  } else if (settlement.afterReply) {
    answer = `${what} after the delivery was answered 202 acknowledged (acknowledgeEarly), ${failed}. The service has its 202 and does not send this body again; nothing is lost. ` +
      `${lingers} Should a copy of this body come all the same before that try lands, it is dispatched again once the claim has expired, not answered duplicate.`;
  } else {
    answer = `${what}, ${failed}. The delivery is answered 200 ${answered} all the same (the work is done), and the service does not send it again. ` +
      `${lingers} Should the service send this body again anyway (the 200 was lost, or came after its reply window) before that try lands, that retry is dispatched again once the claim has expired, not answered duplicate.`;
  }
  return new DedupeStoreError(cause instanceof DedupeStoreError ? cause.code : 'dedupe_store_unavailable', answer, { cause });
}

/**
 * Where a delivery is settled: before its reply, after an early 202 (`acknowledgeEarly`), or in
 * a replay; and whether the service will send the body again should a handler fail.
 */
export interface Settlement {
  readonly afterReply: boolean;
  readonly retryExpected: boolean;
  readonly replay: boolean;
}

/**
 * Stage 6, settle, after a handler failed: report it and release the claim, which leaves the
 * subject with no processed event, so that the service's retry is processed and so is a newer
 * event that repeats the state before this one. When the retry is expected, the store keeps it
 * due: should a newer event of the subject be processed first, the retry is `superseded`. A
 * release that fails leaves the claim to expire after `claimTtlMs`.
 */
export function releaseAfterFailure(
  context: PipelineContext,
  claim: SubjectClaim,
  error: unknown,
  delivery: WebhookDelivery,
  settlement: Settlement,
  event?: WebhookEvent,
): MaybePromise<ReceiverOutcome> {
  const { afterReply, retryExpected } = settlement;
  context.report(error, { outcome: 'handler_failed', delivery, subject: claim.subject, event, afterReply });
  const options = retryExpected ? { retryExpected, sentMsAgo: sentMsAgo(delivery) } : { retryExpected };
  const release = () => context.dedupe?.release(claim.subject, claim.token, options);
  const released = settleInStore(context, claim, delivery, afterReply, release,
    (storeError) => {
      // Without a retry to come (an early 202, a replay), a claim left to expire would read as
      // an attempt that failed, whose retry is due (see keepTrying).
      if (!retryExpected) keepTrying(context, release);
      return notReleased(claim, settlement, storeError);
    });
  return isPromiseLike(released) ? released.then(() => 'handler_failed') : 'handler_failed';
}

/**
 * What a failed `release` means for this delivery, where it failed (the store's own error, worded
 * for a failed claim, says "answered 503": it becomes the cause, and its code is kept).
 */
function notReleased(claim: SubjectClaim, settlement: Settlement, cause: unknown): DedupeStoreError {
  const answer = settlement.replay
    ? 'in receiver.replay(): the dead letter stays for the next replay()'
    : settlement.afterReply
      ? 'after the delivery was answered 202 acknowledged (acknowledgeEarly): the service sends nothing again, so redo that work yourself'
      : 'and the delivery is answered 500 handler_failed all the same: the service sends it again 1, 5 or 15 minutes later';
  return new DedupeStoreError(cause instanceof DedupeStoreError ? cause.code : 'dedupe_store_unavailable',
    `The handlers of ${claim.subject} failed ${answer}; but the deduplication store could not release this delivery's claim (the store's error is the cause). ` +
    (settlement.retryExpected
      ? 'Until the claim expires (claimTtlMs, 2 minutes by default) later deliveries of the subject wait, and may be answered 409 and retried later; then its event counts as failed, in its place, and its retry is handled there.'
      : 'The receiver tries again to release it in the background, until the store answers (for at most ten times claimTtlMs). Until then, or until the claim expires (claimTtlMs, 2 minutes by default), later deliveries of the subject wait, and may be answered 409 and retried later.'),
    { cause });
}

/**
 * Runs one store operation; its failure, synchronous or not, is reported to onError (as
 * `reported` makes it) and never thrown. Either way the subject is then free here: the first
 * delivery waiting for it may claim.
 */
function settleInStore<T>(
  context: PipelineContext,
  claim: SubjectClaim,
  delivery: WebhookDelivery,
  afterReply: boolean,
  operation: () => T | PromiseLike<T> | undefined,
  reported: (error: unknown) => unknown = (error) => error,
  answered?: (answer: T | undefined) => void,
): MaybePromise<void> {
  const settled = (answer?: T): void => {
    context.lines.settled(claim.subject);
    answered?.(answer);
  };
  const storeFailed = (error: unknown): void => {
    context.report(reported(error), { outcome: 'dedupe_store_unavailable', delivery, subject: claim.subject, afterReply });
    context.lines.settled(claim.subject);
  };
  return fromStore(operation, settled, storeFailed);
}

/**
 * How long ago the service sent this attempt, as far as the receiver can tell: since the
 * signature's timestamp (whole seconds, rounded down: never later than the send) or since the
 * arrival, whichever is earlier. The service's reply window, and so its retry's wait, counts
 * from the send, earlier than the arrival by the network's latency: the store anchors the
 * attempt's failure on it (see ReleaseOptions.sentMsAgo).
 */
function sentMsAgo(delivery: WebhookDelivery): number {
  const now = Date.now();
  const signedAt = Number.isFinite(delivery.timestamp) ? delivery.timestamp * 1000 : delivery.receivedAt;
  return Math.max(0, now - Math.min(delivery.receivedAt, signedAt));
}
