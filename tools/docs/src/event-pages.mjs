// The event reference as VitePress pages, from the AsyncAPI document as bundled by
// @capi/specs (specs/dist/asyncapi.json): an overview (servers, the operations, delivery rules,
// the retry schedule and its timeline, the documentation key) and one page per event type with
// its headers, payload and example deliveries signed at build time by @capi/webhook-signature.
import { createPublicKey } from 'node:crypto';
import { readWebhookEvents } from '@capi/specs/webhook-events';
import { signWebhook } from '@capi/webhook-signature';
import { assumptionBox, cell, fence, prose } from './markdown-text.mjs';
import { schemaMarkdown } from './schema-table.mjs';

/**
 * The documentation's own Ed25519 test key (PKCS8 PEM). It signs the example deliveries so a
 * reader can check a verifier against them; the service signs with its own key, served by
 * `getWebhookPublicKey`. Never use this key for anything but tests.
 */
export const exampleSigningKey = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ30WJKiNSytOleixp8afe8aHZKvFKFy46RpTkd0KVLX
-----END PRIVATE KEY-----`;

/** The public half of {@link exampleSigningKey}, as SPKI PEM (what `getWebhookPublicKey` serves). */
export const examplePublicKey = createPublicKey(exampleSigningKey).export({ format: 'pem', type: 'spki' }).toString().trim();

/**
 * Every event of the document, as `@capi/specs/webhook-events` lists them (@asyncapi/parser,
 * the one reader of the event list), with the message as the bundle writes it (its `$ref`s kept,
 * so the pages link named schemas) and the operation that receives it.
 * @param {any} spec bundled AsyncAPI 3 document
 * @returns {Promise<{ eventType: string, key: string, message: any, operationId: string | undefined, operation: any }[]>}
 */
export async function listEvents(spec) {
  return (await readWebhookEvents(spec)).map(({ eventType, messageId, operationId }) => {
    const message = spec.components?.messages?.[messageId];
    if (!message) throw new Error(`The event ${eventType} is the message "${messageId}", which is not under components.messages of the bundled AsyncAPI document; declare each message there.`);
    return { eventType, key: messageId, message, operationId, operation: operationId ? spec.operations?.[operationId] : undefined };
  });
}

/**
 * The example deliveries of a message, signed: the body is the compact JSON of the example
 * payload, the timestamp that of the example's headers (or a fixed one).
 * @param {any} message
 * @returns {Promise<{ name: string, summary?: string, body: string, headers: Record<string, string> }[]>}
 */
export async function signedExamples(message) {
  return Promise.all(
    (message.examples ?? []).map(async (example, index) => {
      const body = JSON.stringify(example.payload);
      const timestamp = example.headers?.['X-Webhook-Timestamp'] ?? '1795776000';
      const { headers } = await signWebhook({ rawBody: body, privateKey: exampleSigningKey, timestamp });
      return { name: example.name ?? `example${index + 1}`, summary: example.summary, body, headers: { ...headers } };
    }),
  );
}

function serversList(spec) {
  return Object.entries(spec.servers ?? {})
    .map(([name, server]) => `| ${name} | \`${server.protocol}://${String(server.host).replace(/\{([^}]+)\}/g, (whole, variable) => server.variables?.[variable]?.default ?? whole)}${server.pathname ?? ''}\` | \`${server.host}\` | ${cell(server.description)} |`)
    .join('\n');
}

/**
 * One event type's page.
 * @param {Awaited<ReturnType<typeof listEvents>>[number]} event
 * @param {any} spec
 * @param {{ schemaLink: (name: string) => string | undefined }} options
 * @returns {Promise<string>}
 */
export async function eventPage(event, spec, { schemaLink }) {
  const { eventType, message, operationId, operation } = event;
  const context = { components: spec.components?.schemas ?? {}, linkTo: schemaLink, expand: true };
  const headers = message.headers ? schemaMarkdown(message.headers, { ...context, linkTo: () => undefined }) : 'None.\n';
  const host = Object.values(spec.servers ?? {})[0];
  const hostName = host ? String(host.host).replace(/\{([^}]+)\}/g, (whole, variable) => host.variables?.[variable]?.default ?? whole) : 'partner.example';
  const deliveries = (await signedExamples(message)).map(
    (example) => `### Example: ${example.name}

${prose(example.summary)}

${fence('http', [`${operation?.bindings?.http?.method ?? 'POST'} /webhooks HTTP/1.1`, `Host: ${hostName}`, `Content-Type: ${message.contentType ?? spec.defaultContentType ?? 'application/json'}`, ...Object.entries(example.headers).map(([name, value]) => `${name}: ${value}`), '', example.body].join('\n'))}

The same body, formatted (the signature covers the raw bytes above, not this):

${fence('json', JSON.stringify(JSON.parse(example.body), null, 2))}
`,
  );
  return `---
title: ${eventType}
---

# ${eventType}

<p class="event-line" data-event-type="${eventType}"><span class="method method-post">${operation?.bindings?.http?.method ?? 'POST'}</span> <code>${eventType}</code> to your webhook URL</p>

${prose(operation?.description ?? message.description ?? message.summary)}

- **Event type**: \`${eventType}\`
- **Operation**: ${operationId ? `\`${operationId}\` (${operation.action})` : 'none'}
- **Content type**: \`${message.contentType ?? spec.defaultContentType ?? 'application/json'}\`
- **Delivery**: HTTP POST to your webhook URL; answer any 2xx within 30 seconds, else it is retried after 1, 5 and 15 minutes ([delivery rules](./index.md#delivery))

${assumptionBox(message)}
## Headers

${headers}
## Payload

${schemaMarkdown(message.payload, context)}
## Example deliveries

Signed at build time with the [documentation test key](./index.md#documentation-test-key), so you can feed them to your receiver's tests: verify them with that public key, never in production.

${deliveries.join('\n')}`;
}

/**
 * The event overview page.
 * @param {any} spec
 * @param {{ diagrams: Record<string, string>, events: Awaited<ReturnType<typeof listEvents>> }} options
 * @returns {string}
 */
export function eventIndexPage(spec, { diagrams, events }) {
  const delivery = spec.info?.['x-delivery'] ?? {};
  const signature = spec.info?.['x-signature'] ?? {};
  const delays = delivery.retryDelaysSeconds ?? [];
  let elapsed = 0;
  const schedule = delays.map((seconds, index) => {
    elapsed += seconds;
    return `| Retry ${index + 1} | ${seconds / 60} minutes after the previous attempt failed | about ${elapsed / 60} minutes after the first attempt |`;
  });
  // The description's own "## Delivery" and "## Signature" sections are replaced by the tables below.
  const intro = String(spec.info?.description ?? '').split(/\n## /)[0];
  return `---
title: Event reference
---

# ${prose(spec.info?.title ?? 'Event reference')}

Version ${spec.info?.version ?? ''}. Download the spec: [asyncapi.json](/asyncapi.json){target="_self" download="capi-asyncapi.json"} (AsyncAPI ${spec.asyncapi}, bundled).

${prose(intro)}

## Events

| Event type | Operation | Summary |
| --- | --- | --- |
${events.map((event) => `| [\`${event.eventType}\`](./${event.eventType}.md) | \`${event.operationId ?? ''}\` | ${cell(event.message.summary)} |`).join('\n')}

## Servers

| Server | URL | Template | Description |
| --- | --- | --- | --- |
${serversList(spec)}

${Object.values(spec.servers ?? {}).map(assumptionBox).join('')}
## Delivery

- Method: HTTP \`${delivery.method ?? 'POST'}\`, body \`${spec.defaultContentType ?? 'application/json'}\` \`{eventType, data}\`, to your HTTPS webhook URL (every event type to the same URL).
- Success: any \`${delivery.successStatus ?? '2xx'}\` answered within **${delivery.replyTimeoutSeconds ?? 30} seconds**.
- Duplicates: ${delivery.duplicatesPossible ? 'possible' : 'not expected'}; the body carries ${delivery.eventIdInBody ? 'an event id' : 'no event id'}, so process events idempotently, but not by dropping every body seen before: a user who comes back to an earlier state sends an earlier body again as a new event. A body is a duplicate only when it repeats the latest one processed for its \`eventType\` and \`data.id\` (what \`@capi/webhook-receiver\` does).
- Unknown event types may appear: answer 2xx and ignore them.

### Retry schedule

A non-2xx answer, or none within ${delivery.replyTimeoutSeconds ?? 30} seconds, is retried up to ${delivery.maxRetries ?? delays.length} times:

| Attempt | When | Time since the first attempt |
| --- | --- | --- |
| First delivery | when the event happens | 0 |
${schedule.join('\n')}

${diagrams.retries ? `![Delivery and retry timeline: the first attempt, then retries 1, 5 and 15 minutes after each failure, each waiting up to 30 seconds for a 2xx](${diagrams.retries})\n` : ''}
## Signature

| Rule | Value |
| --- | --- |
| Algorithm | ${signature.algorithm ?? 'Ed25519'} |
| Timestamp header | \`${signature.timestampHeader ?? 'X-Webhook-Timestamp'}\`: Unix time of sending, in seconds |
| Signature header | \`${signature.signatureHeader ?? 'X-Webhook-Signature'}\`: ${signature.signatureEncoding ?? 'base64'} of the 64-byte signature |
| Signed bytes | the ${signature.payloadEncoding ?? 'UTF-8'} bytes of \`${signature.signedPayload ?? '${timestamp}.${rawBody}'}\` |
| Key | from [\`${signature.publicKeyOperation ?? 'getWebhookPublicKey'}\`](../api/${signature.publicKeyOperation ?? 'getWebhookPublicKey'}.md) on \`{webhooks_url}\` |
| Timestamp tolerance | ${signature.timestampToleranceSeconds ?? 300} seconds, both directions |
| Rejection | answer \`${signature.rejectionStatus ?? 401}\` |

Verify on the raw body, before parsing it: [\`verifyWebhookSignature\`](../packages/webhook-signature/index.md) does, and [\`createWebhookReceiver\`](../packages/webhook-receiver/index.md) adds validation, deduplication and dispatch.

### Documentation test key

The example deliveries on these pages are signed with this key pair's private half. It is a test key of this documentation, not the service's.

${fence('text', examplePublicKey)}
`;
}
