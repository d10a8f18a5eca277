import type { WebhookEventValidationError } from '@capi/webhook-validator';

/**
 * One authentic delivery that this SDK version could not validate (or whose handlers failed,
 * or had not finished yet after an early 202), as the receiver keeps it for a later {@link WebhookReceiver.replay}: the
 * raw bytes exactly as signed, and why they were kept.
 *
 * @example
 * ```ts
 * for (const entry of await deadLetters.list(10)) console.log(entry.bodySha256, entry.errors.map((e) => e.message));
 * ```
 */
export interface DeadLetterEntry {
  /** Lower-case hex SHA-256 of `rawBody`: the entry's key (`put` of a second copy keeps the first entry; the receiver `replace`s it when the copy is a later event). */
  readonly bodySha256: string;
  /** The body exactly as received and verified. */
  readonly rawBody: Uint8Array;
  /** `X-Webhook-Timestamp` of the delivery that was kept, Unix seconds (when that attempt was sent). */
  readonly timestamp: number;
  /** `X-Webhook-Signature` of that delivery, kept so that the entry can be re-verified by hand. */
  readonly signature: string;
  /**
   * The event's place, in ms since the epoch: when the receiver received the delivery (its
   * `delivery.receivedAt`), or, for the retry of an event that failed before, when that event's
   * first attempt was received (the deduplication store's claim says so). Replay runs the oldest
   * first, and the deduplication store places the event there, so that an event of its subject
   * received after it and processed since supersedes it.
   */
  readonly receivedAt: number;
  /** What the validator found wrong (paths, keywords, messages; never the values); none for a `handler_failed` entry. */
  readonly errors: readonly WebhookEventValidationError[];
  /**
   * Why it was kept: `invalid_event` (the default when absent) for a body this SDK version's
   * schema refused; `handler_failed` for a valid event whose handlers failed: before its 500 (the
   * service gives it up after its third retry), or after an early 202 (`acknowledgeEarly`), which
   * the service does not send again; `in_flight` for a valid event
   * answered with an early 202 whose handlers had not finished when it was listed: kept before
   * the 202 and deleted once they succeed, it stays only when its process stopped first (or is
   * still running them). A store must keep `reason` as put: `replay()` leaves an `in_flight`
   * entry alone until it is older than the dedupe store's `claimTtlMs`.
   */
  readonly reason?: DeadLetterReason;
}

/**
 * Why a {@link DeadLetterEntry} was kept.
 *
 * @example
 * ```ts
 * const failedAfterReply = entries.filter((entry) => (entry.reason satisfies DeadLetterReason | undefined) === 'handler_failed');
 * ```
 */
export type DeadLetterReason = 'invalid_event' | 'handler_failed' | 'in_flight';

/**
 * Where the receiver keeps authentic deliveries that fail this SDK's schema (a new enum value,
 * an omitted field), and events whose handlers failed, so that none is lost: `createMemoryDeadLetterStore()`,
 * `createRedisDeadLetterStore({ client })`, or your own. Three operations, and an optional
 * fourth (`replace`); each may answer synchronously or with a promise, and throws (or rejects)
 * when the store cannot answer.
 *
 * @example
 * ```ts
 * const deadLetters: DeadLetterStore = createRedisDeadLetterStore({ client: redis });
 * const receiver = createWebhookReceiver({ publicKey, deadLetters });
 * // after upgrading the SDK:
 * await receiver.replay();
 * ```
 */
export interface DeadLetterStore {
  /**
   * Keeps `entry` durably under `entry.bodySha256` (every field, `reason` included); when that
   * digest is kept already (a redelivery of the same body), the first entry stays as it is. The
   * receiver answers 2xx only once this has resolved.
   */
  put(entry: DeadLetterEntry): void | Promise<void>;
  /** Up to `limit` entries, oldest `receivedAt` first. */
  list(limit: number): readonly DeadLetterEntry[] | Promise<readonly DeadLetterEntry[]>;
  /** Forgets the entry (the receiver calls it once a replay has processed it); unknown digests are ignored. */
  delete(bodySha256: string): void | Promise<void>;
  /**
   * Optional. Keeps `entry` under `entry.bodySha256` in place of any entry of that digest (every
   * field as given, `receivedAt` included, so that `list` returns it in the later place), as ONE
   * operation: when it throws or rejects, the store is as it was, the earlier entry (if any)
   * still there. Counts as a new entry for a bound such as `maxEntries` only when no entry of
   * that digest was kept. The receiver calls it when a later copy of a kept body must be kept
   * (the user went back to a state, A -> B -> A; an `in_flight` entry becoming `handler_failed`).
   * A store without it gets `delete` then `put`: should the put fail after the delete (or the
   * process stop between the two), neither entry is left.
   */
  replace?(entry: DeadLetterEntry): void | Promise<void>;
}
