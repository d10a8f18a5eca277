import { EventTypesGenerationError } from './generation-error.mjs';

/**
 * Follows local `$ref`s (`#/...`) of the bundled spec until a schema or message object
 * without `$ref` is reached. The bundle has only local refs, so anything else is an error.
 *
 * @param {any} doc the whole bundled spec
 * @param {any} node a node that may be a `{ $ref }`
 * @returns {any}
 */
export function resolveRef(doc, node) {
  const seen = new Set();
  let current = node;
  while (current && typeof current === 'object' && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (seen.has(ref) || !ref.startsWith('#/')) {
      throw new EventTypesGenerationError('UNRESOLVABLE_REF',
        `Cannot resolve $ref "${ref}": only local, non-circular refs are supported. Bundle the spec first (pnpm --filter @capi/specs build).`);
    }
    seen.add(ref);
    current = ref.slice(2).split('/')
      .map((/** @type {string} */ token) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((/** @type {any} */ parent, /** @type {string} */ key) => (parent && typeof parent === 'object' ? parent[key] : undefined), doc);
    if (current === undefined) {
      throw new EventTypesGenerationError('UNRESOLVABLE_REF',
        `$ref "${ref}" points at nothing in the bundled spec; fix the reference in specs/asyncapi.yaml.`);
    }
  }
  return current;
}
