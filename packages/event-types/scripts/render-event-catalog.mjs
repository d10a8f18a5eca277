import { EventTypesGenerationError } from './generation-error.mjs';
import { tsdocComment } from './tsdoc-comment.mjs';

/**
 * The constant name for a header: `X-Webhook-Timestamp` -> `WEBHOOK_TIMESTAMP_HEADER`
 * (the `X-` prefix is dropped because it carries no meaning).
 *
 * @param {string} headerName
 * @returns {string}
 * @example
 * headerConstantName('X-Webhook-Signature') // 'WEBHOOK_SIGNATURE_HEADER'
 */
export function headerConstantName(headerName) {
  const words = headerName.replace(/^x-/i, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = `${words.join('_').toUpperCase()}_HEADER`;
  if (words.length === 0 || !/^[A-Z_][A-Z0-9_]*$/.test(name)) {
    throw new EventTypesGenerationError('INVALID_HEADER_NAME',
      `Header "${headerName}" does not give a usable constant name; header names must be letters, digits and dashes (e.g. X-Webhook-Timestamp).`);
  }
  return name;
}

/**
 * Renders the discriminated union, the event-type union, the event map, the list of
 * event types and the header-name constants. The interfaces come from `./models.js`.
 *
 * @param {import('./read-webhook-events.mjs').WebhookEventEntry[]} events
 * @param {import('./read-webhook-events.mjs').WebhookHeaderEntry[]} headers
 * @returns {string}
 * @example
 * renderEventCatalog([{ eventType: 'user.created', interfaceName: 'UserCreatedEvent', description: undefined }], [])
 */
export function renderEventCatalog(events, headers) {
  const q = (/** @type {string} */ value) => JSON.stringify(value);
  const interfaceNames = [...new Set(events.map((event) => event.interfaceName))];
  const parts = [
    `import type { ${interfaceNames.join(', ')} } from './models.js';\n`,
    `/** Every webhook event the platform sends; narrow it with \`switch (event.eventType)\`. */\n` +
      `export type WebhookEvent =\n${events.map((event) => `  | ${event.interfaceName}`).join('\n')};\n`,
    `/** The \`eventType\` of every webhook event. */\n` +
      `export type WebhookEventType =\n${events.map((event) => `  | ${q(event.eventType)}`).join('\n')};\n`,
    `/** Event type -> event interface, for handlers typed by \`eventType\`. */\n` +
      `export interface WebhookEventMap {\n${events.map((event) => `${tsdocComment(event.description, '  ')}  ${q(event.eventType)}: ${event.interfaceName};`).join('\n')}\n}\n`,
    `/** Every event type, in spec order. */\n` +
      `export const WEBHOOK_EVENT_TYPES = [\n${events.map((event) => `  ${q(event.eventType)},`).join('\n')}\n] as const satisfies readonly WebhookEventType[];\n`,
    ...headers.map((header) => `${tsdocComment(header.description ?? `The \`${header.name}\` header of every webhook request.`)}export const ${headerConstantName(header.name)} = ${q(header.name)};\n`),
  ];
  return parts.join('\n');
}
