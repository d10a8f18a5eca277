import type { WebhookEvent } from '@capi/event-types';
import type { WebhookEventValidationError } from '@capi/webhook-validator';
import type { PipelineContext } from './context.js';

/** What stage 3 made of a verified body. */
export type ParsedDelivery =
  /** A valid event of a known type, and the subject it is deduplicated under. */
  | { readonly kind: 'event'; readonly event: WebhookEvent; readonly subject: string }
  /** An event type this SDK does not know: acknowledged, keyed by its own digest. */
  | { readonly kind: 'unknown'; readonly subject: string }
  /** Authentic, but refused by the schema (or not JSON at all): the dead-letter stage takes it. */
  | { readonly kind: 'invalid'; readonly errors: readonly WebhookEventValidationError[]; readonly eventType: string | undefined };

/**
 * Stage 3, parse and validate, with the receiver's validator. The subject of a valid event is
 * `<eventType>:<data.id>`: a body is a duplicate only when it repeats the latest processed body
 * of its subject, so an event that brings a subject back to an earlier state (A -> B -> A) is
 * dispatched. Bodies without a subject (unknown event types, an event without `data.id`) fall
 * back to their own digest.
 */
export function parseEvent(context: PipelineContext, rawBody: Uint8Array, bodySha256: string): ParsedDelivery {
  const parsed = context.validator(rawBody, context.parseOptions);
  if (parsed.ok) {
    const id = (parsed.event.data as { id?: unknown } | undefined)?.id;
    return { kind: 'event', event: parsed.event, subject: typeof id === 'string' ? `${parsed.event.eventType}:${id}` : bodySha256 };
  }
  if (parsed.unknownEventType) return { kind: 'unknown', subject: bodySha256 };
  return { kind: 'invalid', errors: parsed.errors, eventType: parsed.eventType };
}
