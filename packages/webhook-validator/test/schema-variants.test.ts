// Given schema -> expected schema, for the transformations that derive the tolerant and the
// strict validators from the spec at generation time.
import { describe, expect, it } from 'vitest';
import { eventTypeOf, extensionKeywordsOf, refsOf, toStrictSchema, toTolerantSchema, withoutAnnotations } from '../scripts/schema-variants.mjs';

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

describe('reads what the generator needs from a schema', () => {
  it('the event type, the $refs and the x-* keywords', () => {
    const event = { properties: { eventType: { const: 'user.created' }, data: { $ref: 'User.json', 'x-note': 1 } }, 'x-event-type': 'user.created' };
    expect(eventTypeOf(event)).toBe('user.created');
    expect(eventTypeOf({ properties: { eventType: { type: 'string' } } })).toBeUndefined();
    expect(refsOf(event)).toEqual(['User.json']);
    expect([...extensionKeywordsOf(event)].sort()).toEqual(['x-event-type', 'x-note']);
  });
});
