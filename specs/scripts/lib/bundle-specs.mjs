// Builds the self-contained specs/dist outputs from the hand-written specs and schemas. Redocly's
// bundler (@redocly/openapi-core, the library under `redocly bundle`) resolves every `$ref`, for
// OpenAPI 3.1 and AsyncAPI 3.0 alike; this module only fixes what the outputs promise on top
// of it (component schemas sorted by title, no `$schema` inside a document, standalone schemas
// with `$id`s), so that every consumer reads the same bytes from one bundling path.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundle, bundleFromString, createConfig } from '@redocly/openapi-core';

/** Base of every schema's `$id` in specs/dist/schemas. */
export const SCHEMA_ID_BASE = 'https://schemas.capi.dev/v1/';

const COMPONENT_SCHEMA_REF = /^#\/components\/schemas\/([A-Za-z0-9]+)(\/.*)?$/;

/** A copy of `node` with each `#/components/schemas/X` ref pointed at the standalone `$id` of X. */
export function toStandaloneRefs(node) {
  if (Array.isArray(node)) return node.map(toStandaloneRefs);
  if (node === null || typeof node !== 'object') return node;
  const copy = {};
  for (const [key, value] of Object.entries(node)) {
    const match = key === '$ref' && typeof value === 'string' ? COMPONENT_SCHEMA_REF.exec(value) : null;
    copy[key] = match ? `${SCHEMA_ID_BASE}${match[1]}.json${match[2] ? `#${match[2]}` : ''}` : toStandaloneRefs(value);
  }
  return copy;
}

/** Runs Redocly's bundler; any problem it reports (an unresolved `$ref`, broken YAML) is an error naming the file. */
async function redoclyBundle(options, dir) {
  const config = await createConfig({});
  let result;
  try {
    result = 'source' in options ? await bundleFromString({ ...options, config }) : await bundle({ ...options, config });
  } catch (error) {
    throw new Error(`${relative(dir, error.source?.absoluteRef ?? options.ref ?? options.absoluteRef)}: ${error.message}`);
  }
  const problems = result.problems.filter((problem) => problem.severity === 'error');
  if (problems.length > 0) {
    throw new Error(problems.map((problem) => {
      const at = problem.location?.[0];
      return `${at ? relative(dir, at.source.absoluteRef) : '.'}: ${problem.message}`;
    }).join('; '));
  }
  return result.bundle.parsed;
}

/**
 * A bundled document as specs/dist publishes it: `components.schemas` sorted by title, each
 * without `$schema` (the document sets the dialect).
 */
function withSortedComponentSchemas(document) {
  const schemas = document.components?.schemas ?? {};
  const sorted = {};
  for (const title of Object.keys(schemas).sort()) {
    const { $schema, ...schema } = schemas[title];
    sorted[title] = schema;
  }
  return { ...document, components: { ...document.components, schemas: sorted } };
}

/**
 * Every schema file of `schemasDir`, bundled once through a catalogue document that lists them
 * all under `components.schemas`; returns a Map title -> schema (as Redocly embeds it), sorted
 * by title. A schema whose title is not its file name is refused: the title names the
 * component, the generated type and the `$id`.
 */
async function bundleSchemaCatalogue(dir) {
  const schemasDir = join(dir, 'schemas');
  const names = readdirSync(schemasDir).filter((name) => name.endsWith('.yaml')).sort().map((name) => name.slice(0, -'.yaml'.length));
  const source = JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'capi schema catalogue', version: '0' },
    paths: {},
    components: { schemas: Object.fromEntries(names.map((name) => [name, { $ref: `./schemas/${name}.yaml` }])) },
  });
  const catalogue = await redoclyBundle({ source, absoluteRef: join(dir, 'schema-catalogue.json') }, dir);
  const schemas = new Map();
  for (const name of names) {
    const schema = catalogue.components.schemas[name];
    if (schema?.title !== name) {
      throw new Error(`schemas/${name}.yaml: title is ${JSON.stringify(schema?.title)} but must equal the file name ${JSON.stringify(name)}; rename the file or fix the title`);
    }
    schemas.set(name, schema);
  }
  return schemas;
}

/**
 * Builds every output in memory from the specs in `dir`; returns a Map relative path -> file text:
 * `openapi.json`, `asyncapi.json`, `openapi.dereferenced.json` (every `$ref` replaced by its
 * target, for readers that need whole schemas, like the sandbox) and `schemas/<Title>.json`.
 */
export async function bundleSpecs(dir) {
  const schemas = await bundleSchemaCatalogue(dir);
  const outputs = new Map();
  for (const spec of ['openapi', 'asyncapi']) {
    const bundled = await redoclyBundle({ ref: join(dir, `${spec}.yaml`) }, dir);
    outputs.set(`${spec}.json`, toJsonText(withSortedComponentSchemas(bundled)));
  }
  const dereferenced = await redoclyBundle({ ref: join(dir, 'openapi.yaml'), dereference: true }, dir);
  outputs.set('openapi.dereferenced.json', toJsonText(withSortedComponentSchemas(dereferenced)));
  for (const [title, schema] of schemas) {
    const { $schema, ...rest } = toStandaloneRefs(schema);
    outputs.set(`schemas/${title}.json`, toJsonText({ $schema, $id: `${SCHEMA_ID_BASE}${title}.json`, ...rest }));
  }
  return outputs;
}

/** The one serialisation of every output: 2-space JSON and a final newline. */
export function toJsonText(value) {
  return `${JSON.stringify(value, null, 2)}\n`;
}
