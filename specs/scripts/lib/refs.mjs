// Rewrites the file $refs of the hand-written specs into the refs of the bundled outputs.

// `./User.yaml`, `./schemas/User.yaml`, `../schemas/User.yaml#/properties/id` ...
const SCHEMA_FILE_REF = /^(?:\.{1,2}\/)*(?:schemas\/)?([A-Za-z0-9]+)\.yaml(#.*)?$/;

/** The schema title a `$ref` points to when it names a schema file, else null. */
export function schemaFileRefTarget(ref) {
  const match = SCHEMA_FILE_REF.exec(ref);
  return match ? { title: match[1], pointer: match[2] ?? '' } : null;
}

/**
 * Deep-copies `node`, replacing each `$ref` to a schema file by `toRef(title, pointer)`.
 * Copying (instead of editing in place) matters: YAML aliases share objects between places.
 */
export function rewriteSchemaFileRefs(node, toRef, onTarget = () => {}) {
  if (Array.isArray(node)) return node.map((item) => rewriteSchemaFileRefs(item, toRef, onTarget));
  if (node === null || typeof node !== 'object') return node;
  const copy = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const target = schemaFileRefTarget(value);
      if (target) {
        onTarget(target.title);
        copy[key] = toRef(target.title, target.pointer);
        continue;
      }
    }
    copy[key] = rewriteSchemaFileRefs(value, toRef, onTarget);
  }
  return copy;
}

/** Titles of every schema file referenced by `node`, directly. */
export function referencedSchemaTitles(node) {
  const titles = new Set();
  rewriteSchemaFileRefs(node, (title) => title, (title) => titles.add(title));
  return titles;
}
