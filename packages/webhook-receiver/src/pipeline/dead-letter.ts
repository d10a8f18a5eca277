import type { WebhookEventValidationError } from '@capi/webhook-validator';
import { DeadLetterStoreError, describeProblems, InvalidWebhookEventError } from '../errors.js';
import { RECEIVER_OUTCOMES, type ReceiverOutcome } from '../status-table.js';
import { isPromiseLike, type Answer, type PipelineContext } from './context.js';
import type { VerifiedDelivery } from './verify.js';

/**
 * Stage 7, dead-letter: an authentic body the schema refuses is never answered 4xx (a retry
 * would be refused the same way, and then the event is gone). The partner's code sees it first
 * (`onInvalidEvent`, then `onError` with an {@link InvalidWebhookEventError}), then:
 *
 * - with a `deadLetters` store: kept for `replay`, 202 `invalid_event_dead_lettered`; 503 when the
 *   store fails (the retry tries again);
 * - without one: 200 `invalid_event_handled` when `onInvalidEvent` returned without throwing,
 *   else 500 `invalid_event_unhandled`, so that the service retries an event no code has taken.
 */
export async function deadLetter(
  context: PipelineContext,
  rawBody: Uint8Array,
  verified: VerifiedDelivery,
  errors: readonly WebhookEventValidationError[],
  eventType: string | undefined,
): Promise<Answer> {
  const { delivery } = verified;
  let hookTookIt = false;
  let hookFailed = false;
  let hookError: unknown;
  if (context.onInvalidEvent !== undefined) {
    try {
      const handled = context.onInvalidEvent({ rawBody, errors, eventType }, delivery);
      if (isPromiseLike(handled)) await handled;
      hookTookIt = true;
    } catch (error) {
      hookFailed = true;
      hookError = error;
    }
  }
  let outcome: ReceiverOutcome;
  if (context.deadLetters !== undefined) {
    try {
      const kept = context.deadLetters.put({
        bodySha256: delivery.bodySha256,
        rawBody,
        timestamp: delivery.timestamp,
        signature: verified.signature,
        receivedAt: delivery.receivedAt,
        errors,
        reason: 'invalid_event',
      });
      if (isPromiseLike(kept)) await kept;
      outcome = 'invalid_event_dead_lettered';
    } catch (error) {
      outcome = 'dead_letter_store_unavailable';
      context.report(error, { outcome, delivery, afterReply: false });
    }
  } else {
    outcome = hookTookIt ? 'invalid_event_handled' : 'invalid_event_unhandled';
  }
  if (hookFailed) context.report(hookError, { outcome, delivery, afterReply: false });
  context.report(new InvalidWebhookEventError(rawBody, errors, eventType), { outcome, delivery, afterReply: false });
  if (outcome === 'dead_letter_store_unavailable') return { outcome };
  return { outcome, detail: `${RECEIVER_OUTCOMES[outcome].message} Problems: ${describeProblems(errors)}.` };
}

/**
 * An event whose handlers failed after an early 202 (`acknowledgeEarly`): the service does not
 * send it again, so a `deadLetters` store keeps it for `replay()`, which runs the oldest entries
 * first and places each where it was received (an event of its subject processed by then
 * supersedes it). An entry of the same body is replaced: with no retries after a 202, this copy
 * is a later event with that content (the user went back to a state), and must be replayed after
 * the events kept between the two, not where the earlier one was. A store that fails is
 * reported; the event is then in the `handler_failed` report's context alone.
 */
export async function keepForReplay(context: PipelineContext, rawBody: Uint8Array, verified: VerifiedDelivery, subject: string): Promise<void> {
  const { deadLetters } = context;
  if (deadLetters === undefined) return;
  const { delivery } = verified;
  try {
    const removed = deadLetters.delete(delivery.bodySha256);
    if (isPromiseLike(removed)) await removed;
    const kept = deadLetters.put({
      bodySha256: delivery.bodySha256,
      rawBody,
      timestamp: delivery.timestamp,
      signature: verified.signature,
      receivedAt: delivery.receivedAt,
      errors: [],
      reason: 'handler_failed',
    });
    if (isPromiseLike(kept)) await kept;
  } catch (error) {
    context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
      `The handlers of ${subject} failed after the delivery was answered 202 acknowledged (acknowledgeEarly), and the dead-letter store could not keep the event for replay() (the store's error is the cause). ` +
      'The service does not send it again: recover it from the event in the context of the handler_failed report.', { cause: error }),
    { outcome: 'acknowledged', delivery, subject, afterReply: true });
  }
}
