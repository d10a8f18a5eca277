import type { WebhookEvent } from '@capi/event-types';

/**
 * One reason why a webhook body is not a valid event.
 *
 * @example
 * { path: '/data/kycStatus', keyword: 'enum', message: '/data/kycStatus must be one of: notStarted, ...' }
 */
export interface WebhookEventValidationError {
  /** JSON Pointer (RFC 6901) to the offending value; for a missing property, to where it should be. `''` is the whole body. */
  path: string;
  /** What is wrong, in words, naming the path. Never contains the offending value (it may be personal data). */
  message: string;
  /**
   * The JSON Schema keyword that failed (`required`, `type`, `enum`, `const`, `additionalProperties`...),
   * or, for failures outside the schema: `unknownEventType`, `json`, `encoding`, `maxBytes`,
   * `maxDepth`, `forbiddenKey`, `rawBody`.
   */
  keyword: string;
}

/**
 * The body is a valid event of a known type.
 *
 * @example
 * const result = validateWebhookEvent(body);
 * if (result.ok) console.log(result.event.eventType);
 */
export interface WebhookEventValidationSuccess {
  ok: true;
  /** The validated body itself (not a copy), typed by its `eventType`. */
  event: WebhookEvent;
}

/**
 * The body names an event type this version does not know. Receivers normally acknowledge
 * such events (2xx) and ignore them, so that a new kind of event never breaks them.
 *
 * @example
 * if (!result.ok && result.unknownEventType) return new Response(null, { status: 204 });
 */
export interface WebhookEventUnknownTypeFailure {
  ok: false;
  unknownEventType: true;
  /** The event type that was sent. */
  eventType: string;
  errors: WebhookEventValidationError[];
}

/**
 * The body is not a valid event: malformed, too large or too deep, or not matching the schema
 * of its event type.
 *
 * @example
 * if (!result.ok) console.warn(result.errors.map((error) => error.message).join('; '));
 */
export interface WebhookEventInvalidFailure {
  ok: false;
  unknownEventType: false;
  /** The `eventType` of the body, when it had a known one. */
  eventType?: string;
  /** At least one error. */
  errors: WebhookEventValidationError[];
}

/**
 * What `validateWebhookEvent` and `parseWebhookEvent` return; they never throw on bad input.
 *
 * @example
 * const result: WebhookEventValidationResult = parseWebhookEvent(rawBody);
 */
export type WebhookEventValidationResult =
  | WebhookEventValidationSuccess
  | WebhookEventUnknownTypeFailure
  | WebhookEventInvalidFailure;

/** Builds the failure result of a body that could not be validated at all. */
export function invalid(path: string, keyword: string, message: string, eventType?: string): WebhookEventInvalidFailure {
  const failure: WebhookEventInvalidFailure = { ok: false, unknownEventType: false, errors: [{ path, message, keyword }] };
  if (eventType !== undefined) failure.eventType = eventType;
  return failure;
}
