// Reads specs/schemas/*.yaml: the one source of every schema that both specs $ref.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** Base of every schema's `$id` in specs/dist/schemas. */
export const SCHEMA_ID_BASE = 'https://schemas.capi.dev/v1/';

/** Parses YAML the same way everywhere, with a message that names the file on failure. */
export function parseYamlFile(file) {
  const text = readFileSync(file, 'utf8');
  try {
    return parse(text, { prettyErrors: true });
  } catch (error) {
    throw new Error(`${file}: not valid YAML: ${error.message}`);
  }
}

/**
 * Returns the schemas as a Map title -> schema, ordered by title so every output built from it
 * is byte-identical across runs and machines.
 */
export function readSchemaFiles(schemasDir) {
  const files = readdirSync(schemasDir).filter((name) => name.endsWith('.yaml')).sort();
  const schemas = new Map();
  for (const name of files) {
    const file = join(schemasDir, name);
    const schema = parseYamlFile(file);
    const expectedTitle = name.slice(0, -'.yaml'.length);
    if (schema?.title !== expectedTitle) {
      throw new Error(
        `${file}: title is ${JSON.stringify(schema?.title)} but must equal the file name ${JSON.stringify(expectedTitle)}; rename the file or fix the title`,
      );
    }
    schemas.set(expectedTitle, schema);
  }
  return schemas;
}
