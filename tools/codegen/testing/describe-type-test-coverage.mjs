import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The guard that every `components.schemas` entry of the bundled spec is named in an
 * `expectTypeOf<Name>()` of the package's `test/types.test-d.ts`: a schema added to the spec
 * gets its type automatically, and this makes sure it also gets a type test.
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package
 * @param {string} options.bundlePath repository-relative path of the bundled spec
 * @example
 * describeTypeTestCoverage({ packageDir, bundlePath: 'specs/dist/asyncapi.json' });
 */
export function describeTypeTestCoverage({ packageDir, bundlePath }) {
  describe('every schema of the spec is covered by the type tests', () => {
    it('names each components.schemas entry in an expectTypeOf<...>() of types.test-d.ts', () => {
      const spec = JSON.parse(readFileSync(join(packageDir, '../..', bundlePath), 'utf8'));
      const typeTests = readFileSync(join(packageDir, 'test/types.test-d.ts'), 'utf8');
      const untested = Object.keys(spec.components.schemas).filter((name) => !new RegExp(`expectTypeOf<${name}\\b`).test(typeTests));
      expect(untested).toEqual([]);
    });
  });
}
