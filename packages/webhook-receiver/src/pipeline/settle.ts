import type { WebhookDelivery } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';
import type { SubjectClaim } from './claim.js';
import { fromStore, isPromiseLike, type MaybePromise, type PipelineContext } from './context.js';

/**
 * Stage 6, settle, after the handlers succeeded: the subject's latest processed event is now
 * this body. The delivery is answered 2xx all the same when the store fails here (the work is
 * done); onError is told, and a later copy of the body may then be processed again
 * (at-least-once while the store is down).
 */
export function markProcessed(context: PipelineContext, claim: SubjectClaim, delivery: WebhookDelivery): MaybePromise<void> {
  return settleInStore(context, claim, delivery, true, () => context.dedupe?.markProcessed(claim.subject, claim.token));
}

/** Where a handler failure happened: after the reply (`acknowledgeEarly`), and whether the service will send the body again. */
export interface FailureSettlement {
  readonly afterReply: boolean;
  readonly retryExpected: boolean;
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
  { afterReply, retryExpected }: FailureSettlement,
): MaybePromise<ReceiverOutcome> {
  context.report(error, { outcome: 'handler_failed', delivery, afterReply });
  const released = settleInStore(context, claim, delivery, afterReply,
    () => context.dedupe?.release(claim.subject, claim.token, { retryExpected }));
  return isPromiseLike(released) ? released.then(() => 'handler_failed') : 'handler_failed';
}

/**
 * Runs one store operation; its failure, synchronous or not, is reported to onError and never
 * thrown. Either way the subject is then free here: the first delivery waiting for it may claim.
 */
function settleInStore(
  context: PipelineContext,
  claim: SubjectClaim,
  delivery: WebhookDelivery,
  afterReply: boolean,
  operation: () => void | PromiseLike<void> | undefined,
): MaybePromise<void> {
  const settled = (): void => context.lines.settled(claim.subject);
  const storeFailed = (error: unknown): void => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply });
    settled();
  };
  return fromStore(operation, settled, storeFailed);
}
