// A JSON Schema (2020-12, as bundled by @capi/specs: named schemas under
// components/schemas, referenced by $ref) as one flat markdown table: each property on its own
// row under its dotted path (`data.cards[].status`), so nothing nests or overflows on a phone.
// Named schemas are linked to their section of the schema page, or expanded in place.
import { cell } from './markdown-text.mjs';

/**
 * @typedef {{ components: Record<string, any>, linkTo?: (name: string) => string | undefined, expand?: boolean }} SchemaContext
 *   `components`: the named schemas; `linkTo`: the page link of a named schema (undefined: no
 *   page); `expand`: expand named object schemas in place rather than only linking them.
 */

/**
 * The name of a `$ref` to `#/components/schemas/<Name>`.
 * @param {any} schema
 * @returns {string | undefined}
 */
export function refName(schema) {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? ref.split('/').pop() : undefined;
}

/**
 * The schema a `$ref` points at, with the referring node's own keywords (description,
 * x-assumption) laid over it.
 * @param {any} schema
 * @param {SchemaContext} context
 */
export function resolve(schema, context) {
  const name = refName(schema);
  if (!name) return schema ?? {};
  const target = context.components[name];
  if (!target) throw new Error(`The spec refers to the schema ${schema.$ref}, which it does not define. Run \`pnpm lint:specs\`.`);
  const { $ref, ...own } = schema;
  return { ...resolve(target, context), ...own };
}

/** One object from an `allOf`: properties merged, later members refining earlier ones. */
function mergeAllOf(schema, context) {
  const { allOf, ...own } = schema;
  const parts = [...allOf.map((part) => flatten(part, context)), own];
  const properties = {};
  for (const part of parts) {
    for (const [name, property] of Object.entries(part.properties ?? {})) properties[name] = { ...(properties[name] ?? {}), ...property };
  }
  const merged = Object.assign({}, ...parts.map(({ properties: _p, required: _r, ...rest }) => rest));
  const required = [...new Set(parts.flatMap((part) => part.required ?? []))];
  return { ...merged, ...(Object.keys(properties).length ? { properties } : {}), ...(required.length ? { required } : {}) };
}

function flatten(schema, context) {
  const resolved = resolve(schema, context);
  return Array.isArray(resolved.allOf) ? mergeAllOf(resolved, context) : resolved;
}

/**
 * A short type for a reader: `string | null`, `array of Card`, `"user.created"`, with named
 * schemas linked.
 * @param {any} schema
 * @param {SchemaContext} context
 * @returns {string}
 */
export function typeLabel(schema, context) {
  const name = refName(schema);
  if (name) {
    const link = context.linkTo?.(name);
    return link ? `[${name}](${link})` : name;
  }
  if (!schema || typeof schema !== 'object') return 'any';
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  const variants = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(variants)) return variants.map((variant) => typeLabel(variant, context)).join(' \\| ');
  if (Array.isArray(schema.allOf)) return schema.allOf.map((part) => typeLabel(part, context)).join(' and ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const labels = types.map((type) => (type === 'array' ? `array of ${typeLabel(schema.items, context)}` : type));
  if (labels.length === 0) return schema.properties ? 'object' : 'any';
  return labels.join(' \\| ');
}

/**
 * The limits of a schema in words: `> 0`, `at most 64 characters`, `one of "a", "b"`.
 * @param {any} schema
 * @returns {string[]}
 */
export function constraintsOf(schema) {
  const parts = [];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(', ')}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMaximum !== undefined) parts.push(`< ${schema.exclusiveMaximum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined && schema.minLength === schema.maxLength) parts.push(`exactly ${schema.minLength} characters`);
  else {
    if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  }
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) parts.push(`matches \`${schema.pattern}\``);
  if (schema.format !== undefined) parts.push(`format ${schema.format}`);
  if (schema.contentEncoding !== undefined) parts.push(`${schema.contentEncoding}-encoded`);
  if (schema.default !== undefined) parts.push(`default \`${JSON.stringify(schema.default)}\``);
  if (schema['x-service-default'] !== undefined) parts.push(`the service's default: \`${JSON.stringify(schema['x-service-default'])}\``);
  return parts;
}

function objectShape(schema, context) {
  const flat = flatten(schema, context);
  if (flat.properties) return flat;
  if (flat.type === 'array' || flat.items) {
    const items = flatten(flat.items, context);
    if (items.properties) return { ...items, arrayOf: true };
  }
  const variant = (flat.oneOf ?? flat.anyOf ?? []).map((entry) => flatten(entry, context)).find((entry) => entry.properties);
  return variant;
}

/**
 * The rows of a schema's property table.
 * @param {any} schema
 * @param {SchemaContext} context
 * @param {string} [prefix] dotted path of the parent
 * @param {Set<string>} [seen] named schemas expanded above (cycle guard)
 * @returns {{ path: string, type: string, required: boolean, notes: string }[]}
 */
export function propertyRows(schema, context, prefix = '', seen = new Set()) {
  const flat = flatten(schema, context);
  const required = new Set(flat.required ?? []);
  const rows = [];
  for (const [name, property] of Object.entries(flat.properties ?? {})) {
    const resolved = flatten(property, context);
    const path = `${prefix}${name}`;
    const assumption = resolved['x-assumption'] ? ` *Assumption:* ${resolved['x-assumption'].decision}` : '';
    const limits = constraintsOf(resolved);
    rows.push({
      path,
      type: typeLabel(property, context),
      required: required.has(name),
      notes: `${resolved.description ?? ''}${limits.length ? ` (${limits.join('; ')})` : ''}${assumption}`,
    });
    const nestedName = refName(property) ?? refName(property?.items) ?? (property?.oneOf ?? property?.anyOf ?? []).map(refName).find(Boolean);
    const linkedOnly = nestedName && !context.expand && context.linkTo?.(nestedName);
    const shape = objectShape(property, context);
    if (shape && !linkedOnly && !(nestedName && seen.has(nestedName)) && seen.size < 6) {
      const inner = new Set(seen);
      if (nestedName) inner.add(nestedName);
      rows.push(...propertyRows(shape, context, `${path}${shape.arrayOf ? '[]' : ''}.`, inner));
    }
  }
  return rows;
}

/**
 * A schema as markdown: its property table, or for a non-object its type and limits.
 * @param {any} schema
 * @param {SchemaContext} context
 * @returns {string}
 */
export function schemaMarkdown(schema, context) {
  const flat = flatten(schema, context);
  if (!flat.properties && !objectShape(schema, context)) {
    const limits = constraintsOf(flat);
    return `Type: ${typeLabel(schema, context)}${limits.length ? ` (${limits.join('; ')})` : ''}\n`;
  }
  const rows = propertyRows(objectShape(schema, context) ?? flat, context);
  const extra = flat.additionalProperties === false ? '\nNo other properties are allowed.\n' : '';
  return `| Field | Type | Description |\n| --- | --- | --- |\n${rows
    .map((row) => `| \`${row.path}\`${row.required ? ' **required**' : ''} | ${row.type} | ${cell(row.notes)} |`)
    .join('\n')}\n${extra}`;
}
