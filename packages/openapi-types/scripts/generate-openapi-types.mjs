import openapiTS, { astToString } from 'openapi-typescript';
import { generatedHeader } from '@capi/codegen-kit';
import { OpenapiTypesGenerationError } from './generation-error.mjs';
import { openStringEnum } from './open-string-enum.mjs';
import { renderSchemaAliases } from './render-schema-aliases.mjs';

/** Where the bundled spec comes from, for the header of the generated files. */
export const SPEC_SOURCE = { specPath: 'specs/openapi.yaml', bundlePath: 'specs/dist/openapi.json' };

/**
 * Generates the contents of `src/generated/` from a bundled OpenAPI 3.1 document:
 * `openapi.ts` (openapi-typescript: paths, components, operations) and
 * `schema-aliases.ts` (one named type per component schema).
 *
 * @param {any} doc bundled OpenAPI 3.1 document
 * @returns {Promise<Record<'openapi.ts' | 'schema-aliases.ts', string>>}
 * @example
 * const files = await generateOpenapiTypes(JSON.parse(readFileSync('specs/dist/openapi.json', 'utf8')))
 */
export async function generateOpenapiTypes(doc) {
  if (typeof doc?.openapi !== 'string' || !doc.openapi.startsWith('3.1')) {
    throw new OpenapiTypesGenerationError('NOT_OPENAPI_3_1',
      `Expected an OpenAPI 3.1 document, got openapi: ${JSON.stringify(doc?.openapi)}. Point the generator at specs/dist/openapi.json.`);
  }
  // openapi-typescript may annotate the document it is given; the caller's stays intact.
  const ast = await openapiTS(structuredClone(doc), {
    silent: true,
    // An object whose fields the spec leaves open is Record<string, unknown>, not "no keys".
    emptyObjectsUnknown: true,
    // An enum the spec marks as incomplete keeps its known values: "a" | "b" | (string & {}).
    transform: (schema) => openStringEnum(schema),
  });
  const header = generatedHeader({ ...SPEC_SOURCE, specVersion: doc.info?.version, packageName: '@capi/openapi-types' });
  return {
    'openapi.ts': `${header}\n${astToString(ast)}`,
    'schema-aliases.ts': `${header}\n${renderSchemaAliases(doc.components?.schemas ?? {})}`,
  };
}
