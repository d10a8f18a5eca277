import type { WebhookDelivery } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';
import type { SubjectClaim } from './claim.js';
import { isPromiseLike, type PipelineContext } from './context.js';

/**
 * Stage 6, settle, after the handlers succeeded: the subject's latest processed event is now
 * this body. The delivery is answered 2xx all the same when the store fails here (the work is
 * done); onError is told, and a later copy of the body may then be processed again
 * (at-least-once while the store is down).
 */
export async function markProcessed(context: PipelineContext, claim: SubjectClaim, delivery: WebhookDelivery): Promise<void> {
  try {
    const marked = context.dedupe?.markProcessed(claim.subject, claim.token);
    if (isPromiseLike(marked)) await marked;
  } catch (error) {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: true });
  }
}

/**
 * Stage 6, settle, after a handler failed: report it and release the claim, so that the
 * subject's latest processed event is again the one before and the service's retry is
 * processed. A release that fails leaves the claim to expire after `claimTtlMs`.
 */
export async function releaseAfterFailure(
  context: PipelineContext,
  claim: SubjectClaim,
  error: unknown,
  delivery: WebhookDelivery,
  afterReply: boolean,
): Promise<ReceiverOutcome> {
  context.report(error, { outcome: 'handler_failed', delivery, afterReply });
  try {
    const released = context.dedupe?.release(claim.subject, claim.token);
    if (isPromiseLike(released)) await released;
  } catch (releaseError) {
    context.report(releaseError, { outcome: 'dedupe_store_unavailable', delivery, afterReply });
  }
  return 'handler_failed';
}
