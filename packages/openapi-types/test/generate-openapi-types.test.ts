import { describe, expect, it } from 'vitest';
import { generateOpenapiTypes } from '../scripts/generate-openapi-types.mjs';
import { OpenapiTypesGenerationError } from '../scripts/generation-error.mjs';

const documentWith = (schemas: Record<string, unknown>) => ({
  openapi: '3.1.0',
  info: { title: 'test', version: '9.9.9' },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
      },
    },
  },
  components: { schemas },
});

describe('openapi-typescript output for the shapes the spec uses', () => {
  it('given nullable, required, optional, enum and open-object properties, renders them as on the wire', async () => {
    const { 'openapi.ts': code } = await generateOpenapiTypes(documentWith({
      Thing: {
        type: 'object',
        required: ['id', 'email', 'status', 'extra'],
        properties: {
          id: { type: 'string' },
          email: { type: ['string', 'null'] },
          status: { type: 'string', enum: ['pending', 'synced'] },
          extra: { type: 'object' },
          nickname: { type: 'string' },
        },
      },
    }));
    expect(code).toContain('            id: string;\n');
    expect(code).toContain('            email: string | null;\n');
    expect(code).toContain('            status: "pending" | "synced";\n');
    // An object without declared fields is open, never Record<string, never>.
    expect(code).toContain('            extra: Record<string, unknown>;\n');
    expect(code).toContain('            nickname?: string;\n');
    expect(code).toContain('        get: operations["getThing"];');
    expect(code).toContain('export interface paths {');
    expect(code).toContain('export interface operations {');
  });

  it('given an open enum (anyOf known values or any string), keeps the known values: "a" | "b" | (string & {})', async () => {
    const { 'openapi.ts': code } = await generateOpenapiTypes(documentWith({
      Thing: { type: 'object' },
      Step: { anyOf: [{ type: 'string', enum: ['action_accept_tos', 'waiting_kyc_setup'] }, { type: 'string' }] },
      ClosedStep: { type: 'string', enum: ['a', 'b'] },
      StepOrNumber: { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'number' }] },
    }));
    expect(code).toContain('        Step: "action_accept_tos" | "waiting_kyc_setup" | (string & {});\n');
    // Only that pattern changes: a closed enum and other unions are as openapi-typescript makes them.
    expect(code).toContain('        ClosedStep: "a" | "b";\n');
    expect(code).toContain('        StepOrNumber: "a" | number;\n');
  });

  it('names the spec and its version in the header of both files', async () => {
    const files = await generateOpenapiTypes(documentWith({ Thing: { type: 'object' } }));
    for (const text of Object.values(files)) {
      expect(text.split('\n')[1]).toBe('// Source: specs/openapi.yaml (info.version 9.9.9), read from specs/dist/openapi.json.');
    }
  });

  it('rejects a document that is not OpenAPI 3.1, saying which file to use', async () => {
    const error = await generateOpenapiTypes({ swagger: '2.0' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenapiTypesGenerationError);
    expect((error as OpenapiTypesGenerationError).code).toBe('NOT_OPENAPI_3_1');
    expect((error as OpenapiTypesGenerationError).message).toContain('specs/dist/openapi.json');
  });
});
