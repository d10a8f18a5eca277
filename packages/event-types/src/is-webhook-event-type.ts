import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './generated/events.js';

// Marked pure so that a bundle importing only a header constant drops the set and the list.
const knownEventTypes: ReadonlySet<string> = /* @__PURE__ */ new Set(WEBHOOK_EVENT_TYPES);

/**
 * Whether `value` is an event type this version of the SDK knows. Receivers use it to
 * route new, unknown kinds to a fallback instead of failing on them.
 *
 * @example
 * if (!isWebhookEventType(body.eventType)) return new Response(null, { status: 204 });
 */
export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && knownEventTypes.has(value);
}
