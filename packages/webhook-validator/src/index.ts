export { validateWebhookEvent, type WebhookEventValidationOptions } from './validate-webhook-event.js';
export { parseWebhookEvent, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, type ParseWebhookEventOptions } from './parse-webhook-event.js';
export { WebhookValidatorOptionError } from './webhook-validator-option-error.js';
export type {
  WebhookEventValidationError,
  WebhookEventValidationResult,
  WebhookEventValidationSuccess,
  WebhookEventUnknownTypeFailure,
  WebhookEventInvalidFailure,
} from './validation-result.js';
export type { WebhookEvent, WebhookEventType } from '@capi/event-types';
