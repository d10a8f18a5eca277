// This file is generated. Do not edit it by hand.
// Source: specs/asyncapi.yaml (info.version 1.0.0), read from specs/dist/asyncapi.json.
// Regenerate: pnpm --filter @capi/event-types gen (pnpm build runs it).

import type { UserCreatedEvent, KycStatusChangedEvent, KycPhoneValidationChangedEvent, KycSourceOfFundsChangedEvent, CardTransactionCreatedEvent } from './models.js';

/** Every webhook event the platform sends; narrow it with `switch (event.eventType)`. */
export type WebhookEvent =
  | UserCreatedEvent
  | KycStatusChangedEvent
  | KycPhoneValidationChangedEvent
  | KycSourceOfFundsChangedEvent
  | CardTransactionCreatedEvent;

/** The `eventType` of every webhook event. */
export type WebhookEventType =
  | "user.created"
  | "kyc.status.changed"
  | "kyc.phone-validation.changed"
  | "kyc.source-of-funds.changed"
  | "card.transaction.created";

/** Event type -> event interface, for handlers typed by `eventType`. */
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

/** Every event type, in spec order. */
export const WEBHOOK_EVENT_TYPES = [
  "user.created",
  "kyc.status.changed",
  "kyc.phone-validation.changed",
  "kyc.source-of-funds.changed",
  "card.transaction.created",
] as const satisfies readonly WebhookEventType[];

/** Unix time of sending, in seconds, as decimal digits. Receivers reject a timestamp more than 300 seconds away from their clock, in either direction. */
export const WEBHOOK_TIMESTAMP_HEADER = "X-Webhook-Timestamp";

/** Base64 (standard alphabet, padded) of the 64-byte Ed25519 signature. */
export const WEBHOOK_SIGNATURE_HEADER = "X-Webhook-Signature";
