import { readWebhookEvents as readEventList, WebhookEventListError } from '@capi/specs/webhook-events';
import { EventTypesGenerationError } from './generation-error.mjs';

/**
 * @typedef {{ eventType: string, interfaceName: string, description: string | undefined }} WebhookEventEntry
 */

/**
 * The event list as @capi/specs reads it (@asyncapi/parser), with its refusals as
 * `EventTypesGenerationError`s of the same code.
 *
 * @param {any} doc bundled AsyncAPI 3 document
 */
async function readEvents(doc) {
  try {
    return await readEventList(doc);
  } catch (error) {
    if (error instanceof WebhookEventListError) throw new EventTypesGenerationError(error.code, error.message);
    throw error;
  }
}

/**
 * @typedef {{ name: string, description: string | undefined }} WebhookHeaderEntry
 */

/**
 * The webhook events of the spec and the headers their messages declare, read once: for each
 * message, the `eventType` constant of its payload and the payload's `title` (the interface
 * name modelina gives it); the headers as the union over all messages, in spec order.
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {Promise<{ events: WebhookEventEntry[], headers: WebhookHeaderEntry[] }>}
 * @example
 * const { events, headers } = await readWebhookEventCatalog(doc);
 * events[0]; // { eventType: 'user.created', interfaceName: 'UserCreatedEvent', description: 'A user was created' }
 * headers.map((h) => h.name); // ['X-Webhook-Timestamp', 'X-Webhook-Signature']
 */
export async function readWebhookEventCatalog(doc) {
  const entries = await readEvents(doc);
  /** @type {WebhookHeaderEntry[]} */
  const headers = [];
  for (const entry of entries) {
    for (const header of entry.headers) if (!headers.some((known) => known.name === header.name)) headers.push(header);
  }
  const events = entries.map((entry) => ({
    eventType: entry.eventType,
    interfaceName: entry.payloadTitle,
    description: entry.summary ?? entry.description ?? entry.payloadDescription,
  }));
  return { events, headers };
}
