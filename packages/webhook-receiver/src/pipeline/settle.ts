import type { WebhookEvent } from '@capi/event-types';
import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';
import type { SubjectClaim } from './claim.js';
import { fromStore, isPromiseLike, type MaybePromise, type PipelineContext } from './context.js';

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
  return settleInStore(context, claim, delivery, true,
    () => (retryExpected ? context.dedupe?.markProcessed(claim.subject, claim.token, { retryExpected }) : context.dedupe?.markProcessed(claim.subject, claim.token)),
    (error) => notMarkedProcessed(claim, delivery, settlement, answered, error),
    (owned) => {
      if (owned === false) context.report(claimLost(claim, settlement), { outcome: settlement.afterReply ? 'acknowledged' : answered, delivery, subject: claim.subject, afterReply: settlement.afterReply });
    });
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
    'The memory, Redis and Durable Object stores renew the claims of running handlers, so with them this means two renewals in a row failed (the store unreachable, or the event loop blocked, for about half of claimTtlMs), the handlers ran longer than ten times claimTtlMs, or the store lost its data; with a store of your own without renewClaim, keep claimTtlMs above your longest handlers (acknowledgeEarly ones included). Keep the store\'s data through restarts (Redis appendonly, a failover that keeps writes).');
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
  const lingers = `The store may still hold the subject's claim until it expires (claimTtlMs, 2 minutes by default): meanwhile later deliveries of ${unknownType ? 'this body' : 'the subject'} wait, and may be answered 409 and retried later.`;
  let answer: string;
  if (settlement.replay) {
    answer = `${what} in receiver.replay(), ${failed}. The replay reports it ${answered} and deletes its dead-letter entry all the same (no service waits for a reply). ` +
      `${lingers} A copy of this body that comes later is dispatched again once the claim has expired, not answered duplicate.`;
  } else if (settlement.afterReply) {
    answer = `${what} after the delivery was answered 202 acknowledged (acknowledgeEarly), ${failed}. The service has its 202 and does not send this body again; nothing is lost. ` +
      `${lingers} Should a copy of this body come all the same, it is dispatched again once the claim has expired, not answered duplicate.`;
  } else {
    answer = `${what}, ${failed}. The delivery is answered 200 ${answered} all the same (the work is done), and the service does not send it again. ` +
      `${lingers} Should the service send this body again anyway (the 200 was lost, or came after its reply window), that retry is dispatched again once the claim has expired, not answered duplicate.`;
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
  const released = settleInStore(context, claim, delivery, afterReply,
    () => context.dedupe?.release(claim.subject, claim.token, { retryExpected }),
    (storeError) => notReleased(claim, settlement, storeError));
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
    'Until the claim expires (claimTtlMs, 2 minutes by default) later deliveries of the subject wait, and may be answered 409 and retried later; then its event counts as failed, in its place, and its retry is handled there.',
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
