// capi-property-description: every property of every schema has a non-empty description,
// because the specs feed the docs site and the TSDoc of the generated types.
import { forEachSchemaWithProperties } from './schema-properties.js';

export default function propertiesDescribed(document) {
  const results = [];
  forEachSchemaWithProperties(document, (schema, path) => {
    for (const [name, property] of Object.entries(schema.properties)) {
      const description = property?.description;
      if (typeof description !== 'string' || description.trim() === '') {
        results.push({
          message: `Property "${name}" has no description; add \`description:\` saying what the value means (and its unit or format).`,
          path: [...path, 'properties', name],
        });
      }
    }
  });
  return results;
}
