import type { WebhookEvent } from '@capi/event-types';
import { parseWebhookEvent, type WebhookEventValidationError } from '@capi/webhook-validator';
import type { PipelineContext } from './context.js';

/** What stage 3 made of a verified body. */
export type ParsedDelivery =
  /** A valid event of a known type, and the subject it is deduplicated under. */
  | { readonly kind: 'event'; readonly event: WebhookEvent; readonly subject: string }
  /** An event type this SDK does not know: acknowledged, keyed by its own digest. */
  | { readonly kind: 'unknown'; readonly subject: string }
  /** Authentic, but refused by the schema (or not JSON at all): the dead-letter stage takes it. */
  | { readonly kind: 'invalid'; readonly errors: readonly WebhookEventValidationError[]; readonly eventType: string | undefined };

// Events that report something that happened rather than a state: each is its own subject
// (its body's digest), so that a retry is a duplicate of itself only and none ever supersedes
// another. A transaction's payload is not shown in the reference: its `data.id` may name the
// card, and a late retry of one transaction must not be dropped for a later one of that card.
const HAPPENINGS: ReadonlySet<string> = new Set(['card.transaction.created']);

/**
 * Stage 3, parse and validate, with the receiver's validator. The subject of a valid event is
 * `<eventType>:<data.id>`: a body is a duplicate only when it repeats the latest processed body
 * of its subject, so an event that brings a subject back to an earlier state (A -> B -> A) is
 * dispatched. Bodies without a subject (unknown event types, an event without `data.id`) and
 * events that are not states (`card.transaction.created`) are keyed by their own digest.
 */
export function parseEvent(context: PipelineContext, rawBody: Uint8Array, bodySha256: string, text?: string): ParsedDelivery {
  // The text of a body already checked against maxBytes: the validator need not count its UTF-8 bytes again.
  const parsed = text === undefined ? context.validator(rawBody, context.parseOptions) : parseWebhookEvent(text, { strict: context.parseOptions.strict, maxBytes: Number.MAX_SAFE_INTEGER });
  if (parsed.ok) {
    const { eventType } = parsed.event;
    const id = (parsed.event.data as { id?: unknown } | undefined)?.id;
    return { kind: 'event', event: parsed.event, subject: typeof id === 'string' && !HAPPENINGS.has(eventType) ? `${eventType}:${id}` : bodySha256 };
  }
  if (parsed.unknownEventType) return { kind: 'unknown', subject: bodySha256 };
  return { kind: 'invalid', errors: parsed.errors, eventType: parsed.eventType };
}
