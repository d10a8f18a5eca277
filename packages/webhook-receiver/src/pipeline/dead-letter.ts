import type { WebhookEventValidationError } from '@capi/webhook-validator';
import { DeadLetterStoreError, describeProblems, InvalidWebhookEventError } from '../errors.js';
import { RECEIVER_OUTCOMES, type ReceiverOutcome } from '../status-table.js';
import { fromStore, isPromiseLike, type Answer, type MaybePromise, type PipelineContext } from './context.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { VerifiedDelivery } from './verify.js';
import type { SubjectClaim } from './claim.js';
import type { DeadLetterEntry, DeadLetterReason, DeadLetterStore } from '../dead-letter/dead-letter-store.js';

/**
 * Stage 7, dead-letter: an authentic body the schema refuses is never answered 4xx (a retry
 * would be refused the same way, and then the event is gone). The partner's code sees it first
 * (`onInvalidEvent`, then `onError` with an {@link InvalidWebhookEventError}), then:
 *
 * - with a `deadLetters` store: kept for `replay` (in place of an entry of the same body: a later
 *   event with that content), 202 `invalid_event_dead_lettered`; 503 when the store fails (the
 *   retry tries again);
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
      // An entry of the same body is replaced, as after an early 202 (see keepForReplay): the
      // first was answered 202, so the service sends it no more, and this copy is a later event
      // with that content (the user went back to a state), to be replayed after the events kept
      // between the two. Kept in the first one's place, a drift A -> B -> A replayed to B.
      await keepInPlaceOfEarlier(context.deadLetters, deadLetterEntry(rawBody, verified, 'invalid_event', undefined, errors));
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
 * reported; the event is then in the `handler_failed` report's context alone (or, when the
 * `in_flight` entry was not deleted, still in it: `replay()` runs it once it is older than `claimTtlMs`).
 * With a store that has `replace` the `in_flight` entry is replaced in one operation, so it stays
 * whenever that fails; without, a put that fails after the delete (or a process that stops
 * between the two) leaves no entry.
 */
export async function keepForReplay(context: PipelineContext, rawBody: Uint8Array, verified: VerifiedDelivery, claim: SubjectClaim, keptInFlight = false): Promise<void> {
  const { subject } = claim;
  const { deadLetters } = context;
  if (deadLetters === undefined) return;
  const { delivery } = verified;
  // Whether the in_flight entry kept before the 202 is still there: a replace, or a delete, that failed.
  let inFlightLeft = keptInFlight;
  try {
    await keepInPlaceOfEarlier(deadLetters, deadLetterEntry(rawBody, verified, 'handler_failed', claim.place), () => { inFlightLeft = false; });
  } catch (error) {
    context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
      `The handlers of ${subject} failed after the delivery was answered 202 acknowledged (acknowledgeEarly), and the dead-letter store could not keep the event for replay() as handler_failed (the store's error is the cause). ` +
      (inFlightLeft
        ? 'Its in_flight entry, kept before the 202, is still in the store: replay() runs it once it is older than the dedupe store\'s claimTtlMs.'
        : 'The service does not send it again: recover it from the event in the context of the handler_failed report.'), { cause: error }),
    { outcome: 'acknowledged', delivery, subject, afterReply: true });
  }
}

/**
 * Before an early 202 (`acknowledgeEarly` with a `deadLetters` store): the delivery is kept as an
 * `in_flight` dead letter (raw body, timestamp, signature, receivedAt), so that a process that
 * stops before its handlers finish (kill -9, out of memory, a stop that does not wait for
 * `receiver.drain()`) leaves the event for `replay()`: the service has its 202 and never sends it
 * again. Deleted once the handlers succeed ({@link forgetInFlight}), replaced by a
 * `handler_failed` entry when they fail ({@link keepForReplay}). A second copy of the body
 * already kept leaves that entry (the store's rule): its event is of the same subject, so this
 * one's processing supersedes it. Answers `undefined` once kept, or the store's error (thrown or
 * rejected): the delivery is then answered after its handlers instead, as without
 * `acknowledgeEarly`, so that nothing is acknowledged that no store keeps. Synchronous when the
 * store is.
 */
export function keepInFlight(context: PipelineContext, rawBody: Uint8Array, verified: VerifiedDelivery, claim: SubjectClaim): MaybePromise<{ readonly error: unknown } | undefined> {
  const deadLetters = context.deadLetters!;
  return fromStore(() => deadLetters.put(deadLetterEntry(rawBody, verified, 'in_flight', claim.place)), () => undefined, (error) => ({ error }));
}

/** Reports a delivery answered after its handlers, not 202, because the dead-letter store could not keep it in flight (see {@link keepInFlight}). */
export function reportInFlightNotKept(context: PipelineContext, error: unknown, outcome: ReceiverOutcome, delivery: WebhookDelivery, subject: string): void {
  context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
    `acknowledgeEarly is set, but the dead-letter store could not keep the delivery of ${subject} in flight before the 202 (the store's error is the cause): ` +
      'a process stopping before the handlers finished would have lost an event the service had acknowledged. So it was answered after the handlers instead, as without acknowledgeEarly ' +
      `(${outcome}; a handler failure is answered 500 and retried). Check the dead-letter store (reachable, not full: replay() or delete its entries).`, { cause: error }),
  { outcome, delivery, subject, afterReply: false });
}

/**
 * After the handlers of an early 202 succeeded: the delivery's `in_flight` entry is deleted. A
 * store that fails is reported; the entry then stays, and a later `replay()` finds its event
 * processed (`duplicate`) and deletes it.
 */
export async function forgetInFlight(context: PipelineContext, delivery: WebhookDelivery, subject: string): Promise<void> {
  try {
    const removed = context.deadLetters!.delete(delivery.bodySha256);
    if (isPromiseLike(removed)) await removed;
  } catch (error) {
    context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
      `The handlers of ${subject} succeeded after an early 202 (acknowledgeEarly), but the dead-letter store could not delete the in_flight entry kept before the 202 (the store's error is the cause). ` +
        'Nothing is lost: a later replay() finds the event processed (duplicate) and deletes the entry.', { cause: error }),
    { outcome: 'acknowledged', delivery, subject, afterReply: true });
  }
}

/**
 * A delivery whose handlers failed before the reply (answered 500, and retried 1, 5 and 15
 * minutes later): with a `deadLetters` store it is kept as a `handler_failed` entry (in place of
 * an entry of the same body) before the 500 goes out. The service gives the event up after its
 * third retry, so without it a handler bug that lasts longer (about 21 minutes) loses every
 * event it meets; with it, `replay()` runs them once the handlers work, in their places. A retry
 * that succeeds in this process deletes the entry ({@link forgetFailedBeforeReply}); one that
 * succeeds in another process leaves it to the next `replay()`, which finds the event processed
 * (`duplicate`) and deletes it. A store that fails is reported; the delivery is answered 500 all
 * the same (the service retries it).
 */
export async function keepFailedBeforeReply(context: PipelineContext, rawBody: Uint8Array, verified: VerifiedDelivery, claim: SubjectClaim): Promise<void> {
  const { delivery } = verified;
  const { subject } = claim;
  // Whether an entry of this body kept earlier may have been deleted (by a delete+put whose put failed).
  let earlierGone = false;
  try {
    await keepInPlaceOfEarlier(context.deadLetters!, deadLetterEntry(rawBody, verified, 'handler_failed', claim.place), () => { earlierGone = true; });
    const failedHere = context.failedBeforeReply;
    if (failedHere !== undefined) {
      failedHere.add(delivery.bodySha256);
      // A hint only (a retry that goes to another process never deletes its digest here): bounded.
      if (failedHere.size > 10_000) failedHere.delete(failedHere.values().next().value!);
    }
  } catch (error) {
    context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
      `The handlers of ${subject} failed, and the dead-letter store could not keep the event for replay() (the store's error is the cause). ` +
        (earlierGone
          ? 'The store has no replace(): an entry of the same body kept earlier, if any, was deleted before the put failed. '
          : 'An entry of the same body kept earlier, if any, is still in the store. ') +
        'It is answered 500 all the same, and the service retries it 1, 5 and 15 minutes later; should the handlers still fail then, recover it from the event in the context of the handler_failed report.', { cause: error }),
    { outcome: 'handler_failed', delivery, subject, afterReply: false });
  }
}

/** A retry whose handlers succeeded in the process that kept its failure ({@link keepFailedBeforeReply}): the entry is deleted. A store that fails is reported; the next `replay()` deletes it then (`duplicate`). */
export async function forgetFailedBeforeReply(context: PipelineContext, delivery: WebhookDelivery, subject: string): Promise<void> {
  context.failedBeforeReply?.delete(delivery.bodySha256);
  try {
    const removed = context.deadLetters!.delete(delivery.bodySha256);
    if (isPromiseLike(removed)) await removed;
  } catch (error) {
    context.report(new DeadLetterStoreError(error instanceof DeadLetterStoreError ? error.code : 'dead_letter_store_unavailable',
      `The handlers of ${subject} succeeded on a retry, but the dead-letter store could not delete the handler_failed entry kept for its earlier failure (the store's error is the cause). ` +
        'Nothing is lost: a later replay() finds the event processed (duplicate) and deletes the entry.', { cause: error }),
    { outcome: 'processed', delivery, subject, afterReply: false });
  }
}

/**
 * Keeps `entry` in place of an entry of its digest, in `entry`'s own place (its `receivedAt`):
 * with the store's `replace` when it has one, one operation that leaves the earlier entry in the
 * store should it fail; else `delete` then `put` (a store of your own written before `replace`),
 * calling `deleted` in between, after which a failing put leaves no entry of that body.
 */
async function keepInPlaceOfEarlier(deadLetters: DeadLetterStore, entry: DeadLetterEntry, deleted?: () => void): Promise<void> {
  if (typeof deadLetters.replace === 'function') {
    const replaced = deadLetters.replace(entry);
    if (isPromiseLike(replaced)) await replaced;
    return;
  }
  const removed = deadLetters.delete(entry.bodySha256);
  if (isPromiseLike(removed)) await removed;
  deleted?.();
  const kept = deadLetters.put(entry);
  if (isPromiseLike(kept)) await kept;
}

/**
 * The entry that keeps a verified delivery for `replay()`: what replay needs to run it (its raw
 * body, timestamp, signature and its event's place), and why it was kept. The place is the
 * delivery's arrival, or the one its claim answered (`place`): the retry of an event that failed
 * before is kept where that event's first attempt arrived, not after the events received since
 * (a replay would otherwise take it for newer than them, and bring an older state back).
 */
function deadLetterEntry(rawBody: Uint8Array, verified: VerifiedDelivery, reason: DeadLetterReason, place?: number, errors: readonly WebhookEventValidationError[] = []): DeadLetterEntry {
  const { delivery } = verified;
  return { bodySha256: delivery.bodySha256, rawBody, timestamp: delivery.timestamp, signature: verified.signature, receivedAt: place ?? delivery.receivedAt, errors, reason };
}
