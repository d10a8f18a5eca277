import type { DedupeClaim } from '../dedupe/dedupe-store.js';
import type { WebhookDelivery } from '../receiver-types.js';
import { fromStore, type Answer, type MaybePromise, type PipelineContext } from './context.js';

/** The subject this delivery holds in the deduplication store, until it is settled. */
export interface SubjectClaim {
  readonly subject: string;
  /** `''` without a store. */
  readonly token: string;
}

/** First and longest pause between two claims of a subject that another process holds, in ms. */
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 250;

/**
 * Stage 4, claim: take the subject in the deduplication store, or learn that this body is its
 * latest processed event (200 `duplicate`). While another process holds the subject (or a
 * process that died still does), the claim is tried again, after 10 ms and then twice as long
 * each time up to 250 ms, until `deadline` (`Date.now()` ms); then 409, and the service retries
 * later; without a `deadline` (the delivery did not wait for its turn), it is `subjectWaitMs` from
 * the first such answer. Deliveries of one subject in this process never meet here: they take
 * turns before (see subject-turns.ts). A store that fails is answered 503 (fail closed: nothing is
 * dispatched without a claim).
 */
export function claimSubject(context: PipelineContext, subject: string, delivery: WebhookDelivery, deadline: number | undefined): MaybePromise<SubjectClaim | Answer> {
  const { dedupe } = context;
  if (dedupe === undefined) return { subject, token: '' };
  const storeFailed = (error: unknown): Answer => {
    context.report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: false });
    return { outcome: 'dedupe_store_unavailable' };
  };
  const answer = (claim: DedupeClaim, pauseMs: number): MaybePromise<SubjectClaim | Answer> => {
    if (claim.state === 'claimed') return { subject, token: claim.token };
    if (claim.state === 'processed') return { outcome: 'duplicate' };
    deadline ??= Date.now() + context.subjectWaitMs;
    const leftMs = deadline - Date.now();
    if (leftMs <= 0) return { outcome: 'duplicate_in_progress' };
    const nextPauseMs = Math.min(2 * pauseMs, MAX_POLL_MS);
    return new Promise<void>((resolve) => { setTimeout(resolve, Math.min(pauseMs, leftMs)); })
      .then(() => fromStore(() => dedupe.claim(subject, delivery.bodySha256), (again) => answer(again, nextPauseMs), storeFailed));
  };
  return fromStore(() => dedupe.claim(subject, delivery.bodySha256), (claim) => answer(claim, FIRST_POLL_MS), storeFailed);
}
