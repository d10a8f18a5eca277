import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { publint } from 'publint';
import { beforeAll, describe, expect, it } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

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
    const attw = join(packageDir, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    const result = spawnSync(process.execPath, [attw, '--pack', '.', '--format', 'json'], { cwd: packageDir, encoding: 'utf8' });
    const report = JSON.parse(result.stdout);
    expect(report.analysis.packageName).toBe('@capi/openapi-types');
    expect(Object.values(report.problems)).toEqual([]);
    expect(result.status).toBe(0);
  });

  it('import and require both load the (types-only) entry without side effects', async () => {
    const esm = await import(pathToFileURL(join(packageDir, 'dist/index.js')).href);
    const cjs = createRequire(import.meta.url)(join(packageDir, 'dist/index.cjs'));
    expect(Object.keys(esm)).toEqual([]);
    expect(Object.keys(cjs)).toEqual([]);
  });
});
