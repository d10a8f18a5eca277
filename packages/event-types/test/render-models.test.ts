import { beforeAll, describe, expect, it } from 'vitest';
import { EventTypesGenerationError } from '../scripts/generation-error.mjs';
import { propertyKey, renderModels } from '../scripts/render-models.mjs';
import { asyncapiDocument, eventSchema } from './fixtures/asyncapi-document.js';

// One AsyncAPI document holds every "given schema" case, so modelina (seconds per run on a
// shared machine) runs once; each test reads the declarations its case produced.
const given = asyncapiDocument({
  schemas: {
    Bank: { title: 'Bank', type: 'object', required: ['iban'], properties: { iban: { type: ['string', 'null'] } } },
    NullableBank: { title: 'NullableBank', type: ['object', 'null'], required: ['bic'], properties: { bic: { type: 'string' } } },
    Status: { title: 'Status', description: 'Where it is.', type: 'string', enum: ['pending', 'synced'], examples: ['synced'] },
  },
  events: [
    eventSchema('ThingEvent', 'thing.happened', { title: 'Thing', description: 'A thing.', type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'Its id.' } } }),
    eventSchema('NullablesEvent', 'nullables.happened', {
      title: 'Nullables', type: 'object', required: ['email', 'count'],
      properties: { email: { type: ['string', 'null'] }, count: { type: ['integer', 'null'] }, nickname: { type: 'string' } },
    }),
    eventSchema('BanksEvent', 'banks.happened', {
      title: 'Banks', type: 'object', required: ['bank', 'nullableBank'],
      properties: {
        bank: { anyOf: [{ $ref: '#/components/schemas/Bank' }, { type: 'null' }] },
        nullableBank: { $ref: '#/components/schemas/NullableBank' },
      },
    }),
    eventSchema('StatusEvent', 'status.happened', { title: 'HasStatus', type: 'object', required: ['status'], properties: { status: { $ref: '#/components/schemas/Status' } } }),
    eventSchema('WireNamesEvent', 'wire-names.happened', {
      title: 'WireNames', type: 'object', required: ['status', 'type', 'X-Webhook-Timestamp', 'default'],
      properties: { status: { type: 'string' }, type: { type: 'string' }, 'X-Webhook-Timestamp': { type: 'string' }, default: { type: 'boolean' } },
    }),
    eventSchema('OpenEvent', 'open.happened', { type: 'object', additionalProperties: true }),
    eventSchema('OpenThingEvent', 'open-thing.happened', { title: 'OpenThing', type: 'object', additionalProperties: true, required: ['id'], properties: { id: { type: 'string' } } }),
  ],
});

let code: string;
let names: string[];
beforeAll(async () => {
  ({ code, names } = await renderModels(given));
});

/** The declaration of `name` in the rendered code, with its TSDoc. */
function declaration(name: string): string {
  const match = new RegExp(`(?:/\\*\\*[^\\n]*\\*/\\n)?export (?:interface ${name} \\{[^]*?\\n\\}\\n|type ${name} = [^\\n]*\\n)`).exec(code);
  if (!match) throw new Error(`no declaration of ${name} in:\n${code}`);
  return match[0];
}

describe('one exported declaration per schema, named after its title', () => {
  it('given a titled object, renders an exported interface with its description', () => {
    expect(declaration('ThingEvent')).toBe(`export interface ThingEvent {
  /** Always thing.happened. */
  eventType: "thing.happened";
  data: Thing;
}
`);
    expect(declaration('Thing')).toBe(`/** A thing. */
export interface Thing {
  /** Its id. */
  id: string;
}
`);
  });

  it('renders every component schema, including those no payload reaches', () => {
    expect(names).toEqual(expect.arrayContaining(['Bank', 'NullableBank', 'Status', 'Thing', 'WireNames', 'OpenThing']));
  });

  it('leaves out the union modelina makes per channel (WebhookEvent replaces it)', () => {
    expect(names.filter((name) => /webhook|schemas/i.test(name))).toEqual([]);
  });

  it('rejects an object schema without a title instead of naming it AnonymousSchema', async () => {
    const untitled = asyncapiDocument({ events: [eventSchema('ThingEvent', 'thing.happened', { type: 'object', properties: { id: { type: 'string' } } })] });
    const error = await renderModels(untitled).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EventTypesGenerationError);
    expect((error as EventTypesGenerationError).code).toBe('ANONYMOUS_SCHEMA');
    expect((error as EventTypesGenerationError).message).toContain('ThingEvent.data');
    expect((error as EventTypesGenerationError).message).toMatch(/give every object and enum schema a title/);
  });
});

describe('nullable fields are T | null, required fields are not optional', () => {
  it('given nullable and optional properties, renders null unions and ? only where not required', () => {
    expect(declaration('Nullables')).toBe('export interface Nullables {\n  email: string | null;\n  count: number | null;\n  nickname?: string;\n}\n');
  });

  it('given a nullable object reference (anyOf with null), renders Ref | null', () => {
    expect(declaration('Banks')).toContain('  bank: Bank | null;\n');
    expect(declaration('Bank')).toBe('export interface Bank {\n  iban: string | null;\n}\n');
  });

  it('given an object schema that is itself nullable, renders Ref | null where it is used', () => {
    expect(declaration('Banks')).toContain('  nullableBank: NullableBank | null;\n');
  });
});

describe('enums are union types of their members', () => {
  it('given a titled string enum, renders a union type alias named after it', () => {
    expect(declaration('Status')).toBe('export type Status = "pending" | "synced";\n');
    expect(code).toContain('/**\n * Where it is.\n *\n * @example\n * "synced"\n */\nexport type Status');
    expect(declaration('HasStatus')).toContain('  status: Status;\n');
  });
});

describe('properties keep their wire names', () => {
  it('keeps reserved words and quotes names that are not identifiers', () => {
    expect(declaration('WireNames')).toBe('export interface WireNames {\n  status: string;\n  type: string;\n  "X-Webhook-Timestamp": string;\n  default: boolean;\n}\n');
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
  it('given data as an open object, renders Record<string, unknown>', () => {
    expect(declaration('OpenEvent')).toContain('  data: Record<string, unknown>;\n');
  });

  it('given an object that allows extra properties, renders only its declared properties', () => {
    expect(declaration('OpenThing')).toBe('export interface OpenThing {\n  id: string;\n}\n');
    expect(code).not.toContain('additionalProperties');
  });
});
