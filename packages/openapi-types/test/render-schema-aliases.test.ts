import { describe, expect, it } from 'vitest';
import { OpenapiTypesGenerationError } from '../scripts/generation-error.mjs';
import { renderSchemaAliases } from '../scripts/render-schema-aliases.mjs';

describe('a named alias for every component schema', () => {
  it('given two schemas, renders one exported alias each, in spec order, with the description as TSDoc', () => {
    expect(renderSchemaAliases({ User: { description: 'A user.' }, AccountLimit: {} })).toBe(`import type { components } from './openapi.js';

/** A user. */
export type User = components["schemas"]["User"];

export type AccountLimit = components["schemas"]["AccountLimit"];
`);
  });

  it('adds the first example of the schema as a TSDoc @example', () => {
    expect(renderSchemaAliases({ SmartWallet: { description: 'A wallet.', examples: [{ address: '0x1', chainId: '100' }, { address: '0x2', chainId: '1' }] } }))
      .toContain('/**\n * A wallet.\n *\n * @example\n * {\n *   "address": "0x1",\n *   "chainId": "100"\n * }\n */\nexport type SmartWallet = components["schemas"]["SmartWallet"];');
  });

  it('gives a new schema its alias without any change to the generator', () => {
    expect(renderSchemaAliases({ CardStatement: { description: 'New.' } })).toContain('export type CardStatement = components["schemas"]["CardStatement"];');
  });

  it('renders a multi-line description as a TSDoc block that cannot be closed early', () => {
    expect(renderSchemaAliases({ Note: { description: 'First line.\nHas */ inside.' } }))
      .toContain('/**\n * First line.\n * Has *\\/ inside.\n */\nexport type Note = components["schemas"]["Note"];');
  });

  it('renders only the import for a spec without schemas', () => {
    expect(renderSchemaAliases({})).toBe("import type { components } from './openapi.js';\n");
  });
});

describe('rejects a schema name that cannot be an exported type name', () => {
  it.each([['account-limit'], ['2FA'], ['with space'], ['paths'], ['components'], ['operations'], ['webhooks'], ['$defs'], ['string'], ['unknown']])('rejects %j', (name) => {
    let caught: unknown;
    try { renderSchemaAliases({ [name]: {} }); } catch (error) { caught = error; }
    expect(caught).toBeInstanceOf(OpenapiTypesGenerationError);
    expect((caught as OpenapiTypesGenerationError).code).toBe('INVALID_ALIAS_NAME');
    expect((caught as OpenapiTypesGenerationError).message).toContain(`components.schemas.${JSON.stringify(name)}`);
    expect((caught as OpenapiTypesGenerationError).message).toMatch(/rename the schema/);
  });
});
