import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeGeneratedFiles } from '@capi/codegen-kit/testing';
import { generateOpenapiTypes, SPEC_SOURCE } from '../scripts/generate-openapi-types.mjs';

describeGeneratedFiles({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/openapi-types',
  specSource: SPEC_SOURCE,
  generate: generateOpenapiTypes,
  fileNames: ['openapi.ts', 'schema-aliases.ts'],
  yamlSource: 'openapi: 3.1.0\n',
});
