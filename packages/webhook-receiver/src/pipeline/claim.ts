import type { DedupeClaim } from '../dedupe/dedupe-store.js';
import type { WebhookDelivery } from '../receiver-types.js';
import { fromStore, type Answer, type MaybePromise, type PipelineContext } from './context.js';

/** The subject this delivery holds in the deduplication store, until it is settled. */
export interface SubjectClaim {
  readonly subject: string;
  /** `''` without a store. */
  readonly token: string;
}

/**
 * Stage 4, claim: take the subject in the deduplication store, or learn that this body is its
 * latest processed event (200 `duplicate`) or that another event of the subject is being
 * handled (409, retried later: handlers of a subject never run concurrently). A store that fails is answered
 * 503 (fail closed: nothing is dispatched without a claim).
 */
export function claimSubject(context: PipelineContext, subject: string, delivery: WebhookDelivery): MaybePromise<SubjectClaim | Answer> {
  const { dedupe } = context;
  if (dedupe === undefined) return { subject, token: '' };
  const storeFailed = (error: unknown): Answer => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: false });
    return { outcome: 'dedupe_store_unavailable' };
  };
  return fromStore(() => dedupe.claim(subject, delivery.bodySha256), (claim) => subjectClaim(subject, claim), storeFailed);
}

function subjectClaim(subject: string, claim: DedupeClaim): SubjectClaim | Answer {
  if (claim.state === 'processed') return { outcome: 'duplicate' };
  if (claim.state === 'processing') return { outcome: 'duplicate_in_progress' };
  return { subject, token: claim.token };
}
