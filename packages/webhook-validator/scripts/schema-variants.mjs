// The two validation variants are derived from the spec's schemas at generation time, so that
// the spec stays the single source of truth and neither variant is written by hand.

const CLOSED = new Set(['additionalProperties', 'unevaluatedProperties']);
const COMPOSITION = ['allOf', 'anyOf', 'oneOf', '$ref', 'if', 'dependentSchemas'];

/** Returns a copy of `schema` in which every object schema accepts unknown properties. */
export function toTolerantSchema(schema) {
  return mapSchemas(schema, (node) => {
    if (!describesObject(node)) return node;
    const open = { ...node };
    for (const keyword of CLOSED) if (open[keyword] === false) delete open[keyword];
    return open;
  });
}

/**
 * Returns a copy of `schema` in which every object schema that lists `properties` rejects
 * any other property. `unevaluatedProperties` is used where the schema is composed
 * (`allOf`, `$ref`...), since `additionalProperties` would not see the composed properties.
 */
export function toStrictSchema(schema) {
  return mapSchemas(schema, (node) => {
    if (!describesObject(node) || !isPlainObject(node.properties) || CLOSED.has(firstDefined(node, CLOSED))) return node;
    const composed = COMPOSITION.some((keyword) => keyword in node);
    return { ...node, [composed ? 'unevaluatedProperties' : 'additionalProperties']: false };
  });
}

const ANNOTATIONS = new Set(['description', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly']);

/**
 * Returns a copy of `schema` without annotation keywords (descriptions, examples, x-*), which
 * never change a validation result but would otherwise be embedded in the generated code.
 */
export function withoutAnnotations(schema) {
  return mapSchemas(schema, (node) => Object.fromEntries(
    Object.entries(node).filter(([key]) => !ANNOTATIONS.has(key) && !key.startsWith('x-')),
  ));
}

/**
 * Returns a copy of `schema` in which every `$ref` to one of `schemasById` is replaced by the
 * referenced schema itself (recursively), so that ajv compiles one function with no calls and
 * no per-call bookkeeping instead of one function per referenced schema. Validation is
 * unchanged: sibling keywords of a `$ref` stay beside the inlined schema (in an `allOf` when
 * they would collide). Recursive references are refused: they cannot be inlined.
 */
export function inlineReferences(schema, schemasById, trail = []) {
  if (!isPlainObject(schema)) return schema;
  const copy = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = mapSubschemas(key, value, (sub) => inlineReferences(sub, schemasById, trail));
  if (typeof copy.$ref !== 'string' || !schemasById.has(copy.$ref)) return copy;
  const { $ref, ...siblings } = copy;
  if (trail.includes($ref)) throw new Error(`cannot inline the recursive reference ${[...trail, $ref].join(' -> ')}`);
  const { $id, $schema, ...target } = inlineReferences(schemasById.get($ref), schemasById, [...trail, $ref]);
  const collides = Object.keys(siblings).some((key) => key in target);
  return collides ? { ...siblings, allOf: [...(siblings.allOf ?? []), target] } : { ...target, ...siblings };
}

/** The `eventType` of an event schema (`properties.eventType.const`), or undefined. */
export function eventTypeOf(schema) {
  const value = schema?.properties?.eventType?.const;
  return typeof value === 'string' ? value : undefined;
}

/** Every `$ref` value found anywhere in `schema`. */
export function refsOf(schema) {
  const refs = [];
  walk(schema, (node) => {
    if (typeof node.$ref === 'string') refs.push(node.$ref);
  });
  return refs;
}

/** Every `x-*` extension keyword used anywhere in `schema` (annotations for ajv). */
export function extensionKeywordsOf(schema) {
  const keywords = new Set();
  walk(schema, (node) => {
    for (const key of Object.keys(node)) if (key.startsWith('x-')) keywords.add(key);
  });
  return keywords;
}

function firstDefined(node, keywords) {
  for (const keyword of keywords) if (node[keyword] !== undefined) return keyword;
  return undefined;
}

function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// JSON Schema 2020-12 keywords whose values are subschemas; every other keyword holds data
// (const, enum, examples, x-*...) and is copied untouched.
const SCHEMA_KEYWORDS = new Set([
  'items', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'contains',
  'propertyNames', 'not', 'if', 'then', 'else',
]);
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

// Rebuilds the schema bottom-up, applying `transform` to every (sub)schema.
function mapSchemas(schema, transform) {
  if (!isPlainObject(schema)) return schema;
  const copy = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = mapSubschemas(key, value, (sub) => mapSchemas(sub, transform));
  return transform(copy);
}

function mapSubschemas(keyword, value, map) {
  if (SCHEMA_KEYWORDS.has(keyword)) return map(value);
  if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) return value.map(map);
  if (SCHEMA_MAP_KEYWORDS.has(keyword) && isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, map(sub)]));
  }
  return value;
}

function describesObject(node) {
  const types = Array.isArray(node.type) ? node.type : [node.type];
  return types.includes('object') || isPlainObject(node.properties);
}

function walk(schema, visit) {
  if (!isPlainObject(schema)) return;
  visit(schema);
  for (const [key, value] of Object.entries(schema)) {
    mapSubschemas(key, value, (sub) => {
      walk(sub, visit);
      return sub;
    });
  }
}
