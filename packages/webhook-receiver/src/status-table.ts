/**
 * Every outcome of a delivery and the one HTTP status it is answered with.
 *
 * The status is what steers the service (reference 6.2, 6.3): any 2xx ends the delivery,
 * anything else is retried after 1, 5 and 15 minutes. So a failure that a retry can cure
 * (a handler error, an unreachable store, a server misconfiguration) must be non-2xx, and a
 * delivery that a retry cannot cure but must not be lost either (an unknown event type, an
 * authentic event the schema refuses once code has taken it) is acknowledged. An authentic
 * event is never answered 4xx: only a sender's fault is. The README repeats this table; keep them in step.
 *
 * @example
 * ```ts
 * RECEIVER_OUTCOMES.handler_failed.status; // 500: the service retries
 * ```
 */
export const RECEIVER_OUTCOMES = {
  processed: { status: 200, message: 'The event was processed.' },
  acknowledged: { status: 202, message: 'The event was accepted; its handlers run after this reply (acknowledgeEarly).' },
  duplicate: { status: 200, message: 'This body is the latest processed event of its subject (eventType, data.id); the duplicate was not dispatched again.' },
  superseded: { status: 200, message: 'A newer event of its subject (eventType, data.id) was processed after this one arrived: this is the retry of an event that was not processed (its handler failed, or it was answered 409) or was answered past the service\'s reply window (30 s), or an event that reached a receiver before the processed one (or before a copy of its body that came too soon to be its retry: that state coming back) and was claimed after it; it was not dispatched, so that it does not bring back the older state (see onSuperseded).' },
  unknown_event_type: { status: 200, message: 'The event type is unknown to this receiver; it was acknowledged and given to onUnknownEvent.' },
  invalid_event_dead_lettered: { status: 202, message: 'The event is authentic but does not match this SDK version\'s schema; it was kept in the dead-letter store for replay after an upgrade.' },
  invalid_event_handled: { status: 200, message: 'The event is authentic but does not match this SDK version\'s schema; onInvalidEvent took it (there is no dead-letter store).' },
  duplicate_in_progress: { status: 409, message: 'Another event of the same subject is being processed right now; retry later.' },
  method_not_allowed: { status: 405, message: 'Webhooks are delivered with POST.' },
  body_too_large: { status: 413, message: 'The body is larger than maxBodyBytes.' },
  body_incomplete: { status: 400, message: 'The request ended before its whole body arrived; nothing was processed.' },
  missing_signature: { status: 401, message: 'The X-Webhook-Signature header is missing.' },
  missing_timestamp: { status: 401, message: 'The X-Webhook-Timestamp header is missing.' },
  malformed_signature: { status: 401, message: 'The X-Webhook-Signature header is not the base64 of a 64-byte Ed25519 signature.' },
  malformed_timestamp: { status: 401, message: 'The X-Webhook-Timestamp header is not Unix seconds in decimal digits.' },
  timestamp_too_old: { status: 401, message: 'The X-Webhook-Timestamp is older than the tolerance.' },
  timestamp_in_future: { status: 401, message: 'The X-Webhook-Timestamp is further in the future than the tolerance.' },
  invalid_signature: { status: 401, message: 'The signature does not match the body and timestamp.' },
  handler_failed: { status: 500, message: 'A handler failed; the delivery was released so that the retry is processed.' },
  invalid_event_unhandled: { status: 500, message: 'The event is authentic but does not match this SDK version\'s schema, and no code took it (no dead-letter store, and no onInvalidEvent or it failed); the service retries. See onError.' },
  body_already_consumed: { status: 500, message: 'The server read the body before the webhook receiver could.' },
  receiver_misconfigured: { status: 500, message: 'The receiver is misconfigured (see onError).' },
  internal_error: { status: 500, message: 'The receiver failed unexpectedly (see onError); retry later.' },
  public_key_unavailable: { status: 503, message: 'The webhook public key could not be fetched; retry later.' },
  dedupe_store_unavailable: { status: 503, message: 'The deduplication store is unreachable; retry later.' },
  dead_letter_store_unavailable: { status: 503, message: 'The event does not match this SDK version\'s schema and the dead-letter store could not keep it; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

/**
 * The machine-readable name of a delivery outcome, also the `code` of the reply body.
 *
 * @example
 * ```ts
 * const outcome: ReceiverOutcome = 'dedupe_store_unavailable';
 * ```
 */
export type ReceiverOutcome = keyof typeof RECEIVER_OUTCOMES;
