/**
 * Types of the capi webhook events, generated from the AsyncAPI spec.
 *
 * @example
 * import type { WebhookEvent } from '@capi/event-types';
 * function handle(event: WebhookEvent) {
 *   if (event.eventType === 'kyc.status.changed') console.log(event.data.kycStatus);
 * }
 *
 * @packageDocumentation
 */
export type * from './generated/models.js';
export type { WebhookEvent, WebhookEventMap, WebhookEventType } from './generated/events.js';
export { WEBHOOK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './generated/events.js';
export { isWebhookEventType } from './is-webhook-event-type.js';
