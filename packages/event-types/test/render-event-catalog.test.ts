import { describe, expect, it } from 'vitest';
import { EventTypesGenerationError } from '../scripts/generation-error.mjs';
import { headerConstantName, renderEventCatalog } from '../scripts/render-event-catalog.mjs';

describe('renders the discriminated union, the event map, the type list and the header constants', () => {
  it('given two events and one header, renders exactly this', () => {
    const code = renderEventCatalog(
      [
        { eventType: 'user.created', interfaceName: 'UserCreatedEvent', description: 'A user was created.' },
        { eventType: 'card.transaction.created', interfaceName: 'CardTransactionCreatedEvent', description: undefined },
      ],
      [{ name: 'X-Webhook-Timestamp', description: 'Unix seconds.' }],
    );
    expect(code).toBe(`import type { UserCreatedEvent, CardTransactionCreatedEvent } from './models.js';

/**
 * Every webhook event the platform sends, discriminated on \`eventType\`.
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
  | CardTransactionCreatedEvent;

/**
 * The \`eventType\` of every webhook event.
 *
 * @example
 * const eventType: WebhookEventType = "user.created";
 */
export type WebhookEventType =
  | "user.created"
  | "card.transaction.created";

/**
 * Event type -> event interface, for handlers typed by \`eventType\`.
 *
 * @example
 * type Handler<T extends WebhookEventType> = (event: WebhookEventMap[T]) => Promise<void>;
 */
export interface WebhookEventMap {
  /** A user was created. */
  "user.created": UserCreatedEvent;
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
  "card.transaction.created",
] as const) satisfies readonly WebhookEventType[];

/**
 * Unix seconds.
 *
 * @example
 * request.headers.get(WEBHOOK_TIMESTAMP_HEADER); // reads "X-Webhook-Timestamp"
 */
export const WEBHOOK_TIMESTAMP_HEADER = "X-Webhook-Timestamp";
`);
  });

  it('imports an interface once when two event types share it', () => {
    const code = renderEventCatalog(
      [
        { eventType: 'a.happened', interfaceName: 'GenericEvent', description: undefined },
        { eventType: 'b.happened', interfaceName: 'GenericEvent', description: undefined },
      ],
      [],
    );
    expect(code.split('\n')[0]).toBe("import type { GenericEvent } from './models.js';");
  });

  it('keeps a description containing */ inside its comment', () => {
    const code = renderEventCatalog([{ eventType: 'a', interfaceName: 'A', description: 'ends */ early' }], []);
    expect(code).toContain('/** ends *\\/ early */');
  });
});

describe('names a header constant after the header, without its X- prefix', () => {
  it.each([
    ['X-Webhook-Timestamp', 'WEBHOOK_TIMESTAMP_HEADER'],
    ['X-Webhook-Signature', 'WEBHOOK_SIGNATURE_HEADER'],
    ['x-request-id', 'REQUEST_ID_HEADER'],
    ['Idempotency-Key', 'IDEMPOTENCY_KEY_HEADER'],
  ])('%s -> %s', (header, constant) => {
    expect(headerConstantName(header)).toBe(constant);
  });

  it('rejects a header name that gives no constant name', () => {
    expect(() => headerConstantName('X-')).toThrowError(EventTypesGenerationError);
    expect(() => headerConstantName('X-')).toThrowError(/letters, digits and dashes/);
  });
});
