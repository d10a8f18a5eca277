// Given schema -> expected schema, for the transformations that derive the tolerant and the
// strict validators from the spec at generation time.
import { describe, expect, it } from 'vitest';
import { eventTypeOf, extensionKeywordsOf, inlineReferences, refsOf, toStrictSchema, toTolerantSchema, withoutAnnotations } from '../scripts/schema-variants.mjs';

const card = {
  $id: 'https://example.test/Card.json',
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' }, properties: { type: 'object', properties: { x: { type: 'string' } } } },
};

describe('derives the strict variant by closing every object schema that lists properties', () => {
  it('adds additionalProperties: false to plain object schemas, nested ones included', () => {
    expect(toStrictSchema(card)).toEqual({
      ...card,
      additionalProperties: false,
      properties: { id: { type: 'string' }, properties: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false } },
    });
  });

  it('uses unevaluatedProperties: false where the object is composed ($ref, allOf...)', () => {
    const composed = { type: 'object', allOf: [{ $ref: 'Base.json' }], properties: { extra: { type: 'string' } } };
    expect(toStrictSchema(composed)).toEqual({ ...composed, allOf: [{ $ref: 'Base.json' }], unevaluatedProperties: false });
  });

  it('leaves open objects without properties (card.transaction.created data) and explicit choices alone', () => {
    const open = { type: 'object', description: 'any object' };
    const explicit = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } };
    expect(toStrictSchema(open)).toEqual(open);
    expect(toStrictSchema(explicit)).toEqual(explicit);
  });

  it('walks items, anyOf and $defs, and never rewrites data keywords (const, enum, examples, x-*)', () => {
    const schema = {
      type: 'array',
      items: { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'null' }] },
      $defs: { Thing: { type: 'object', properties: { b: { type: 'string' } } } },
      examples: [{ type: 'object', properties: {} }],
      'x-assumption': { type: 'object', properties: {} },
    };
    const strict = toStrictSchema(schema) as typeof schema;
    expect(strict.items.anyOf[0]).toMatchObject({ additionalProperties: false });
    expect(strict.items.anyOf[1]).toEqual({ type: 'null' });
    expect(strict.$defs.Thing).toMatchObject({ additionalProperties: false });
    expect(strict.examples).toEqual(schema.examples);
    expect(strict['x-assumption']).toEqual(schema['x-assumption']);
  });

  it('does not modify its input', () => {
    const input = structuredClone(card);
    toStrictSchema(input);
    expect(input).toEqual(card);
  });
});

describe('derives the tolerant variant by opening every object schema', () => {
  it('removes additionalProperties: false and unevaluatedProperties: false, keeps schemas for extra properties', () => {
    const closed = { type: 'object', properties: { a: { type: 'object', properties: {}, unevaluatedProperties: false } }, additionalProperties: false };
    expect(toTolerantSchema(closed)).toEqual({ type: 'object', properties: { a: { type: 'object', properties: {} } } });
    const typed = { type: 'object', additionalProperties: { type: 'string' } };
    expect(toTolerantSchema(typed)).toEqual(typed);
  });
});

describe('strips annotations before compiling, so they are not embedded in the generated code', () => {
  it('drops description, examples, $comment and x-*, keeps everything that validates', () => {
    const annotated = {
      $id: 'https://example.test/A.json', title: 'A', description: 'd', $comment: 'c', 'x-assumption': { decision: 'x' },
      type: 'object', required: ['a'], examples: [{ a: 'x' }],
      properties: { a: { type: 'string', description: 'a', pattern: '^x', deprecated: true }, description: { type: 'string' } },
    };
    expect(withoutAnnotations(annotated)).toEqual({
      $id: 'https://example.test/A.json', title: 'A', type: 'object', required: ['a'],
      properties: { a: { type: 'string', pattern: '^x' }, description: { type: 'string' } },
    });
  });
});

describe('inlines the schemas a data schema references, so it compiles to one function', () => {
  const address = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'https://example.test/Address.json', type: 'string', pattern: '^0x' };
  const wallet = { $id: 'https://example.test/Wallet.json', type: 'object', properties: { address: { $ref: address.$id } } };
  const byId = new Map<string, object>([[address.$id, address], [wallet.$id, wallet]]);

  it('replaces each $ref by the referenced schema, recursively, without its $id and $schema', () => {
    const user = { type: 'object', properties: { wallets: { type: 'array', items: { $ref: wallet.$id } } } };
    expect(inlineReferences(user, byId)).toEqual({
      type: 'object',
      properties: { wallets: { type: 'array', items: { type: 'object', properties: { address: { type: 'string', pattern: '^0x' } } } } },
    });
  });

  it('keeps sibling keywords beside the inlined schema, in an allOf when they collide', () => {
    expect(inlineReferences({ $ref: address.$id, description: 'the owner' }, byId)).toEqual({ type: 'string', pattern: '^0x', description: 'the owner' });
    expect(inlineReferences({ $ref: address.$id, pattern: 'f$' }, byId)).toEqual({ pattern: 'f$', allOf: [{ type: 'string', pattern: '^0x' }] });
  });

  it('leaves references to other schemas alone and refuses recursive ones', () => {
    expect(inlineReferences({ $ref: 'https://example.test/Other.json' }, byId)).toEqual({ $ref: 'https://example.test/Other.json' });
    const node = { $id: 'https://example.test/Node.json', type: 'object', properties: { next: { $ref: 'https://example.test/Node.json' } } };
    expect(() => inlineReferences(node, new Map([[node.$id, node]]))).toThrow(/cannot inline the recursive reference/);
  });
});

describe('reads what the generator needs from a schema', () => {
  it('the event type, the $refs and the x-* keywords', () => {
    const event = { properties: { eventType: { const: 'user.created' }, data: { $ref: 'User.json', 'x-note': 1 } }, 'x-event-type': 'user.created' };
    expect(eventTypeOf(event)).toBe('user.created');
    expect(eventTypeOf({ properties: { eventType: { type: 'string' } } })).toBeUndefined();
    expect(refsOf(event)).toEqual(['User.json']);
    expect([...extensionKeywordsOf(event)].sort()).toEqual(['x-event-type', 'x-note']);
  });
});
