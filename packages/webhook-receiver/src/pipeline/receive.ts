import type { WebhookEvent } from '@capi/event-types';
import type { DeliverySource } from '../delivery-source.js';
import type { UnknownWebhookEvent, WebhookDelivery, WebhookReceipt } from '../receiver-types.js';
import { replyFor } from '../reply.js';
import type { ReceiverOutcome } from '../status-table.js';
import { claimSubject, type SubjectClaim } from './claim.js';
import { andThen, isPromiseLike, type Answer, type MaybePromise, type PipelineContext } from './context.js';
import { deadLetter, forgetFailedBeforeReply, forgetInFlight, keepFailedBeforeReply, keepForReplay, keepInFlight, reportInFlightNotKept } from './dead-letter.js';
import { parseEvent, type ParsedDelivery } from './parse-event.js';
import { unreadableBody } from './read-body.js';
import { reportIfPastReplyWindow } from './reply-window.js';
import { markProcessed, releaseAfterFailure, type Settlement } from './settle.js';
import { verifyDelivery, type VerifiedDelivery } from './verify.js';

/** What the stages after verification decided: the answer, and the handlers' work that runs after it (`acknowledgeEarly`). */
export interface Processed extends Answer {
  readonly afterReply?: Promise<void>;
}

/** How a delivery is run: as a delivery or a replay, and whether an early 202 may leave work behind it. */
export interface DeliveryMode {
  readonly replay: boolean;
  /**
   * A replay of an entry its event's claim kept (`handler_failed`, `in_flight`): its event was
   * placed by the store, so an event of its subject that shares its millisecond came after it
   * (one placed after another in the same millisecond is moved past it). It is placed 1 ms
   * earlier, so that such an event, processed since, supersedes it rather than tie with it (see
   * {@link claimSubject}'s `tieIsOlder`).
   */
  readonly placedByItsClaim?: boolean;
  /**
   * Nothing keeps work alive after this delivery's reply (`handle` without `waitUntil` on
   * Cloudflare Workers): with `acknowledgeEarly`, its handlers run before the reply, and
   * `onError` hears once that `waitUntil` is missing.
   */
  readonly workDroppedAfterReply?: boolean;
}

/**
 * The pipeline of one delivery: read, verify, then {@link processVerified}. One try around the
 * whole of it: an unexpected failure is reported and answered 500 `internal_error`.
 */
export async function receiveDelivery(context: PipelineContext, source: DeliverySource, workDroppedAfterReply = false): Promise<WebhookReceipt> {
  // Before the body is read and the key fetched: the store places the event by its arrival.
  const receivedAt = Date.now();
  try {
    if (source.method !== 'POST') return { reply: replyFor('method_not_allowed') };
    let rawBody: Uint8Array;
    try {
      rawBody = await source.readRawBody(context.maxBodyBytes);
    } catch (error) {
      const { outcome, detail } = unreadableBody(context, error);
      return { reply: replyFor(outcome, detail) };
    }
    const verified = await verifyDelivery(context, source, rawBody, receivedAt);
    if ('outcome' in verified) return { reply: replyFor(verified.outcome, verified.detail) };
    // Before this delivery claims (it may be a retry of one of them): refused deliveries that the key now shows authentic.
    if (context.refused !== undefined && context.refused.pending) await context.refused.recheck();
    const processing = processVerified(context, rawBody, verified, { replay: false, workDroppedAfterReply });
    const { outcome, detail, afterReply } = isPromiseLike(processing) ? await processing : processing;
    return { reply: replyFor(outcome, detail), afterReply };
  } catch (error) {
    context.report(error, { outcome: 'internal_error', afterReply: false });
    return { reply: replyFor('internal_error') };
  }
}

/**
 * The stages after verification, shared by deliveries and `replay`: parse and validate, then
 * dead-letter (an invalid body) or claim, dispatch and settle. A replay never dead-letters again
 * (the entry is still in the store) and never acknowledges early. Synchronous from end to end
 * when the store and the handlers are (see {@link MaybePromise}).
 */
export function processVerified(
  context: PipelineContext,
  rawBody: Uint8Array,
  verified: VerifiedDelivery,
  mode: DeliveryMode,
): MaybePromise<Processed> {
  const { delivery } = verified;
  const parsed = parseEvent(context, rawBody, delivery.bodySha256, verified.text);
  if (parsed.kind === 'invalid') {
    return mode.replay ? { outcome: 'invalid_event_dead_lettered' } : deadLetter(context, rawBody, verified, parsed.errors, parsed.eventType);
  }
  return claimAndDispatch(context, rawBody, verified, parsed, mode);
}

// Where a delivery is settled. Before the reply a handler failure is answered 500, so the service
// sends the body again; not after an early 202, nor in a replay.
const BEFORE_REPLY: Settlement = { afterReply: false, retryExpected: true, replay: false };
const AFTER_REPLY: Settlement = { afterReply: true, retryExpected: false, replay: false };
const IN_REPLAY: Settlement = { afterReply: false, retryExpected: false, replay: true };

/** Stages 4 to 6 for a valid event or an unknown event type: claim, then dispatch and settle. */
function claimAndDispatch(
  context: PipelineContext,
  rawBody: Uint8Array,
  verified: VerifiedDelivery,
  parsed: Exclude<ParsedDelivery, { kind: 'invalid' }>,
  mode: DeliveryMode,
): MaybePromise<Processed> {
  const { delivery } = verified;
  // Known before the claim: an event whose handlers run after an early 202 (the branches below),
  // for which the service sends no retry, so that the store keeps none due should its claim expire.
  const early = context.acknowledgeEarly && !mode.replay && mode.workDroppedAfterReply !== true && parsed.kind === 'event';
  return andThen(claimSubject(context, parsed.subject, delivery, !mode.replay, early, mode.placedByItsClaim === true), (claim): MaybePromise<Processed> => {
    if ('outcome' in claim) {
      return claim.outcome === 'superseded' && parsed.kind === 'event' ? giveToSupersededHook(context, parsed.event, delivery, parsed.subject) : claim;
    }
    if (parsed.kind === 'unknown') return giveToUnknownEventHandler(context, rawBody, delivery, claim, mode.replay ? IN_REPLAY : BEFORE_REPLY);
    const { event } = parsed;
    if (context.acknowledgeEarly && !mode.replay && mode.workDroppedAfterReply === true) {
      // A 202 here would acknowledge an event whose handlers the runtime cancels with the
      // request (Workers without waitUntil): lost in silence, its claim never settled, and the
      // service never retries after a 2xx. Answer after the handlers instead, as without
      // acknowledgeEarly (a failure is then 500 and retried), and say so once.
      return andThen(dispatchAndSettle(context, claim, event, delivery, BEFORE_REPLY), (outcome) => {
        context.reportMissingWaitUntil(outcome, delivery, claim.subject);
        return { outcome };
      });
    }
    if (context.acknowledgeEarly && !mode.replay) {
      if (context.deadLetters === undefined) return acknowledgeEarly(context, rawBody, verified, claim, event, false);
      // Kept before the 202 (see keepInFlight): a process that stops before the handlers finish
      // leaves the event for replay(). A store that cannot keep it: answered after the handlers.
      // (Claimed acknowledgedEarly all the same: should this process then die mid-handler, the
      // service retries a body for which no retry is due, and that retry is dispatched as a new
      // event; a failure or a late answer still says retryExpected. See claimSubject.)
      return andThen(keepInFlight(context, rawBody, verified, claim), (notKept): MaybePromise<Processed> => notKept === undefined
        ? acknowledgeEarly(context, rawBody, verified, claim, event, true)
        : andThen(dispatchAndSettle(context, claim, event, delivery, BEFORE_REPLY), (outcome) => {
          reportInFlightNotKept(context, notKept.error, outcome, delivery, claim.subject);
          return { outcome };
        }));
    }
    if (mode.replay) return andThen(dispatchAndSettle(context, claim, event, delivery, IN_REPLAY), (outcome) => ({ outcome }));
    return andThen(dispatchAndSettle(context, claim, event, delivery, BEFORE_REPLY), (outcome) => {
      const failedHere = context.failedBeforeReply;
      if (failedHere === undefined) return { outcome };
      // Kept before the 500: the service retries it 3 times, and then the event is gone, however
      // long the handler bug lasts. Its retry that succeeds in this process deletes the entry.
      if (outcome === 'handler_failed') return keepFailedBeforeReply(context, rawBody, verified, claim).then(() => ({ outcome }));
      if (outcome === 'processed' && failedHere.has(delivery.bodySha256)) return forgetFailedBeforeReply(context, delivery, claim.subject).then(() => ({ outcome }));
      return { outcome };
    });
  });
}

/**
 * An early 202 (`acknowledgeEarly`): the handlers run after the reply. Started on a later task,
 * not a microtask: the adapters write the reply in the microtasks that follow this return (and a
 * runtime sends a returned Response), so a microtask would run the handlers' synchronous code
 * before the reply went out. Should they fail, the service has its 202 and sends nothing again:
 * a dead-letter store keeps the event (`handler_failed`, in place of its `in_flight` entry);
 * once they succeed, the `in_flight` entry is deleted. The work is counted in
 * `context.afterReplyWork` until it settles, for `receiver.drain()`.
 */
function acknowledgeEarly(
  context: PipelineContext,
  rawBody: Uint8Array,
  verified: VerifiedDelivery,
  claim: SubjectClaim,
  event: Parameters<PipelineContext['handlers']['dispatch']>[0],
  keptInFlight: boolean,
): Processed {
  const { delivery } = verified;
  const afterReply = new Promise<void>((resolve) => { setTimeout(resolve, 0); })
    .then(() => dispatchAndSettle(context, claim, event, delivery, AFTER_REPLY))
    .then((outcome) => {
      if (outcome === 'handler_failed') return keepForReplay(context, rawBody, verified, claim, keptInFlight);
      return keptInFlight ? forgetInFlight(context, delivery, claim.subject) : undefined;
    })
    // Never rejects (see WebhookReceipt.afterReply): an unexpected failure is reported.
    .then(undefined, (error: unknown) => { context.report(error, { outcome: 'internal_error', delivery, subject: claim.subject, afterReply: true }); });
  const running = context.afterReplyWork;
  if (running !== undefined) {
    running.add(afterReply);
    void afterReply.then(() => { running.delete(afterReply); });
  }
  return { outcome: 'acknowledged', afterReply };
}

/**
 * Stages 5 and 6: run the handlers, then record the subject's latest event, or release it after
 * a failure. A delivery answered after its handlers that took the service's whole reply window
 * is reported (see reply-window.ts).
 */
function dispatchAndSettle(
  context: PipelineContext,
  claim: SubjectClaim,
  event: Parameters<PipelineContext['handlers']['dispatch']>[0],
  delivery: WebhookDelivery,
  settlement: Settlement,
): MaybePromise<ReceiverOutcome> {
  const timed = settlement === BEFORE_REPLY;
  const settle = (): MaybePromise<ReceiverOutcome> => {
    // Answered past the service's window: it counted the attempt failed and sends it again.
    const retryExpected = timed && reportIfPastReplyWindow(context, claim.subject, delivery, true);
    return andThen(markProcessed(context, claim, delivery, settlement, 'processed', retryExpected), () => 'processed' as const);
  };
  const failed = (error: unknown): MaybePromise<ReceiverOutcome> => {
    if (timed) reportIfPastReplyWindow(context, claim.subject, delivery, false);
    return releaseAfterFailure(context, claim, error, delivery, settlement, event);
  };
  let dispatched: MaybePromise<void>;
  try {
    dispatched = context.handlers.dispatch(event, delivery);
  } catch (error) {
    return failed(error);
  }
  return isPromiseLike(dispatched) ? settleWhenDone(context, claim, dispatched, settle, failed) : settle();
}

/** Asynchronous handlers: settled once they are done, their subject's claim renewed meanwhile (see claim-renewal.ts). */
function settleWhenDone(
  context: PipelineContext,
  claim: SubjectClaim,
  dispatched: Promise<void>,
  settle: () => MaybePromise<ReceiverOutcome>,
  failed: (error: unknown) => MaybePromise<ReceiverOutcome>,
): Promise<ReceiverOutcome> {
  if (context.claimRenewal === undefined || claim.token === '') return dispatched.then(settle, failed);
  const release = context.claimRenewal.hold(claim);
  return dispatched.then(
    () => { release(); return settle(); },
    (error: unknown) => { release(); return failed(error); },
  );
}

/** A superseded retry: acknowledged without the handlers, after the onSuperseded hook (whose failure is only reported). */
async function giveToSupersededHook(context: PipelineContext, event: WebhookEvent, delivery: WebhookDelivery, subject: string): Promise<Processed> {
  if (context.onSuperseded !== undefined) {
    try {
      await context.onSuperseded(event, delivery);
    } catch (error) {
      context.report(error, { outcome: 'superseded', delivery, subject, afterReply: false });
    }
  }
  return { outcome: 'superseded' };
}

async function giveToUnknownEventHandler(context: PipelineContext, rawBody: Uint8Array, delivery: WebhookDelivery, claim: SubjectClaim, settlement: Settlement): Promise<Processed> {
  if (context.onUnknownEvent !== undefined) {
    // A slow hook keeps its claim, as handlers do: a copy of the body waits for it.
    const release = context.claimRenewal !== undefined && claim.token !== '' ? context.claimRenewal.hold(claim) : undefined;
    try {
      // The validator kept only the type; parse again on this rare path rather than on every delivery.
      await context.onUnknownEvent(JSON.parse(new TextDecoder().decode(rawBody)) as UnknownWebhookEvent, delivery);
    } catch (error) {
      // Acknowledged all the same: a retry would fail the same way, and new kinds must not cause retry storms.
      context.report(error, { outcome: 'unknown_event_type', delivery, subject: claim.subject, afterReply: false });
    } finally {
      release?.();
    }
  }
  await markProcessed(context, claim, delivery, settlement, 'unknown_event_type');
  return { outcome: 'unknown_event_type' };
}
