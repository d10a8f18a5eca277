import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeTypeTestCoverage } from '@capi/codegen-kit/testing';
import { SPEC_SOURCE } from '../scripts/generate-openapi-types.mjs';

// A schema added to the spec gets its alias automatically; this makes sure it also gets
// an expectTypeOf assertion in test/types.test-d.ts against the reference.
describeTypeTestCoverage({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  bundlePath: SPEC_SOURCE.bundlePath,
});
