import type { WebhookEvent } from '@capi/event-types';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import type { DeadLetterStore } from '../dead-letter/dead-letter-store.js';
import type { InvalidWebhookEvent, UnknownWebhookEvent, WebhookDelivery, WebhookErrorContext, WebhookEventParser } from '../receiver-types.js';
import type { SignatureCheck } from '../signature-check.js';
import type { ReceiverOutcome } from '../status-table.js';
import type { ClaimRenewal } from './claim-renewal.js';
import type { HandlerRegistry } from './dispatch.js';
import type { RefusedDeliveries } from './refused-deliveries.js';
import type { SubjectLines } from './subject-lines.js';

/** What every stage of the pipeline reads: the receiver's options, checked and resolved once. */
export interface PipelineContext {
  readonly maxBodyBytes: number;
  readonly signatureCheck: SignatureCheck;
  readonly validator: WebhookEventParser;
  readonly parseOptions: { readonly strict: boolean; readonly maxBytes: number };
  /** The validator is the default `parseWebhookEvent`, which also takes the body as text: a large body is decoded while its signature is checked. */
  readonly decodesForValidator: boolean;
  readonly dedupe: DedupeStore | undefined;
  readonly deadLetters: DeadLetterStore | undefined;
  readonly acknowledgeEarly: boolean;
  /**
   * With a `deadLetters` store: the bodies (SHA-256) whose handlers failed before the reply in this
   * process and were kept as `handler_failed` dead letters, so that their retry's success here
   * deletes the entry (one in another process's store is deleted by the next `replay()`).
   */
  readonly failedBeforeReply: Set<string> | undefined;
  /** With `acknowledgeEarly`: the work still running after early 202s, for `receiver.drain()` (none otherwise). */
  readonly afterReplyWork: Set<Promise<void>> | undefined;
  /** How long a delivery waits for the subject's earlier event before it is answered 409. */
  readonly subjectWaitMs: number;
  /**
   * How long the service waits for an answer, in ms: the store's `replyWindowMs` (30,000 without
   * a store, or with one that does not say). A delivery answered later was counted failed.
   */
  readonly replyWindowMs: number;
  /** The deliveries waiting in this process for a subject another delivery holds. */
  readonly lines: SubjectLines;
  /** Renews the claims of handlers still running, when the store can (`renewClaim`). */
  readonly claimRenewal: ClaimRenewal | undefined;
  /** Deliveries refused for the key, checked again with a newer one (a key provider and a store with `expectRetry` only). */
  readonly refused: RefusedDeliveries | undefined;
  readonly onSuperseded: ((event: WebhookEvent, delivery: WebhookDelivery) => unknown) | undefined;
  readonly onUnknownEvent: ((event: UnknownWebhookEvent, delivery: WebhookDelivery) => unknown) | undefined;
  readonly onInvalidEvent: ((event: InvalidWebhookEvent, delivery: WebhookDelivery) => unknown) | undefined;
  readonly handlers: HandlerRegistry;
  /** onError, guarded: it never throws and its rejection is never unhandled. */
  readonly report: (error: unknown, context: WebhookErrorContext) => void;
  /** Counts a delivery answered 401 for its signature or timestamp, and reports them at most once a minute (see rejected-signatures.ts). */
  readonly rejectedSignature: (outcome: ReceiverOutcome, error: unknown) => void;
  /** Reports, once per receiver, a delivery answered after its handlers despite `acknowledgeEarly`: `handle` had no `waitUntil` on a runtime that drops work after the reply. */
  readonly reportMissingWaitUntil: (outcome: ReceiverOutcome, delivery: WebhookDelivery, subject: string) => void;
  readonly now: () => number;
}

/** How a stage that stops the pipeline wants the delivery answered. */
export interface Answer {
  readonly outcome: ReceiverOutcome;
  /** Replaces the status table's message when there is something more precise to say. */
  readonly detail?: string;
}

/** Whether `value` is a thenable: handlers and stores may answer synchronously or with a promise. */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

/**
 * What a stage returns: its result at once when everything it called answered synchronously
 * (the memory store, synchronous handlers), else a promise of it. The stages after
 * verification are chained with {@link andThen}, so that a delivery whose stores and
 * handlers are synchronous waits for no tick between them: each async function and await
 * costs a promise and a turn of the microtask queue, on every delivery.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`, at once when `value` is already there, else when its promise fulfils. */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return isPromiseLike(value) ? value.then(next) : next(value);
}

/**
 * Runs one store operation, which may answer at once, throw, or return a promise: `done` gets
 * its answer, `failed` its error, thrown or rejected alike. Synchronous when the store is (see
 * {@link MaybePromise}).
 */
export function fromStore<T, R>(
  operation: () => T | PromiseLike<T>,
  done: (value: T) => MaybePromise<R>,
  failed: (error: unknown) => MaybePromise<R>,
): MaybePromise<R> {
  let answered: T | PromiseLike<T>;
  try {
    answered = operation();
  } catch (error) {
    return failed(error);
  }
  return isPromiseLike(answered) ? Promise.resolve(answered).then(done, failed) : done(answered);
}
