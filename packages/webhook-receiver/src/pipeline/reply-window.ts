import { WebhookReceiverError } from '../errors.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { PipelineContext } from './context.js';

/**
 * Called once the handlers of a delivery that is answered after them have settled: when that is
 * the service's reply window (`context.replyWindowMs`: the store's `replyWindowMs`, 30 s by
 * default) or more after the delivery arrived (its wait for its subject's line and its
 * handlers), the service has stopped waiting, counted the attempt failed and will send the body
 * again, while the receiver answers as if all were well; onError hears of it, as a
 * `handler_outlived_reply_window` error, and the answer is `true`: the store is to keep the
 * retry due. Not for `acknowledgeEarly` (the reply went out before the handlers) nor for
 * `replay()` (no one waits for its answer): the caller knows which. One `Date.now()`; no timer
 * per delivery.
 */
export function reportIfPastReplyWindow(context: PipelineContext, subject: string, delivery: WebhookDelivery, succeeded: boolean): boolean {
  const tookMs = Date.now() - delivery.receivedAt;
  if (tookMs < context.replyWindowMs) return false;
  const retry = succeeded
    ? 'The handlers succeeded, so that retry is not dispatched again (the store keeps it due: 200 duplicate while this event is its subject\'s latest, superseded once a newer one was processed); but every such attempt counts as failed on the service\'s side, and while the handlers run, later events of the subject wait for them.'
    : 'The handlers failed too (reported with outcome handler_failed), so that retry is dispatched again, and times out again if the handlers are still this slow.';
  context.report(new WebhookReceiverError('handler_outlived_reply_window',
    `A delivery of ${subject} was answered ${Math.round(tookMs)} ms after it reached the receiver (its wait for earlier events of its subject, then its handlers), longer than the ${context.replyWindowMs} ms the service waits for an answer: ` +
    `the service counted this attempt failed (timed out), whatever the receiver answered after, and sends the same body again 1, 5 or 15 minutes later (unless this was its 4th attempt). ${retry} ` +
    'Answer within the window: set acknowledgeEarly (the receiver answers 202 before the handlers run; a failure after it is only reported), or have the handler put the slow work on a queue of your own and return.'),
  { outcome: succeeded ? 'processed' : 'handler_failed', delivery, subject, afterReply: false });
  return true;
}

/**
 * The most `subjectWaitMs` may be with a reply window of `replyWindowMs`: the window (a delivery
 * that waits longer is answered after the service stopped waiting), and a day at most (the
 * longest wait a store's line keeps a place for).
 */
export function maxSubjectWaitMs(replyWindowMs: number): number {
  return Math.min(replyWindowMs, 86_400_000);
}
