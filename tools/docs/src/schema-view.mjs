// Renders a dereferenced JSON Schema (2020-12) as nested property tables: the shape a reader
// of the API and event references needs (name, type, required, nullable, allowed values,
// limits, description), with the decisions marked x-assumption shown where they apply.
import { escapeHtml } from './escape-html.mjs';
import { renderInlineMarkdown, renderMarkdown } from './markdown.mjs';

const constraintKeywords = ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems', 'contentEncoding'];

/**
 * A short type label such as `string | null`, `array of Card`, `"user.created"`.
 * @param {any} schema
 * @returns {string}
 */
export function typeLabel(schema) {
  if (!schema || typeof schema !== 'object') return 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  const variants = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(variants)) return variants.map(typeLabel).join(' | ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const labels = types.map((type) => {
    if (type === 'array') return `array of ${typeLabel(schema.items)}`;
    if (type === 'object' && schema.title) return schema.title;
    return type;
  });
  if (labels.length === 0) return schema.title ?? (schema.properties ? 'object' : 'any');
  return labels.join(' | ');
}

/**
 * The "x-assumption" note of a spec node, when it has one.
 * @param {any} node
 * @returns {string}
 */
export function renderAssumption(node) {
  const assumption = node?.['x-assumption'];
  if (!assumption) return '';
  const source = assumption.source ? ` <span class="badge">(source: ${escapeHtml(assumption.source)})</span>` : '';
  return `<div class="assumption"><strong>Assumption:</strong> ${renderInlineMarkdown(String(assumption.decision ?? ''))} <em>Why:</em> ${renderInlineMarkdown(String(assumption.reason ?? ''))}${source}</div>`;
}

function constraints(schema) {
  const parts = [];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((value) => `<code>${escapeHtml(JSON.stringify(value))}</code>`).join(', ')}`);
  for (const keyword of constraintKeywords) {
    if (schema[keyword] !== undefined) parts.push(`${keyword}: <code>${escapeHtml(schema[keyword])}</code>`);
  }
  if (schema.additionalProperties === false) parts.push('no other properties');
  return parts.length ? `<div class="badge">${parts.join(' · ')}</div>` : '';
}

function nestedSchemaOf(schema) {
  if (!schema || typeof schema !== 'object') return undefined;
  if (schema.properties) return schema;
  if (schema.items?.properties) return schema.items;
  const variant = (schema.oneOf ?? schema.anyOf ?? []).find((entry) => entry?.properties);
  return variant;
}

/**
 * One object schema from an `allOf` (a base schema narrowed by another): properties merged,
 * later members refining earlier ones, required lists joined.
 * @param {any} schema
 */
export function mergeAllOf(schema) {
  const { allOf, ...own } = schema;
  const parts = [...allOf.map((part) => (Array.isArray(part?.allOf) ? mergeAllOf(part) : part)), own];
  const merged = Object.assign({}, ...parts.map(({ properties, required, ...rest }) => rest));
  const properties = {};
  for (const part of parts) {
    for (const [name, property] of Object.entries(part?.properties ?? {})) properties[name] = { ...(properties[name] ?? {}), ...property };
  }
  const required = [...new Set(parts.flatMap((part) => part?.required ?? []))];
  return { ...merged, ...(Object.keys(properties).length ? { properties } : {}), ...(required.length ? { required } : {}) };
}

/**
 * A schema as HTML: a property table for objects, else its type and constraints.
 * @param {any} schema
 * @param {Set<object>} [path] schemas being rendered above this one (cycle guard)
 * @returns {string}
 */
export function renderSchema(schema, path = new Set()) {
  if (!schema || typeof schema !== 'object') return '<p class="badge">Any JSON value.</p>';
  if (Array.isArray(schema.allOf)) return renderSchema(mergeAllOf(schema), path);
  const head = `${schema.description && !schema.properties ? renderMarkdown(schema.description) : ''}${renderAssumption(schema)}`;
  if (!schema.properties) {
    return `${head}<p><code>${escapeHtml(typeLabel(schema))}</code></p>${constraints(schema)}`;
  }
  if (path.has(schema) || path.size > 12) return `<p class="badge">${escapeHtml(schema.title ?? 'object')} (recursive, see above)</p>`;
  const inner = new Set(path).add(schema);
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties).map(([name, property]) => {
    const nested = nestedSchemaOf(property);
    const nestedHtml = nested && nested !== schema
      ? `<details><summary>${escapeHtml(nested.title ?? name)} properties</summary>${renderSchema(nested, inner)}</details>`
      : '';
    return `<tr><td><code>${escapeHtml(name)}</code>${required.has(name) ? ' <span class="badge">required</span>' : ''}</td><td><code>${escapeHtml(typeLabel(property))}</code>${constraints(property ?? {})}</td><td>${renderMarkdown(property?.description)}${renderAssumption(property)}${nestedHtml}</td></tr>`;
  });
  return `${schema.title ? `<p><strong>${escapeHtml(schema.title)}</strong></p>` : ''}${schema.description ? renderMarkdown(schema.description) : ''}${renderAssumption(schema)}<table><thead><tr><th>Property</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
