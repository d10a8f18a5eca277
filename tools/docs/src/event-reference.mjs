// The event reference page, rendered from specs/asyncapi.yaml parsed by @asyncapi/parser
// (npm-only, offline): every message with its eventType, headers and payload schema, and the
// delivery and signature rules of the document.
import { Parser, fromFile } from '@asyncapi/parser';
import { escapeHtml } from './escape-html.mjs';
import { renderMarkdown } from './markdown.mjs';
import { renderSchema } from './schema-view.mjs';

/**
 * Parses and validates an AsyncAPI file (its $refs to specs/schemas/*.yaml included).
 * @param {string} file
 * @returns {Promise<import('@asyncapi/parser').AsyncAPIDocumentInterface>}
 */
export async function loadAsyncApi(file) {
  const { document, diagnostics } = await fromFile(new Parser(), file).parse();
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0);
  if (!document || errors.length > 0) {
    const listing = errors.map((error) => `  ${error.path?.join('.') ?? ''}: ${error.message}`).join('\n');
    throw new Error(`Cannot read the AsyncAPI spec ${file}:\n${listing}\nRun \`pnpm lint:specs\` for the details.`);
  }
  return document;
}

/**
 * The eventType a message carries: the const of its payload's `eventType`, else its name.
 * @param {import('@asyncapi/parser').MessageInterface} message
 * @returns {string}
 */
export function eventTypeOf(message) {
  const payload = message.payload()?.json();
  return payload?.properties?.eventType?.const ?? message.name() ?? message.id();
}

/**
 * Every message of the document, one entry per event type.
 * @param {import('@asyncapi/parser').AsyncAPIDocumentInterface} document
 */
export function listEvents(document) {
  const seen = new Set();
  return document
    .allMessages()
    .all()
    .map((message) => ({ eventType: eventTypeOf(message), message }))
    .filter(({ eventType }) => !seen.has(eventType) && seen.add(eventType));
}

/**
 * The body of the event reference page.
 * @param {import('@asyncapi/parser').AsyncAPIDocumentInterface} document
 * @returns {string}
 */
export function renderEventReference(document) {
  const info = document.info();
  const events = listEvents(document);
  const channels = document
    .channels()
    .all()
    .map((channel) => `<li><code>${escapeHtml(channel.address() ?? channel.id())}</code>: ${renderMarkdown(channel.description())}</li>`)
    .join('');
  const toc = events.map(({ eventType }) => `<li><a href="#event/${escapeHtml(eventType)}"><span class="event-type">${escapeHtml(eventType)}</span></a></li>`).join('');
  const sections = events
    .map(({ eventType, message }) => {
      const headers = message.headers()?.json();
      return `<section class="event" id="event/${escapeHtml(eventType)}" data-event-type="${escapeHtml(eventType)}">
<h3><span class="event-type">${escapeHtml(eventType)}</span> <span class="badge">${escapeHtml(message.title() ?? message.name() ?? '')}</span></h3>
${renderMarkdown(message.summary())}${renderMarkdown(message.description())}
<h4>Headers</h4>${headers ? renderSchema(headers) : '<p class="badge">None.</p>'}
<h4>Payload</h4>${renderSchema(message.payload()?.json())}
</section>`;
    })
    .join('\n');
  return `<h1>${escapeHtml(info.title())} <span class="badge">${escapeHtml(info.version())}</span></h1>
${renderMarkdown(info.description())}
<h2>Channels</h2><ul>${channels}</ul>
<h2>Events</h2><ul>${toc}</ul>
${sections}`;
}
