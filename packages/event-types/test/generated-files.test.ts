import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeGeneratedFiles } from '@capi/codegen-kit/testing';
import { generateEventTypes, SPEC_SOURCE } from '../scripts/generate-event-types.mjs';

describeGeneratedFiles({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/event-types',
  specSource: SPEC_SOURCE,
  generate: generateEventTypes,
  fileNames: ['models.ts', 'events.ts'],
  yamlSource: 'asyncapi: 3.0.0\n',
});
