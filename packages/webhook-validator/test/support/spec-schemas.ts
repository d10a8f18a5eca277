// The spec's event schemas as the tests see them: loaded with the generator's own loader,
// with `$ref`s followed, so that examples and mutations are derived from the schemas and a
// new field is covered without touching the tests.
import type { ValidateFunction } from 'ajv';
import { createAjv, loadEventSchemas, variants } from '../../scripts/generate.mjs';
import { eventTypeOf } from '../../scripts/schema-variants.mjs';

export type Schema = Record<string, unknown>;
export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

const loaded = (await loadEventSchemas()) as { schemas: Schema[]; events: Schema[] };
export const specSchemas = loaded.schemas;
export const eventSchemas = loaded.events;
const byId = new Map(specSchemas.map((schema) => [schema.$id as string, schema]));

export function eventTypeOfSchema(schema: Schema): string {
  return eventTypeOf(schema) as string;
}

/** The schema with its `$ref` replaced by the target, keeping sibling keywords. */
export function resolve(schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === 'string') {
    const { $ref, ...siblings } = current;
    const target = byId.get(($ref as string).split('#')[0] as string);
    if (!target) throw new Error(`unresolved $ref ${String($ref)}`);
    current = { ...target, ...siblings };
  }
  return current;
}

/** The JSON types a value may have under `schema`, or undefined when any type goes. */
export function allowedTypes(schema: Schema): Set<JsonType> | undefined {
  const s = resolve(schema);
  if (typeof s.type === 'string') return new Set([s.type as JsonType]);
  if (Array.isArray(s.type)) return new Set(s.type as JsonType[]);
  if ('const' in s) return new Set([jsonTypeOf(s.const)]);
  if (Array.isArray(s.enum)) return new Set(s.enum.map(jsonTypeOf));
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!alternatives) return undefined;
  const union = new Set<JsonType>();
  for (const alternative of alternatives) {
    const types = allowedTypes(alternative);
    if (!types) return undefined;
    for (const type of types) union.add(type);
  }
  return union;
}

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** The non-null branch of a nullable `anyOf`/`oneOf`, or the schema itself. */
export function nonNullBranch(schema: Schema): Schema {
  const s = resolve(schema);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  const branch = alternatives?.find((alternative) => {
    const types = allowedTypes(alternative);
    return !(types?.size === 1 && types.has('null'));
  });
  return branch ? resolve(branch) : s;
}

/**
 * A valid value with every property present, every array non-empty and every nullable object
 * filled in, so that walking it reaches every property of every schema.
 */
export function maximalExample(schema: Schema): unknown {
  const s = nonNullBranch(schema);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const types = allowedTypes(s);
  if (s.properties || types?.has('object')) {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, maximalExample(property)]));
  }
  if (types?.has('array')) return [maximalExample((s.items ?? {}) as Schema)];
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (types?.has('string')) return 'example';
  if (types?.has('integer') || types?.has('number')) return 1;
  if (types?.has('boolean')) return true;
  return null;
}

/** The spec's own examples of an event: its `examples`, or its `data` schema's examples wrapped in an event. */
export function specExamples(event: Schema): unknown[] {
  if (Array.isArray(event.examples) && event.examples.length > 0) return event.examples;
  const data = resolve(((event.properties as Record<string, Schema>).data) as Schema);
  const examples = Array.isArray(data.examples) ? data.examples : [];
  return examples.map((example) => ({ eventType: eventTypeOfSchema(event), data: example }));
}

export type VariantName = keyof typeof variants;

const compiledAtRunTime = new Map<VariantName, Map<string, ValidateFunction>>();

/** Validate functions compiled at run time by ajv from the same (unstripped) spec schemas. */
export function runtimeValidators(variant: VariantName): Map<string, ValidateFunction> {
  let validators = compiledAtRunTime.get(variant);
  if (!validators) {
    const ajv = createAjv(specSchemas.map((schema) => variants[variant](schema)));
    validators = new Map(eventSchemas.map((event) => [eventTypeOfSchema(event), ajv.getSchema(event.$id as string)!]));
    compiledAtRunTime.set(variant, validators);
  }
  return validators;
}
