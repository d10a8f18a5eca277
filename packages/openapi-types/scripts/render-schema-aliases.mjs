import { OpenapiTypesGenerationError } from './generation-error.mjs';
import { describeWithExample, tsdocComment } from '@capi/codegen-kit';

// Names an alias may not take: the root types of openapi-typescript's output (the alias
// would shadow them) and TypeScript's own type keywords.
const TAKEN_NAMES = new Set([
  'paths', 'webhooks', 'components', 'operations', '$defs',
  'any', 'unknown', 'never', 'void', 'undefined', 'null', 'object', 'string', 'number',
  'boolean', 'symbol', 'bigint', 'type', 'interface', 'enum', 'class', 'function', 'default',
]);

/**
 * Renders `export type <Name> = components["schemas"]["<Name>"];` for every component
 * schema, in spec order, with the schema's description and first example as TSDoc, so consumers never have
 * to write `components["schemas"][...]` and a new schema gets its alias automatically.
 *
 * @param {Record<string, { description?: string, examples?: unknown[] }>} schemas `components.schemas` of the bundled spec
 * @returns {string}
 * @example
 * renderSchemaAliases({ User: { description: 'A user.' } })
 * // import type { components } from './openapi.js';\n\n/** A user. *\/\nexport type User = components["schemas"]["User"];\n
 */
export function renderSchemaAliases(schemas) {
  const aliases = Object.entries(schemas).map(([name, schema]) => {
    if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) || TAKEN_NAMES.has(name)) {
      throw new OpenapiTypesGenerationError('INVALID_ALIAS_NAME',
        `components.schemas.${JSON.stringify(name)} cannot become an exported type name; rename the schema (its title and file name in specs/schemas/) to a PascalCase identifier that is not one of: ${[...TAKEN_NAMES].join(', ')}.`);
    }
    return `${tsdocComment(describeWithExample(schema))}export type ${name} = components["schemas"][${JSON.stringify(name)}];\n`;
  });
  return [`import type { components } from './openapi.js';\n`, ...aliases].join('\n');
}
