// This file is generated. Do not edit it by hand.
// Source: specs/asyncapi.yaml (info.version 1.0.0), read from specs/dist/asyncapi.json.
// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of @capi/event-types; pnpm build runs it too).

import type { UserCreatedEvent, KycStatusChangedEvent, KycPhoneValidationChangedEvent, KycSourceOfFundsChangedEvent, CardTransactionCreatedEvent } from './models.js';

/**
 * Every webhook event the platform sends, discriminated on `eventType`.
 *
 * @example
 * switch (event.eventType) {
 *   case "user.created":
 *     console.log(event.data); // narrowed to UserCreatedEvent
 *     break;
 * }
 */
export type WebhookEvent =
  | UserCreatedEvent
  | KycStatusChangedEvent
  | KycPhoneValidationChangedEvent
  | KycSourceOfFundsChangedEvent
  | CardTransactionCreatedEvent;

/**
 * The `eventType` of every webhook event.
 *
 * @example
 * const eventType: WebhookEventType = "user.created";
 */
export type WebhookEventType =
  | "user.created"
  | "kyc.status.changed"
  | "kyc.phone-validation.changed"
  | "kyc.source-of-funds.changed"
  | "card.transaction.created";

/**
 * Event type -> event interface, for handlers typed by `eventType`.
 *
 * @example
 * type Handler<T extends WebhookEventType> = (event: WebhookEventMap[T]) => Promise<void>;
 */
export interface WebhookEventMap {
  /** A user was created */
  "user.created": UserCreatedEvent;
  /** A user's KYC status changed */
  "kyc.status.changed": KycStatusChangedEvent;
  /** A user's phone validation changed */
  "kyc.phone-validation.changed": KycPhoneValidationChangedEvent;
  /** A user's source of funds changed */
  "kyc.source-of-funds.changed": KycSourceOfFundsChangedEvent;
  /** A card transaction was created */
  "card.transaction.created": CardTransactionCreatedEvent;
}

/**
 * Every event type, in spec order. Frozen: the list is shared by everything that imports it.
 *
 * @example
 * for (const eventType of WEBHOOK_EVENT_TYPES) console.log(eventType);
 */
export const WEBHOOK_EVENT_TYPES = /* @__PURE__ */ Object.freeze([
  "user.created",
  "kyc.status.changed",
  "kyc.phone-validation.changed",
  "kyc.source-of-funds.changed",
  "card.transaction.created",
] as const) satisfies readonly WebhookEventType[];

/**
 * Unix time of sending, in seconds, as decimal digits. Receivers reject a timestamp more than 300 seconds away from their clock, in either direction.
 *
 * @example
 * request.headers.get(WEBHOOK_TIMESTAMP_HEADER); // reads "X-Webhook-Timestamp"
 */
export const WEBHOOK_TIMESTAMP_HEADER = "X-Webhook-Timestamp";

/**
 * Base64 (standard alphabet, padded) of the 64-byte Ed25519 signature.
 *
 * @example
 * request.headers.get(WEBHOOK_SIGNATURE_HEADER); // reads "X-Webhook-Signature"
 */
export const WEBHOOK_SIGNATURE_HEADER = "X-Webhook-Signature";
