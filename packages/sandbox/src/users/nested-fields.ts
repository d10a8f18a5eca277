import { userSchema } from '../generated/openapi-contract.js';

interface ObjectSchema {
  title?: string;
  properties: Record<string, unknown>;
}

/** The object schema a value is checked against: the schema itself, or its object branch of an `anyOf` (a nullable object). */
function objectSchemaOf(schema: unknown): ObjectSchema | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const candidate = schema as { properties?: unknown; anyOf?: unknown[] };
  if (typeof candidate.properties === 'object' && candidate.properties !== null) return candidate as ObjectSchema;
  return candidate.anyOf?.map(objectSchemaOf).find((branch) => branch !== undefined);
}

function itemsOf(schema: unknown): unknown {
  return typeof schema === 'object' && schema !== null ? (schema as { items?: unknown }).items : undefined;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

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
  const visit = (value: unknown, schema: unknown, path: string): void => {
    if (Array.isArray(value)) {
      const items = itemsOf(schema);
      if (items !== undefined) value.forEach((item, index) => visit(item, items, `${path}[${index}]`));
      return;
    }
    const objectSchema = objectSchemaOf(schema);
    if (!isPlainObject(value) || objectSchema === undefined) return;
    const fields = Object.keys(objectSchema.properties);
    const unknown = Object.keys(value).filter((field) => !fields.includes(field));
    if (unknown.length > 0) {
      const what = objectSchema.title === undefined ? 'its' : `the ${objectSchema.title}`;
      problems.push(
        `${path} has ${unknown.length > 1 ? 'unknown fields' : 'an unknown field'} ${unknown.map((field) => JSON.stringify(field)).join(', ')}; ${what} fields are ${fields.join(', ')}`,
      );
    }
    for (const field of fields) if (field in value) visit(value[field], objectSchema.properties[field], `${path}.${field}`);
  };
  const userProperties = (userSchema as ObjectSchema).properties;
  for (const [field, value] of Object.entries(seed)) {
    if (field in userProperties && typeof value === 'object' && value !== null) visit(value, userProperties[field], field);
  }
  if (Array.isArray(seed.cards)) {
    seed.cards.forEach((card, index) => {
      const lastFourDigits = isPlainObject(card) ? card.lastFourDigits : undefined;
      if (typeof lastFourDigits === 'string' && !/^[0-9]{4}$/.test(lastFourDigits)) {
        problems.push(`cards[${index}].lastFourDigits must be the last four digits of the card number, e.g. "4242"; got ${JSON.stringify(lastFourDigits.slice(0, 40))}`);
      }
    });
  }
  return problems;
}
