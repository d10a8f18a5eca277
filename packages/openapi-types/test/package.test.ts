import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { publint } from 'publint';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh temporary directory, removed when the current test finishes. */
function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(prefix);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

beforeAll(() => {
  // turbo runs build before test; run directly, build first.
  expect(existsSync(join(packageDir, 'dist/index.js')), 'dist/ is missing: run pnpm turbo run build --filter=@capi/openapi-types first').toBe(true);
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
    const attw = join(packageDir, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    const result = spawnSync(process.execPath, [attw, tarball, '--format', 'json', '--no-definitely-typed'], { encoding: 'utf8' });
    expect(result.status, result.stderr || result.stdout).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.analysis.packageName).toBe('@capi/openapi-types');
    expect(report.analysis.types, 'attw found no types in the tarball: was dist/ rebuilt meanwhile?').toEqual({ kind: 'included' });
    expect(Object.values(report.problems ?? {})).toEqual([]);
  });

  it('import and require both load the (types-only) entry without side effects', async () => {
    const esm = await import(pathToFileURL(join(packageDir, 'dist/index.js')).href);
    const cjs = createRequire(import.meta.url)(join(packageDir, 'dist/index.cjs'));
    expect(Object.keys(esm)).toEqual([]);
    expect(Object.keys(cjs)).toEqual([]);
  });
});
