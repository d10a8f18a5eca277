import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WALLET } from '../src/index.js';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// A browser app that signs in as the dev wallet imports it from its own entry: @capi/sandbox
// itself is the Node server (node:http, node:crypto) and does not bundle for a browser.
describe('@capi/sandbox/dev-wallet, as a bundler resolves it from a partner project', () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'capi-dev-wallet-'));
    mkdirSync(join(project, 'node_modules/@capi'), { recursive: true });
    symlinkSync(packageDir, join(project, 'node_modules/@capi/sandbox'), 'dir');
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const bundle = (source: string) =>
    build({
      stdin: { contents: source, resolveDir: project, loader: 'ts' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      metafile: true,
      logLevel: 'silent',
    });

  it('bundles for the browser with nothing but the wallet in it, and no Node built-in', async () => {
    const result = await bundle("import { DEV_WALLET } from '@capi/sandbox/dev-wallet';\nconsole.log(DEV_WALLET.address);");
    expect(result.warnings).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    // The entry and the chunk it re-exports (tsup shares the wallet with the main entry and the CLI).
    const files = inputs.filter((input) => input !== '<stdin>');
    expect(files).toContain('dist/dev-wallet.js');
    expect(files.every((file) => /^dist\/(dev-wallet|chunk-\w+)\.js$/.test(file)), files.join(', ')).toBe(true);
    const code = result.outputFiles[0]!.text;
    expect(code).toContain(DEV_WALLET.address);
    expect(code).toContain(DEV_WALLET.privateKey);
    expect(code.length).toBeLessThan(1_000);
  });

  it('is the wallet the main entry exports and the sandbox seeds', async () => {
    const entry = (await import(join(packageDir, 'dist/dev-wallet.js'))) as { DEV_WALLET: unknown };
    expect(entry.DEV_WALLET).toEqual(DEV_WALLET);
  });

  it('the main entry does not bundle for a browser (why the wallet has its own entry)', async () => {
    const failure = await bundle("import { DEV_WALLET } from '@capi/sandbox';\nconsole.log(DEV_WALLET.address);").catch((error: { errors?: { text: string }[] }) => error);
    expect((failure as { errors?: { text: string }[] }).errors?.map((error) => error.text).join('\n')).toMatch(/Could not resolve "(node:)?(crypto|http|https|fs|fs\/promises|events|net|os|path|url)"/);
  });
});
