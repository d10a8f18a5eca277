import { EventTypesGenerationError } from './generation-error.mjs';
import { resolveRef } from './resolve-ref.mjs';

/**
 * @typedef {{ eventType: string, interfaceName: string, description: string | undefined }} WebhookEventEntry
 */

/**
 * Every message the spec's operations carry, in spec order, each once. AsyncAPI 3 lists
 * messages on operations (falling back to the channel's messages when an operation
 * names none), so that is where the set of webhook events is read from.
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {any[]} resolved message objects
 */
function readMessages(doc) {
  if (typeof doc?.asyncapi !== 'string' || !doc.asyncapi.startsWith('3.')) {
    throw new EventTypesGenerationError('NOT_ASYNCAPI_3',
      `Expected an AsyncAPI 3.x document, got asyncapi: ${JSON.stringify(doc?.asyncapi)}. Point the generator at specs/dist/asyncapi.json.`);
  }
  /** @type {any[]} */
  const messages = [];
  const seen = new Set();
  /** @param {any} message */
  const add = (message) => {
    const resolved = resolveRef(doc, message);
    if (!seen.has(resolved)) { seen.add(resolved); messages.push(resolved); }
  };
  for (const operation of Object.values(doc.operations ?? {})) {
    const op = resolveRef(doc, operation);
    if (Array.isArray(op.messages) && op.messages.length > 0) op.messages.forEach(add);
    else Object.values(resolveRef(doc, op.channel)?.messages ?? {}).forEach(add);
  }
  if (messages.length === 0) {
    for (const channel of Object.values(doc.channels ?? {})) Object.values(resolveRef(doc, channel).messages ?? {}).forEach(add);
  }
  return messages;
}

/**
 * The webhook events of the spec: for each message, the `eventType` constant of its
 * payload and the payload's `title` (the interface name modelina gives it).
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {WebhookEventEntry[]}
 * @example
 * readWebhookEvents(doc) // [{ eventType: 'user.created', interfaceName: 'UserCreatedEvent', ... }]
 */
export function readWebhookEvents(doc) {
  /** @type {WebhookEventEntry[]} */
  const events = [];
  for (const message of readMessages(doc)) {
    const payload = resolveRef(doc, message.payload);
    const where = `message "${message.name ?? message.title ?? '?'}"`;
    if (typeof payload?.title !== 'string' || payload.title === '') {
      throw new EventTypesGenerationError('EVENT_WITHOUT_TITLE',
        `The payload of ${where} has no title; give the event schema a title (its file name in specs/schemas/) so it gets a named interface.`);
    }
    const eventTypeSchema = resolveRef(doc, payload.properties?.eventType);
    const eventType = eventTypeSchema?.const ?? (eventTypeSchema?.enum?.length === 1 ? eventTypeSchema.enum[0] : undefined);
    if (typeof eventType !== 'string' || !(payload.required ?? []).includes('eventType')) {
      throw new EventTypesGenerationError('EVENT_WITHOUT_EVENT_TYPE',
        `Schema ${payload.title} (${where}) must have a required property eventType with a string const, e.g. eventType: { const: "user.created" }, so that WebhookEvent can be discriminated on it.`);
    }
    if (events.some((event) => event.eventType === eventType)) {
      throw new EventTypesGenerationError('DUPLICATE_EVENT_TYPE',
        `eventType "${eventType}" is used by two messages (second: ${payload.title}); each event type must map to exactly one schema.`);
    }
    events.push({ eventType, interfaceName: payload.title, description: message.summary ?? message.description ?? payload.description });
  }
  if (events.length === 0) {
    throw new EventTypesGenerationError('NO_EVENTS',
      'The AsyncAPI document has no messages reachable from its operations or channels; add the webhook events to specs/asyncapi.yaml.');
  }
  return events;
}

/**
 * @typedef {{ name: string, description: string | undefined }} WebhookHeaderEntry
 */

/**
 * The headers the spec's messages declare (union over all messages, spec order).
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {WebhookHeaderEntry[]}
 * @example
 * readWebhookHeaders(doc).map((h) => h.name) // ['X-Webhook-Timestamp', 'X-Webhook-Signature']
 */
export function readWebhookHeaders(doc) {
  /** @type {WebhookHeaderEntry[]} */
  const headers = [];
  for (const message of readMessages(doc)) {
    const schema = resolveRef(doc, message.headers);
    for (const [name, property] of Object.entries(schema?.properties ?? {})) {
      if (!headers.some((header) => header.name === name)) {
        headers.push({ name, description: resolveRef(doc, property)?.description });
      }
    }
  }
  return headers;
}
