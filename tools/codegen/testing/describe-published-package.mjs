import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { publint } from 'publint';
import { beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from './temporary-directory.mjs';

const require = createRequire(import.meta.url);

/**
 * The specification of a package as consumers install it: publint finds nothing, attw
 * finds types in every resolution mode of the packed tarball, and both `import` and
 * `require` load `dist/` with what `entry.expect` asserts. Needs `dist/` (turbo builds
 * before test).
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package
 * @param {string} options.packageName e.g. `@capi/openapi-types`
 * @param {{ gives: string, expect: (entry: Record<string, any>) => void }} options.entry
 *   what both module systems get (the test is named `import and require both <gives>`) and its assertions
 * @example
 * describePublishedPackage({
 *   packageDir, packageName: '@capi/openapi-types',
 *   entry: { gives: 'load the (types-only) entry without side effects', expect: (entry) => expect(Object.keys(entry)).toEqual([]) },
 * });
 */
export function describePublishedPackage({ packageDir, packageName, entry }) {
  beforeAll(() => {
    // turbo runs build before test; run directly, build first.
    expect(existsSync(join(packageDir, 'dist/index.js')), `dist/ is missing: run pnpm turbo run build --filter=${packageName} first`).toBe(true);
  });

  describe('the package works for ESM and CJS consumers as published', () => {
    it('publint finds nothing to fix in package.json and the packed files', async () => {
      const { messages } = await publint({ pkgDir: packageDir, strict: true });
      expect(messages).toEqual([]);
    });

    it('arethetypeswrong finds types for every resolution mode (node10, node16 CJS and ESM, bundler)', () => {
      // Packed into a directory of its own, so nothing else working in the package dir can
      // trip over (or on) the tarball.
      const destination = temporaryDirectory(join(tmpdir(), 'attw-'));
      const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: packageDir, encoding: 'utf8' });
      expect(pack.status, pack.stderr).toBe(0);
      const tarball = join(destination, JSON.parse(pack.stdout)[0].filename);
      const attw = join(dirname(require.resolve('@arethetypeswrong/cli/package.json')), 'dist/index.js');
      const result = spawnSync(process.execPath, [attw, tarball, '--format', 'json', '--no-definitely-typed'], { encoding: 'utf8' });
      expect(result.status, result.stderr || result.stdout).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report.analysis.packageName).toBe(packageName);
      expect(report.analysis.types, 'attw found no types in the tarball: was dist/ rebuilt meanwhile?').toEqual({ kind: 'included' });
      expect(Object.values(report.problems ?? {})).toEqual([]);
    });

    it(`import and require both ${entry.gives}`, async () => {
      const esm = await import(pathToFileURL(join(packageDir, 'dist/index.js')).href);
      const cjs = require(join(packageDir, 'dist/index.cjs'));
      entry.expect(esm);
      entry.expect(cjs);
    });
  });
}
