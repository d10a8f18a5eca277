import { strictValidators, tolerantValidators } from './generated/validators.js';
import { assertOptions, WebhookValidatorOptionError } from './webhook-validator-option-error.js';
import { toValidationErrors } from './schema-errors.js';
import { invalid, type WebhookEventValidationResult } from './validation-result.js';
import type { WebhookEvent } from '@capi/event-types';

/**
 * Options of `validateWebhookEvent` and `parseWebhookEvent`.
 *
 * @example
 * validateWebhookEvent(body, { strict: true });
 */
export interface WebhookEventValidationOptions {
  /**
   * Reject properties the schemas do not list (default `false`: the tolerant reader accepts
   * them, because the service may add fields at any time). `card.transaction.created`'s
   * `data` stays open in both modes: its payload is not specified.
   */
  strict?: boolean;
}

/**
 * Validates an already-parsed webhook body against the schema of its `eventType`, with
 * validators compiled at build time (no `eval`, CSP-safe). Never throws on bad input.
 *
 * The `eventType` selects the schema, so the errors are about that event only. An unknown
 * `eventType` gives `{ ok: false, unknownEventType: true }`: acknowledge and ignore it.
 *
 * @example
 * const result = validateWebhookEvent(JSON.parse(rawBody));
 * if (result.ok) {
 *   if (result.event.eventType === 'kyc.status.changed') console.log(result.event.data.kycStatus);
 * } else if (!result.unknownEventType) {
 *   console.warn(result.errors); // [{ path: '/data/kycStatus', keyword: 'enum', message: '...' }]
 * }
 */
export function validateWebhookEvent(value: unknown, options?: WebhookEventValidationOptions): WebhookEventValidationResult {
  assertOptions(options, VALIDATION_OPTION_NAMES, 'validateWebhookEvent');
  return validateWith(value, options);
}

const VALIDATION_OPTION_NAMES = Object.keys({ strict: true } satisfies { [Name in keyof Required<WebhookEventValidationOptions>]: true });

/** `validateWebhookEvent` with options whose names were checked by the caller (`parseWebhookEvent` has more). */
export function validateWith(value: unknown, options: WebhookEventValidationOptions | undefined): WebhookEventValidationResult {
  const validators = options === undefined ? tolerantValidators : validatorsFor(options);
  // Hot path first (a known event type): the checks below only run for bodies that fail.
  const eventType: unknown = typeof value === 'object' && value !== null ? (value as { eventType?: unknown }).eventType : undefined;
  const validate = typeof eventType === 'string' ? validators.get(eventType) : undefined;
  if (validate !== undefined) {
    if (validate(value)) return { ok: true, event: value as WebhookEvent };
    return { ok: false, unknownEventType: false, eventType: eventType as string, errors: toValidationErrors(validate.errors ?? [], value) };
  }
  return rejectEnvelope(value, eventType, validators);
}

function rejectEnvelope(value: unknown, eventType: unknown, validators: ReadonlyMap<string, unknown>): WebhookEventValidationResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid('', 'type', `the event must be a JSON object {"eventType", "data"} (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`);
  }
  if (eventType === undefined) {
    return invalid('/eventType', 'required', '/eventType is missing: every event names its type, e.g. "user.created"');
  }
  if (typeof eventType !== 'string') {
    return invalid('/eventType', 'type', `/eventType must be string (got ${eventType === null ? 'null' : typeof eventType})`);
  }
  return {
    ok: false,
    unknownEventType: true,
    eventType,
    errors: [{
      path: '/eventType',
      keyword: 'unknownEventType',
      message: `/eventType names an event type this version does not know (known: ${[...validators.keys()].join(', ')}): acknowledge and ignore it, or upgrade @capi/webhook-validator`,
    }],
  };
}

function validatorsFor(options: WebhookEventValidationOptions) {
  const strict: unknown = options.strict;
  if (strict === undefined || strict === false) return tolerantValidators;
  if (strict === true) return strictValidators;
  throw new WebhookValidatorOptionError('strict', `options.strict must be a boolean (got ${strict === null ? 'null' : typeof strict})`);
}
