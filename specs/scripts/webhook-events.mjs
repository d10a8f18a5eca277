// `@capi/specs/webhook-events`: the one reader of "the list of webhook events", for every
// consumer (the event types, the validator, the docs, the agreement test). It reads the bundled
// AsyncAPI document through @asyncapi/parser, so that what counts as an event (the messages of
// the operations, else of their channels) is decided by the AsyncAPI tooling, not by a walker
// of our own.
import { Parser } from '@asyncapi/parser';

/**
 * @typedef {'NOT_ASYNCAPI_3' | 'INVALID_ASYNCAPI' | 'NO_EVENTS' | 'EVENT_WITHOUT_TITLE' | 'EVENT_WITHOUT_EVENT_TYPE' | 'DUPLICATE_EVENT_TYPE'} WebhookEventListErrorCode
 */

/**
 * Why the list of webhook events cannot be read from a document. `code` is stable; the message
 * says what to change in specs/asyncapi.yaml.
 */
export class WebhookEventListError extends Error {
  /**
   * @param {WebhookEventListErrorCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'WebhookEventListError';
    /** @type {WebhookEventListErrorCode} */
    this.code = code;
  }
}

/**
 * @typedef {object} WebhookEventEntry
 * @property {string} eventType the `eventType` constant of the payload (`user.created`)
 * @property {string} payloadTitle the payload schema's title: its file in specs/schemas, its type name, its `$id`
 * @property {string} messageId the message's key (`userCreated`), under `components.messages` of the bundle
 * @property {string | undefined} operationId the operation that carries the message (`receiveUserCreated`)
 * @property {string | undefined} summary the message's summary
 * @property {string | undefined} description the message's description
 * @property {string | undefined} payloadDescription the payload schema's description
 * @property {{ name: string, description: string | undefined }[]} headers the message's headers, in spec order
 */

/** @type {Parser | undefined} */
let parser;
// The last document read and its events: in one process (`pnpm dev`) the event types and the
// validator read the same bundle one after the other, and a parse takes a second or more.
/** @type {{ text: string, events: Promise<WebhookEventEntry[]> } | undefined} */
let lastRead;

/**
 * The webhook events of a bundled AsyncAPI 3 document (`specs/dist/asyncapi.json`), in spec
 * order (by operation), each once. Refuses a document the parser finds invalid, an event without
 * a titled payload or a required `eventType` constant, and two messages with one event type.
 *
 * @param {unknown} document the bundled document, parsed from JSON
 * @returns {Promise<WebhookEventEntry[]>}
 * @example
 * const events = await readWebhookEvents(JSON.parse(readFileSync('specs/dist/asyncapi.json', 'utf8')));
 * events.map((event) => event.eventType); // ['user.created', 'kyc.status.changed', ...]
 */
export async function readWebhookEvents(document) {
  const text = JSON.stringify(document);
  if (lastRead?.text !== text) lastRead = { text, events: readEvents(document) };
  return structuredClone(await lastRead.events);
}

/**
 * @param {unknown} document
 * @returns {Promise<WebhookEventEntry[]>}
 */
async function readEvents(document) {
  const version = /** @type {any} */ (document)?.asyncapi;
  if (typeof version !== 'string' || !version.startsWith('3.')) {
    throw new WebhookEventListError('NOT_ASYNCAPI_3',
      `Expected an AsyncAPI 3.x document, got asyncapi: ${JSON.stringify(version)}. Read the bundle @capi/specs writes: specs/dist/asyncapi.json.`);
  }
  parser ??= new Parser();
  const { document: parsed, diagnostics } = await parser.parse(/** @type {any} */ (structuredClone(document))); // the parser annotates what it is given
  if (!parsed) {
    const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0).map((diagnostic) => `${diagnostic.message} (at ${diagnostic.path.join('/') || '/'})`);
    throw new WebhookEventListError('INVALID_ASYNCAPI',
      `@asyncapi/parser refuses the document: ${errors.join('; ')}. Read the bundle @capi/specs writes (specs/dist/asyncapi.json), and run pnpm lint:specs.`);
  }
  const messages = new Map();
  for (const operation of parsed.operations().all()) {
    for (const message of operation.messages().all()) if (!messages.has(message.id())) messages.set(message.id(), { message, operationId: operation.id() });
  }
  if (messages.size === 0) {
    for (const message of parsed.messages().all()) messages.set(message.id(), { message, operationId: undefined });
  }
  /** @type {WebhookEventEntry[]} */
  const events = [];
  for (const [messageId, { message, operationId }] of messages) {
    const payload = message.payload();
    const where = `message "${messageId}"`;
    const payloadTitle = payload?.title();
    if (typeof payloadTitle !== 'string' || payloadTitle === '') {
      throw new WebhookEventListError('EVENT_WITHOUT_TITLE',
        `The payload of ${where} has no title; give the event schema a title (its file name in specs/schemas/) so it gets a named interface.`);
    }
    const eventTypeSchema = payload.properties()?.eventType;
    const eventType = eventTypeSchema?.const() ?? (eventTypeSchema?.enum()?.length === 1 ? eventTypeSchema.enum()[0] : undefined);
    if (typeof eventType !== 'string' || !(payload.required() ?? []).includes('eventType')) {
      throw new WebhookEventListError('EVENT_WITHOUT_EVENT_TYPE',
        `Schema ${payloadTitle} (${where}) must have a required property eventType with a string const, e.g. eventType: { const: "user.created" }, so that WebhookEvent can be discriminated on it.`);
    }
    if (events.some((event) => event.eventType === eventType)) {
      throw new WebhookEventListError('DUPLICATE_EVENT_TYPE',
        `eventType "${eventType}" is used by two messages (second: ${payloadTitle}); each event type must map to exactly one schema.`);
    }
    const headers = Object.entries(message.headers()?.properties() ?? {}).map(([name, schema]) => ({ name, description: schema.description() }));
    events.push({
      eventType,
      payloadTitle,
      messageId,
      operationId,
      summary: message.summary(),
      description: message.description(),
      payloadDescription: payload.description(),
      headers,
    });
  }
  if (events.length === 0) {
    throw new WebhookEventListError('NO_EVENTS',
      'The AsyncAPI document has no messages reachable from its operations or channels; add the webhook events to specs/asyncapi.yaml.');
  }
  return events;
}
