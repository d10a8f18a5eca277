import { describe, expect, it } from 'vitest';
import { EventTypesGenerationError } from '../scripts/generation-error.mjs';
import { propertyKey, renderModels } from '../scripts/render-models.mjs';
import { asyncapiDocument, eventSchema } from './fixtures/asyncapi-document.js';

/** The declarations modelina renders for one event whose `data` is `data`. */
async function modelsFor(data: Record<string, unknown>, schemas: Record<string, Record<string, unknown>> = {}) {
  const doc = asyncapiDocument({ schemas, events: [eventSchema('ThingEvent', 'thing.happened', data)] });
  return (await renderModels(doc)).code;
}

describe('one exported interface per object schema, named after its title', () => {
  it('given a titled object, renders an exported interface with its description', async () => {
    const code = await modelsFor({ title: 'Thing', description: 'A thing.', type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'Its id.' } } });
    expect(code).toBe(`export interface ThingEvent {
  /** Always thing.happened. */
  eventType: "thing.happened";
  data: Thing;
}

/** A thing. */
export interface Thing {
  /** Its id. */
  id: string;
}
`);
  });

  it('rejects an object schema without a title instead of naming it AnonymousSchema', async () => {
    const error = await modelsFor({ type: 'object', properties: { id: { type: 'string' } } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EventTypesGenerationError);
    expect((error as EventTypesGenerationError).code).toBe('ANONYMOUS_SCHEMA');
    expect((error as EventTypesGenerationError).message).toContain('ThingEvent.data');
    expect((error as EventTypesGenerationError).message).toMatch(/give every object and enum schema a title/);
  });
});

describe('nullable fields are T | null, required fields are not optional', () => {
  it('given nullable and optional properties, renders null unions and ? only where not required', async () => {
    const code = await modelsFor({
      title: 'Thing', type: 'object', required: ['email', 'count'],
      properties: { email: { type: ['string', 'null'] }, count: { type: ['integer', 'null'] }, nickname: { type: 'string' } },
    });
    expect(code).toContain('  email: string | null;\n  count: number | null;\n  nickname?: string;\n');
  });

  it('given a nullable object reference (anyOf with null), renders Ref | null', async () => {
    const code = await modelsFor(
      { title: 'Thing', type: 'object', required: ['bank'], properties: { bank: { anyOf: [{ $ref: '#/components/schemas/Bank' }, { type: 'null' }] } } },
      { Bank: { title: 'Bank', type: 'object', required: ['iban'], properties: { iban: { type: ['string', 'null'] } } } },
    );
    expect(code).toContain('  bank: Bank | null;\n');
    expect(code).toContain('export interface Bank {\n  iban: string | null;\n}');
  });

  it('given an object schema that is itself nullable, renders Ref | null where it is used', async () => {
    const code = await modelsFor(
      { title: 'Thing', type: 'object', required: ['bank'], properties: { bank: { $ref: '#/components/schemas/Bank' } } },
      { Bank: { title: 'Bank', type: ['object', 'null'], required: ['iban'], properties: { iban: { type: 'string' } } } },
    );
    expect(code).toContain('  bank: Bank | null;\n');
  });
});

describe('enums are union types of their members', () => {
  it('given a titled string enum, renders a union type alias', async () => {
    const code = await modelsFor(
      { title: 'Thing', type: 'object', required: ['status'], properties: { status: { $ref: '#/components/schemas/Status' } } },
      { Status: { title: 'Status', description: 'Where it is.', type: 'string', enum: ['pending', 'synced'] } },
    );
    expect(code).toContain('/** Where it is. */\nexport type Status = "pending" | "synced";\n');
    expect(code).toContain('  status: Status;\n');
  });
});

describe('properties keep their wire names', () => {
  it('keeps reserved words and quotes names that are not identifiers', async () => {
    const code = await modelsFor({
      title: 'Thing', type: 'object', required: ['status', 'type', 'X-Webhook-Timestamp', 'default'],
      properties: { status: { type: 'string' }, type: { type: 'string' }, 'X-Webhook-Timestamp': { type: 'string' }, default: { type: 'boolean' } },
    });
    expect(code).toContain('  status: string;\n  type: string;\n  "X-Webhook-Timestamp": string;\n  default: boolean;\n');
    expect(code).not.toMatch(/reserved/i);
  });

  it.each([
    ['kycStatus', 'kycStatus'],
    ['$ref', '$ref'],
    ['X-Webhook-Signature', '"X-Webhook-Signature"'],
    ['2fa', '"2fa"'],
    ['with space', '"with space"'],
  ])('propertyKey(%j) is %s', (name, key) => {
    expect(propertyKey(name)).toBe(key);
  });
});

describe('open objects are Record<string, unknown>, never a fake additionalProperties field', () => {
  it('given data as an open object, renders Record<string, unknown>', async () => {
    const code = await modelsFor({ type: 'object', additionalProperties: true });
    expect(code).toContain('  data: Record<string, unknown>;\n');
  });

  it('given an object that allows extra properties, renders only its declared properties', async () => {
    const code = await modelsFor({ title: 'Thing', type: 'object', additionalProperties: true, required: ['id'], properties: { id: { type: 'string' } } });
    expect(code).toContain('export interface Thing {\n  id: string;\n}');
    expect(code).not.toContain('additionalProperties');
  });
});
