import { userSchema } from '../generated/openapi-contract.js';

interface ObjectSchema {
  title?: string;
  properties: Record<string, unknown>;
}

/**
 * Finds the schema a `$ref` names. The embedded OpenAPI contract is dereferenced (no `$ref`);
 * the webhook event schemas of @capi/webhook-validator refer to each other by `$id`.
 */
export type ResolveRef = (ref: string) => unknown;

/** The schema itself, or the one its `$ref` names (followed a few times at most). */
function resolved(schema: unknown, resolve: ResolveRef | undefined): unknown {
  let current = schema;
  for (let hops = 0; hops < 8; hops++) {
    const ref = typeof current === 'object' && current !== null ? (current as { $ref?: unknown }).$ref : undefined;
    if (typeof ref !== 'string' || resolve === undefined) return current;
    current = resolve(ref);
  }
  return current;
}

/** The object schema a value is checked against: the schema itself, or its object branch of an `anyOf` (a nullable object). */
function objectSchemaOf(schema: unknown, resolve: ResolveRef | undefined): ObjectSchema | undefined {
  const target = resolved(schema, resolve);
  if (typeof target !== 'object' || target === null) return undefined;
  const candidate = target as { properties?: unknown; anyOf?: unknown[] };
  if (typeof candidate.properties === 'object' && candidate.properties !== null) return candidate as ObjectSchema;
  return candidate.anyOf?.map((branch) => objectSchemaOf(branch, resolve)).find((branch) => branch !== undefined);
}

function itemsOf(schema: unknown, resolve: ResolveRef | undefined): unknown {
  const target = resolved(schema, resolve);
  return typeof target === 'object' && target !== null ? (target as { items?: unknown }).items : undefined;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An object of a value with fields that its schema does not define. */
export interface UnknownFields {
  /** Where the object is: `cards[0]`, `data.bankingDetails`, or the path given for the value itself. */
  path: string;
  /** The fields its schema does not define, in the object's order. */
  fields: string[];
  /** The schema's title (`Card`), when it has one. */
  title: string | undefined;
  /** The fields the schema defines. */
  known: string[];
}

/**
 * Every object in `value`, itself included, that has a field its (object) schema does not
 * list, by path: `path` for the value, then `.field` and `[index]` below it. Only the fields
 * the schema defines are walked into; a schema without `properties` (such as the unspecified
 * data of `card.transaction.created`) has no unknown field. The spec's schemas stay open (a
 * receiver must not refuse an event for a field it does not know), so the validator lets such
 * fields through: this is how the sandbox keeps to the shapes the service sends.
 */
export function unknownFieldsOf(value: unknown, schema: unknown, path: string, resolve?: ResolveRef): UnknownFields[] {
  const found: UnknownFields[] = [];
  const visit = (value: unknown, schema: unknown, path: string): void => {
    if (Array.isArray(value)) {
      const items = itemsOf(schema, resolve);
      if (items !== undefined) value.forEach((item, index) => visit(item, items, `${path}[${index}]`));
      return;
    }
    const objectSchema = objectSchemaOf(schema, resolve);
    if (!isPlainObject(value) || objectSchema === undefined) return;
    const known = Object.keys(objectSchema.properties);
    const fields = Object.keys(value).filter((field) => !known.includes(field));
    if (fields.length > 0) found.push({ path, fields, title: objectSchema.title, known });
    for (const field of known) if (field in value) visit(value[field], objectSchema.properties[field], path === '' ? field : `${path}.${field}`);
  };
  visit(value, schema, path);
  return found;
}

/**
 * What is wrong with the nested values of a user seed that the User schema lets through: a
 * field that the nested record does not have (a Card has exactly its six fields, reference
 * 2.3; bankingDetails exactly its four, 2.4; likewise the wallets and `availableFeatures`),
 * and a card's `lastFourDigits` that is not four digits. The spec's schemas stay open (a
 * receiver must not refuse an event for a field it does not know), but a user seeded into the
 * sandbox must be one the service could send, or receivers are taught fields that never come.
 * Each problem names its path (`cards[0].pan`). Top-level fields are checked by the registry.
 */
export function nestedFieldProblems(seed: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const userProperties = (userSchema as ObjectSchema).properties;
  for (const [field, value] of Object.entries(seed)) {
    if (!(field in userProperties) || typeof value !== 'object' || value === null) continue;
    for (const { path, fields, title, known } of unknownFieldsOf(value, userProperties[field], field)) {
      const what = title === undefined ? 'its' : `the ${title}`;
      problems.push(`${path} has ${fields.length > 1 ? 'unknown fields' : 'an unknown field'} ${fields.map((name) => JSON.stringify(name)).join(', ')}; ${what} fields are ${known.join(', ')}`);
    }
  }
  problems.push(...cardDigitsProblems(seed.cards, 'cards'));
  return problems;
}

/**
 * A card's `lastFourDigits` that is not four digits, in `cards` (a User's cards, at `path`):
 * the schema takes any string, the service sends four digits. Checked for seeded users and
 * for the users that events carry alike.
 */
export function cardDigitsProblems(cards: unknown, path: string): string[] {
  if (!Array.isArray(cards)) return [];
  return cards.flatMap((card, index) => {
    const lastFourDigits = isPlainObject(card) ? card.lastFourDigits : undefined;
    if (typeof lastFourDigits !== 'string' || /^[0-9]{4}$/.test(lastFourDigits)) return [];
    return [`${path}[${index}].lastFourDigits must be the last four digits of the card number, e.g. "4242"; got ${JSON.stringify(lastFourDigits.slice(0, 40))}`];
  });
}
