// Mutations generated from the schemas: for every property of every schema reachable from an
// event (recursively into User, Card, BankingDetails...), a copy of a valid event in which
// that property is missing, of a wrong type, null where not nullable, outside its enum or
// const, not matching its pattern; and, for strict validation, an unknown property beside it.
import { allowedTypes, eventTypeOfSchema, maximalExample, nonNullBranch, resolve, type JsonType, type Schema } from './spec-schemas.js';

export interface Mutation {
  /** The event type of the valid event that was mutated. */
  eventType: string;
  /** JSON Pointer of the mutated property: the path the errors must point at. */
  pointer: string;
  /** What was done to it, e.g. `null`, `missing`, `type array`. */
  change: string;
  body: Record<string, unknown>;
  /** Rejected only by `{ strict: true }` (an unknown property). */
  onlyStrict: boolean;
  /** The mutation changes the `eventType` itself, so the result is `unknownEventType`. */
  unknownEventType: boolean;
}

const WRONG_TYPE_SAMPLES: [JsonType, unknown][] = [
  ['string', 'mutated'],
  ['integer', 12345],
  ['number', 1.5],
  ['boolean', true],
  ['object', {}],
  ['array', []],
];
const NOT_A_PATTERN_MATCH = 'does not match the pattern';
export const UNKNOWN_PROPERTY = 'propertyNoSchemaDefines';

/** The mutations of one event schema, walked over its maximal valid example. */
export function mutationsOf(event: Schema): Mutation[] {
  const eventType = eventTypeOfSchema(event);
  const valid = maximalExample(event) as Record<string, unknown>;
  const mutations: Mutation[] = [];
  const add = (pointer: string, change: string, edit: (body: Record<string, unknown>) => void, flags: Partial<Mutation> = {}) => {
    const body = structuredClone(valid);
    edit(body);
    mutations.push({ eventType, pointer, change, body, onlyStrict: false, unknownEventType: false, ...flags });
  };

  const walk = (schema: Schema, value: unknown, pointer: string): void => {
    const s = nonNullBranch(schema);
    if (Array.isArray(value)) {
      if (value.length > 0 && s.items) walk(s.items as Schema, value[0], `${pointer}/0`);
      return;
    }
    if (typeof value !== 'object' || value === null || !s.properties) return;
    const required = new Set((s.required ?? []) as string[]);
    for (const [name, property] of Object.entries(s.properties as Record<string, Schema>)) {
      const path = `${pointer}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const r = resolve(property);
      const types = allowedTypes(property);
      if (required.has(name)) add(path, 'missing', (body) => deleteAt(body, path));
      if (types) {
        for (const [type, sample] of WRONG_TYPE_SAMPLES) {
          const allowed = types.has(type) || (type === 'integer' && types.has('number'));
          if (!allowed) add(path, `type ${type}`, (body) => setAt(body, path, structuredClone(sample)));
        }
        if (!types.has('null')) add(path, 'null', (body) => setAt(body, path, null));
      }
      if (Array.isArray(r.enum)) add(path, 'outside enum', (body) => setAt(body, path, 'notAnAllowedValue'));
      if ('const' in r) add(path, 'outside const', (body) => setAt(body, path, `${String(r.const)}.unknown`), { unknownEventType: path === '/eventType' });
      if (typeof r.pattern === 'string' && !new RegExp(r.pattern, 'u').test(NOT_A_PATTERN_MATCH)) {
        add(path, 'pattern', (body) => setAt(body, path, NOT_A_PATTERN_MATCH));
      }
      walk(property, (value as Record<string, unknown>)[name], path);
    }
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) return;
    add(`${pointer}/${UNKNOWN_PROPERTY}`, 'unknown property', (body) => setAt(body, `${pointer}/${UNKNOWN_PROPERTY}`, 'extra'), { onlyStrict: true });
  };
  walk(event, valid, '');
  return mutations;
}

function tokensOf(pointer: string): string[] {
  return pointer.split('/').slice(1).map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(root: Record<string, unknown>, pointer: string): [Record<string, unknown>, string] {
  const tokens = tokensOf(pointer);
  const last = tokens.pop() as string;
  let node: Record<string, unknown> = root;
  for (const token of tokens) node = node[token] as Record<string, unknown>;
  return [node, last];
}

function setAt(root: Record<string, unknown>, pointer: string, value: unknown): void {
  const [parent, key] = parentOf(root, pointer);
  parent[key] = value;
}

function deleteAt(root: Record<string, unknown>, pointer: string): void {
  const [parent, key] = parentOf(root, pointer);
  delete parent[key];
}
