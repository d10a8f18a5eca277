import { describe, expect, it } from 'vitest';
import { EventTypesGenerationError } from '../scripts/generation-error.mjs';
import { readWebhookEventCatalog } from '../scripts/read-webhook-events.mjs';
import { asyncapiDocument, eventSchema } from './fixtures/asyncapi-document.js';

const readWebhookEvents = async (doc: unknown) => (await readWebhookEventCatalog(doc)).events;

async function errorOf(run: () => Promise<unknown>): Promise<EventTypesGenerationError> {
  try { await run(); } catch (error) { if (error instanceof EventTypesGenerationError) return error; throw error; }
  throw new Error('expected an EventTypesGenerationError');
}

describe('reads one event per message (@asyncapi/parser, through @capi/specs), in spec order, from the payload title and eventType const', () => {
  it('maps each eventType to the title of its payload schema', async () => {
    const doc = asyncapiDocument({ events: [eventSchema('UserCreatedEvent', 'user.created'), eventSchema('KycStatusChangedEvent', 'kyc.status.changed')] });
    expect((await readWebhookEvents(doc)).map(({ eventType, interfaceName }) => ({ eventType, interfaceName }))).toEqual([
      { eventType: 'user.created', interfaceName: 'UserCreatedEvent' },
      { eventType: 'kyc.status.changed', interfaceName: 'KycStatusChangedEvent' },
    ]);
  });

  it('accepts a single-value enum as the eventType constant', async () => {
    const event = eventSchema('UserCreatedEvent', 'user.created');
    (event.properties as any).eventType = { type: 'string', enum: ['user.created'] };
    expect((await readWebhookEvents(asyncapiDocument({ events: [event] })))[0]?.eventType).toBe('user.created');
  });

  it('falls back to the channel messages when the operation lists none', async () => {
    const doc = asyncapiDocument({ events: [eventSchema('UserCreatedEvent', 'user.created')] });
    delete doc.operations.receiveWebhook.messages;
    expect((await readWebhookEvents(doc)).map((event) => event.eventType)).toEqual(['user.created']);
  });
});

describe('rejects a spec it cannot turn into a discriminated union', () => {
  it('rejects a document that is not AsyncAPI 3', async () => {
    const error = await errorOf(() => readWebhookEvents({ openapi: '3.1.0' }));
    expect(error.code).toBe('NOT_ASYNCAPI_3');
    expect(error.message).toContain('specs/dist/asyncapi.json');
  });

  it('rejects an event schema without a title', async () => {
    const event = eventSchema('X', 'user.created');
    delete event.title;
    const error = await errorOf(() => readWebhookEvents(asyncapiDocument({ events: [event] })));
    expect(error.code).toBe('EVENT_WITHOUT_TITLE');
    expect(error.message).toMatch(/give the event schema a title/);
  });

  it('rejects an event schema whose eventType is not a constant', async () => {
    const event = eventSchema('UserCreatedEvent', 'user.created');
    (event.properties as any).eventType = { type: 'string' };
    const error = await errorOf(() => readWebhookEvents(asyncapiDocument({ events: [event] })));
    expect(error.code).toBe('EVENT_WITHOUT_EVENT_TYPE');
    expect(error.message).toContain('UserCreatedEvent');
  });

  it('rejects an event schema where eventType is not required', async () => {
    const event = eventSchema('UserCreatedEvent', 'user.created');
    event.required = ['data'];
    expect((await errorOf(() => readWebhookEvents(asyncapiDocument({ events: [event] })))).code).toBe('EVENT_WITHOUT_EVENT_TYPE');
  });

  it('rejects two events with the same eventType', async () => {
    const doc = asyncapiDocument({ events: [eventSchema('A', 'user.created'), eventSchema('B', 'user.created')] });
    const error = await errorOf(() => readWebhookEvents(doc));
    expect(error.code).toBe('DUPLICATE_EVENT_TYPE');
    expect(error.message).toContain('"user.created"');
  });

  it('rejects a document without any event', async () => {
    expect((await errorOf(() => readWebhookEvents(asyncapiDocument({ events: [] })))).code).toBe('NO_EVENTS');
  });

  it('rejects a $ref that points at nothing (as @asyncapi/parser reports it)', async () => {
    const doc = asyncapiDocument({ events: [eventSchema('UserCreatedEvent', 'user.created')] });
    doc.components.messages.UserCreatedEvent.payload = { $ref: '#/components/schemas/Missing' };
    const error = await errorOf(() => readWebhookEvents(doc));
    expect(error.code).toBe('INVALID_ASYNCAPI');
    expect(error.message).toContain('#/components/schemas/Missing');
  });

  it('rejects a $ref to another file (the spec must be bundled)', async () => {
    const doc = asyncapiDocument({ events: [eventSchema('UserCreatedEvent', 'user.created')] });
    doc.components.messages.UserCreatedEvent.payload = { $ref: './schemas/UserCreatedEvent.yaml' };
    const error = await errorOf(() => readWebhookEvents(doc));
    expect(error.code).toBe('INVALID_ASYNCAPI');
    expect(error.message).toMatch(/Read the bundle @capi\/specs writes/);
  });
});

describe('reads the webhook headers the messages declare', () => {
  it('returns each header once, with its description', async () => {
    const doc = asyncapiDocument({
      events: [eventSchema('A', 'a.happened'), eventSchema('B', 'b.happened')],
      headers: { title: 'Headers', type: 'object', properties: { 'X-Webhook-Timestamp': { type: 'string', description: 'Unix seconds.' }, 'X-Webhook-Signature': { type: 'string' } } },
    });
    expect((await readWebhookEventCatalog(doc)).headers).toEqual([
      { name: 'X-Webhook-Timestamp', description: 'Unix seconds.' },
      { name: 'X-Webhook-Signature', description: undefined },
    ]);
  });
});
