import type { WebhookEventValidationError } from '@capi/webhook-validator';

/**
 * Machine-readable reasons a {@link WebhookReceiverError} is thrown.
 *
 * @example
 * ```ts
 * if (error instanceof WebhookReceiverError && error.code === 'body_already_consumed') fixMiddlewareOrder();
 * ```
 */
export type WebhookReceiverErrorCode =
  /** An option of `createWebhookReceiver` or of a dedupe store is out of range or of the wrong type. */
  | 'invalid_options'
  /** The request body was read (usually parsed by a body parser) before the receiver could read the raw bytes. */
  | 'body_already_consumed'
  /** The request body is larger than `maxBodyBytes`. */
  | 'body_too_large'
  /** The request ended (the sender disconnected) before the whole body arrived. */
  | 'body_incomplete'
  /**
   * Reported to `onError`, not thrown: a delivery waited `subjectWaitMs` for the handler of an
   * earlier event of its subject and was answered 409 (the service retries it minutes later).
   */
  | 'subject_wait_exceeded'
  /**
   * Reported to `onError`, not thrown: a delivery's handlers finished after the deduplication
   * store had lost its claim (it expired after `claimTtlMs` and another delivery took the subject,
   * or a Redis restart or failover without persistence lost it), so another event of the subject
   * may have been handled at the same time. Check the subject's data against the API; keep
   * `claimTtlMs` above the longest handlers and the store's data through restarts.
   */
  | 'claim_lost'
  /**
   * Reported to `onError`, not thrown, at most once a minute: deliveries were answered 401 for a
   * signature that does not verify with the configured key, a timestamp outside
   * `toleranceSeconds`, or missing or malformed `X-Webhook-*` headers. Forgeries and scanners give
   * it, and so does a wrong or rotated key, a clock off, or a proxy that drops those headers:
   * the message says how many, and what to check.
   */
  | 'signatures_rejected'
  /**
   * Reported to `onError`, not thrown, once per delivery: it was answered after its handlers, 30
   * seconds or more after it arrived (its wait in its subject's line, then its handlers), the time
   * the service waits for an answer, so the service counted the attempt failed and sends the body
   * again (a retry answered 200 `duplicate` when the handlers succeeded). The message says how
   * long it took; answer sooner (`acknowledgeEarly`, or queue the slow work). Not after an
   * early 202, nor in a replay.
   */
  | 'handler_outlived_reply_window'
  /**
   * Reported to `onError`, not thrown, once per receiver: `acknowledgeEarly` is set but
   * `receiver.handle(request)` got no `waitUntil` on Cloudflare Workers, which cancels the work
   * a request leaves running after its Response. Rather than answer 202 for handlers that would
   * never run, the receiver answered after them (as without `acknowledgeEarly`). Pass
   * `{ waitUntil: ctx.waitUntil.bind(ctx) }`.
   */
  | 'wait_until_missing';

/**
 * A usage or configuration problem of the receiver: wrong options, or a server that hands the
 * receiver a body it can no longer verify. The message says what to change.
 *
 * @example
 * ```ts
 * try { createWebhookReceiver({ publicKey, maxBodyBytes: -1 }); }
 * catch (error) { if (error instanceof WebhookReceiverError) console.log(error.code); } // 'invalid_options'
 * ```
 */
export class WebhookReceiverError extends Error {
  override readonly name = 'WebhookReceiverError';
  readonly code: WebhookReceiverErrorCode;

  constructor(code: WebhookReceiverErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Machine-readable reasons a {@link DedupeStoreError} is thrown.
 *
 * @example
 * ```ts
 * if (error instanceof DedupeStoreError && error.code === 'dedupe_store_unavailable') metrics.increment('redis_down');
 * ```
 */
export type DedupeStoreErrorCode =
  /** The store did not answer, or answered with an error; the delivery is answered 503 and retried. */
  | 'dedupe_store_unavailable'
  /** The Redis client passed to `createRedisDedupeStore` is neither ioredis, node-redis nor a command function. */
  | 'unsupported_redis_client'
  /** The store answered something the protocol does not allow (for example a key holding a foreign value). */
  | 'unexpected_store_reply'
  /** A `SubjectWaiter` a store refuses: an id the Redis store cannot keep (only letters, digits, `-` and `_`), or a `leftMs` that is not a number above 0 and at most a day; the receiver's own waiters always fit. */
  | 'invalid_waiter'
  /** The Redis store's `subscriber` could not subscribe: deliveries waiting for a subject held in another process claim it at their next try (up to 250 ms) instead of at once. Reported to onError; nothing is lost. */
  | 'wake_ups_unavailable';

/**
 * A failure of the deduplication store. The receiver answers `503` when a claim fails this
 * way, so the service retries and nothing is dropped (fail closed).
 *
 * @example
 * ```ts
 * onError(error) { if (error instanceof DedupeStoreError) metrics.increment('webhook.store_down'); }
 * ```
 */
export class DedupeStoreError extends Error {
  override readonly name = 'DedupeStoreError';
  readonly code: DedupeStoreErrorCode;

  constructor(code: DedupeStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The body stream failed before its end: the sender went away, which is no fault of the receiver. */
export function bodyIncompleteError(cause: unknown): WebhookReceiverError {
  return new WebhookReceiverError('body_incomplete',
    `The request ended before its whole body arrived (${cause instanceof Error ? cause.message : String(cause)}); nothing was processed.`, { cause });
}

/** The `body_too_large` error both adapters throw, so that its wording is one. */
export function bodyTooLargeError(maxBytes: number): WebhookReceiverError {
  return new WebhookReceiverError('body_too_large',
    `The body is larger than maxBodyBytes (${maxBytes} bytes); raise maxBodyBytes if real deliveries are this large.`);
}

/**
 * Machine-readable reasons a {@link DeadLetterStoreError} is thrown.
 *
 * @example
 * ```ts
 * if (error instanceof DeadLetterStoreError && error.code === 'dead_letter_store_full') alert('replay or drain the dead letters');
 * ```
 */
export type DeadLetterStoreErrorCode =
  /** The store did not answer, or answered with an error; the delivery is answered 503 and retried. */
  | 'dead_letter_store_unavailable'
  /** The memory or Redis store holds `maxEntries` entries already; the delivery is answered 503 and retried. */
  | 'dead_letter_store_full'
  /** The Redis client passed to `createRedisDeadLetterStore` is neither ioredis, node-redis nor a command function. */
  | 'unsupported_redis_client'
  /** The store answered something this store did not write (a foreign key under its prefix). */
  | 'unexpected_store_reply';

/**
 * A failure of the dead-letter store. An authentic event that fails the schema is answered
 * `503` when it could not be kept, so the service retries and nothing is dropped.
 *
 * @example
 * ```ts
 * onError(error) { if (error instanceof DeadLetterStoreError) metrics.increment('webhook.dead_letters_down'); }
 * ```
 */
export class DeadLetterStoreError extends Error {
  override readonly name = 'DeadLetterStoreError';
  readonly code: DeadLetterStoreErrorCode;

  constructor(code: DeadLetterStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * An authentic delivery (its signature verified) that the schema refuses, as `onError` receives
 * it: the raw body, the problems, and the outcome it was answered with in the error context.
 * Schema drift is normal (the service adds an enum value), so this is news, not an attack:
 * upgrade the SDK, then `receiver.replay()` what the dead-letter store kept.
 *
 * @example
 * ```ts
 * onError(error) { if (error instanceof InvalidWebhookEventError) log.warn(error.errors, 'upgrade @capi/webhook-receiver'); }
 * ```
 */
export class InvalidWebhookEventError extends Error {
  override readonly name = 'InvalidWebhookEventError';
  readonly code = 'invalid_event';
  /** The body exactly as received and verified. */
  readonly rawBody: Uint8Array;
  /** What the validator found wrong (paths, keywords, messages; never the values). */
  readonly errors: readonly WebhookEventValidationError[];
  /** The body's `eventType`, when it named one this SDK knows. */
  readonly eventType: string | undefined;

  constructor(rawBody: Uint8Array, errors: readonly WebhookEventValidationError[], eventType: string | undefined) {
    super(`An authentic ${eventType ?? 'webhook'} delivery does not match this SDK version's schema: ${describeProblems(errors)}. ` +
      'It never reaches the typed handlers; keep it with a deadLetters store and receiver.replay() it after upgrading @capi/webhook-receiver.');
    this.rawBody = rawBody;
    this.errors = errors;
    this.eventType = eventType;
  }
}

/** The first few validation messages, joined: the detail of a reply and of an error message. */
export function describeProblems(errors: readonly WebhookEventValidationError[]): string {
  return errors.slice(0, 5).map((error) => error.message).join('; ');
}
