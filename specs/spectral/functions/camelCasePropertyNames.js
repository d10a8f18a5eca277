// capi-camel-case-properties: every property name of every schema is camelCase, so the
// names read the same in JSON, in the generated TypeScript and in the docs. Objects marked
// `x-http-headers: true` are exempt: HTTP header names have their own conventional case.
import { forEachSchemaWithProperties } from './schema-properties.js';

const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;

export default function camelCasePropertyNames(document) {
  const results = [];
  forEachSchemaWithProperties(document, (schema, path) => {
    if (schema['x-http-headers'] === true) return;
    for (const name of Object.keys(schema.properties)) {
      if (!CAMEL_CASE.test(name)) {
        results.push({
          message: `Property "${name}" is not camelCase; rename it (for example "${toCamelCase(name)}"), or mark the schema \`x-http-headers: true\` if it lists HTTP headers.`,
          path: [...path, 'properties', name],
        });
      }
    }
  });
  return results;
}

function toCamelCase(name) {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((word, index) => (index === 0 ? word[0].toLowerCase() + word.slice(1) : word[0].toUpperCase() + word.slice(1))).join('') || 'camelCase';
}
