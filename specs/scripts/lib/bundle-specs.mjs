// Builds the self-contained specs/dist outputs from the hand-written specs and schemas.
import { SCHEMA_ID_BASE } from './schema-files.mjs';
import { referencedSchemaTitles, rewriteSchemaFileRefs } from './refs.mjs';

const componentRef = (title, pointer) => `#/components/schemas/${title}${pointer}`;

/** A schema as it stands alone in dist/schemas: `$id` set, refs to the siblings' `$id`s. */
export function standaloneSchema(title, schema) {
  const { $schema, ...rest } = rewriteSchemaFileRefs(schema, (target, pointer) => `${SCHEMA_ID_BASE}${target}.json${pointer}`);
  return { $schema, $id: `${SCHEMA_ID_BASE}${title}.json`, ...rest };
}

/** A schema as it is embedded under components/schemas: no `$schema` (the document sets the dialect). */
function embeddedSchema(schema) {
  const { $schema, ...rest } = rewriteSchemaFileRefs(schema, componentRef);
  return rest;
}

/**
 * Replaces every schema-file `$ref` of `spec` by `#/components/schemas/<Title>` and fills
 * components.schemas with every schema the document reaches, sorted by title.
 */
export function bundleSpec(spec, schemas) {
  const listed = Object.keys(spec.components?.schemas ?? {});
  const pending = [...listed, ...referencedSchemaTitles(spec)];
  const included = new Set();
  while (pending.length > 0) {
    const title = pending.pop();
    if (included.has(title)) continue;
    const schema = schemas.get(title);
    if (!schema) throw new Error(`the spec refers to schema "${title}" but specs/schemas/${title}.yaml does not exist`);
    included.add(title);
    pending.push(...referencedSchemaTitles(schema));
  }
  const bundled = rewriteSchemaFileRefs(spec, componentRef);
  const componentSchemas = {};
  for (const title of [...included].sort()) componentSchemas[title] = embeddedSchema(schemas.get(title));
  bundled.components = { ...bundled.components, schemas: componentSchemas };
  return bundled;
}

/** The one serialisation of every output: 2-space JSON and a final newline. */
export function toJsonText(value) {
  return `${JSON.stringify(value, null, 2)}\n`;
}
