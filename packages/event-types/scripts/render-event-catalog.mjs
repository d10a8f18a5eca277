import { EventTypesGenerationError } from './generation-error.mjs';
import { tsdocComment } from '@capi/codegen-kit';

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
  const first = q(events[0]?.eventType ?? 'event.type');
  const parts = [
    `import type { ${interfaceNames.join(', ')} } from './models.js';\n`,
    tsdocComment(`Every webhook event the platform sends, discriminated on \`eventType\`.\n\n@example\nswitch (event.eventType) {\n  case ${first}:\n    console.log(event.data); // narrowed to ${events[0]?.interfaceName ?? 'its interface'}\n    break;\n}`) +
      `export type WebhookEvent =\n${events.map((event) => `  | ${event.interfaceName}`).join('\n')};\n`,
    tsdocComment(`The \`eventType\` of every webhook event.\n\n@example\nconst eventType: WebhookEventType = ${first};`) +
      `export type WebhookEventType =\n${events.map((event) => `  | ${q(event.eventType)}`).join('\n')};\n`,
    tsdocComment(`Event type -> event interface, for handlers typed by \`eventType\`.\n\n@example\ntype Handler<T extends WebhookEventType> = (event: WebhookEventMap[T]) => Promise<void>;`) +
      `export interface WebhookEventMap {\n${events.map((event) => `${tsdocComment(event.description, '  ')}  ${q(event.eventType)}: ${event.interfaceName};`).join('\n')}\n}\n`,
    tsdocComment(`Every event type, in spec order. Frozen: the list is shared by everything that imports it.\n\n@example\nfor (const eventType of WEBHOOK_EVENT_TYPES) console.log(eventType);`) +
      `export const WEBHOOK_EVENT_TYPES = /* @__PURE__ */ Object.freeze([\n${events.map((event) => `  ${q(event.eventType)},`).join('\n')}\n] as const) satisfies readonly WebhookEventType[];\n`,
    ...headers.map((header) => {
      const constant = headerConstantName(header.name);
      const description = header.description ?? `The \`${header.name}\` header of every webhook request.`;
      return `${tsdocComment(`${description}\n\n@example\nrequest.headers.get(${constant}); // reads ${q(header.name)}`)}export const ${constant} = ${q(header.name)};\n`;
    }),
  ];
  return parts.join('\n');
}
