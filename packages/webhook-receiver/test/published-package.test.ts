import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { publint } from 'publint';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs));
}

beforeAll(async () => {
  // Checked as consumers get it: the built dist. Rebuilt when the source is newer.
  const dist = join(packageDir, 'dist', 'index.js');
  if (!existsSync(dist) || newestMtime(join(packageDir, 'src')) > statSync(dist).mtimeMs) {
    await run(process.execPath, [join(packageDir, 'node_modules', 'tsup', 'dist', 'cli-default.js')], { cwd: packageDir });
  }
}, 120_000);

describe('is consumed alike from ESM and CommonJS on Node', () => {
  it('exports the same API through import and require', async () => {
    const script = `
      const cjs = require('@capi/webhook-receiver');
      import('@capi/webhook-receiver').then((esm) => {
        const names = (module) => Object.keys(module).filter((name) => name !== 'default').sort();
        console.log(JSON.stringify({ cjs: names(cjs), esm: names(esm) }));
      });`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: packageDir });
    const { cjs, esm } = JSON.parse(stdout) as { cjs: string[]; esm: string[] };
    expect(esm).toEqual(cjs);
    expect(esm).toEqual(expect.arrayContaining(['createWebhookReceiver', 'toNodeHandler', 'createMemoryDedupeStore', 'createRedisDedupeStore', 'createTransactionalDedupeStore', 'RECEIVER_OUTCOMES', 'WebhookReceiverError', 'DedupeStoreError']));
  });
});

describe('passes publint and are-the-types-wrong', () => {
  it('has no publint errors or warnings', async () => {
    const { messages } = await publint({ pkgDir: packageDir, pack: false, level: 'warning' });
    expect(messages).toEqual([]);
  });

  it('has no attw problems under any module resolution', async () => {
    const attw = join(packageDir, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    const { stdout } = await run(process.execPath, [attw, '--pack', '.', '--format', 'json', '--no-color'], { cwd: packageDir, maxBuffer: 16 * 1024 * 1024 })
      .catch((error: { stdout: string }) => error);
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { analysis?: { problems: unknown[] } };
    expect(report.analysis, `attw printed no analysis:\n${stdout.slice(0, 2000)}`).toBeDefined();
    expect(report.analysis!.problems).toEqual([]);
  }, 60_000);
});

describe('types the built .d.ts for consumers without @types/node, and with it (skipLibCheck: false)', () => {
  // Each folder of test/fixtures/consumers is a project of its own (its tsconfig.json says which).
  const typeCheck = async (consumer: string) => {
    const tsc = join(packageDir, 'node_modules', 'typescript', 'bin', 'tsc');
    return run(process.execPath, [tsc, '-p', join(packageDir, 'test', 'fixtures', 'consumers', consumer)], { cwd: packageDir })
      .then(({ stdout }) => stdout, (error: { stdout: string }) => error.stdout);
  };

  it('imports no node: module: a project with types: [] and skipLibCheck false type-checks every entry (no TS2307 for node:http)', async () => {
    const declarations = ['index.d.ts', 'index.d.cts', 'durable-object.d.ts', 'durable-object.d.cts'].map((file) => readFileSync(join(packageDir, 'dist', file), 'utf8'));
    for (const text of declarations) expect(text).not.toMatch(/^(import|export)\b[^;]*from\s*['"]node:|import\(\s*['"]node:/m);
    expect(await typeCheck('bare')).toBe('');
  }, 60_000);

  it('fits the Env of `wrangler types` (DurableObjectNamespace<WebhookStoreObject>, GlobalProps) with @cloudflare/workers-types', async () => {
    expect(await typeCheck('worker')).toBe('');
  }, 60_000);

  it('still takes node:http\'s IncomingMessage and ServerResponse in the Node adapter', async () => {
    expect(await typeCheck('node')).toBe('');
  }, 60_000);
});

describe('runs on edge runtimes: the Web build needs no Node built-in', () => {
  it('bundles for a browser/worker platform without importing node: modules', async () => {
    const result = await build({
      entryPoints: [join(packageDir, 'dist', 'index.js')],
      bundle: true, write: false, format: 'esm', platform: 'browser', conditions: ['worker', 'browser'],
      logLevel: 'silent', metafile: true,
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    expect(result.outputFiles[0]!.text).not.toMatch(/from\s*["']node:/);
  });
});
