// capi-assumption-well-formed: every `x-assumption` is `{ decision, reason, source? }`, all
// non-empty strings, so tools and the docs site can list the decisions taken where the
// reference is silent.
const ALLOWED_KEYS = new Set(['decision', 'reason', 'source']);

export default function assumptionWellFormed(assumption, _options, context) {
  // Spectral wants absolute paths in results.
  const at = (...keys) => [...context.path, ...keys];
  if (assumption === null || typeof assumption !== 'object' || Array.isArray(assumption)) {
    return [{ message: '`x-assumption` must be an object `{ decision, reason, source? }`, not a plain value.', path: at() }];
  }
  const results = [];
  for (const key of ['decision', 'reason']) {
    if (typeof assumption[key] !== 'string' || assumption[key].trim() === '') {
      results.push({ message: `\`x-assumption\` needs a non-empty string \`${key}\` (${key === 'decision' ? 'what was assumed' : 'why'}).`, path: key in assumption ? at(key) : at() });
    }
  }
  if ('source' in assumption && (typeof assumption.source !== 'string' || assumption.source.trim() === '')) {
    results.push({ message: '`x-assumption.source` must be a non-empty string (where the fact comes from) when present.', path: at('source') });
  }
  for (const key of Object.keys(assumption)) {
    if (!ALLOWED_KEYS.has(key)) {
      results.push({ message: `\`x-assumption\` has an unknown field "${key}"; only decision, reason and source are allowed.`, path: at(key) });
    }
  }
  return results;
}
