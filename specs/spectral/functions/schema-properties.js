// Finds every `properties` map of every schema in a document, wherever it is written.

// Values under these keys are data (examples, enum values), not schemas: never walk them.
const DATA_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum', 'x-enum-descriptions', 'x-state-transitions']);

/**
 * Calls `visit(schema, path)` for every object that has a `properties` map, `path` being the
 * JSON path of that object in the document.
 */
export function forEachSchemaWithProperties(node, visit, path = []) {
  if (Array.isArray(node)) {
    node.forEach((item, index) => forEachSchemaWithProperties(item, visit, [...path, index]));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (node.properties !== null && typeof node.properties === 'object' && !Array.isArray(node.properties)) {
    visit(node, path);
  }
  for (const [key, value] of Object.entries(node)) {
    if (!DATA_KEYS.has(key)) forEachSchemaWithProperties(value, visit, [...path, key]);
  }
}
