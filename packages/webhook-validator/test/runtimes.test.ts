// The package as consumers run it: the built files in plain Node ESM and CommonJS, in
// Chromium under a Content-Security-Policy without 'unsafe-eval', and in a sandbox without
// Node's globals and with code generation from strings disabled (as on edge runtimes).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageDir } from '../scripts/generate.mjs';

const run = promisify(execFile);
const validBody = '{"eventType":"card.transaction.created","data":{"amount":100}}';
const invalidBody = '{"eventType":"kyc.status.changed","data":{"kycStatus":"verified"}}';
// Prints what a consumer would see: the verdicts on one valid and one invalid body.
const probe = (validate: string) => `const results = [${JSON.stringify(validBody)}, ${JSON.stringify(invalidBody)}].map((body) => ${validate}(body));
  const summary = results.map((result) => result.ok ? 'ok' : result.errors.length + ' errors');`;

describe('imports in plain Node ESM', () => {
  it('the generated module on its own', async () => {
    const url = pathToFileURL(join(packageDir, 'src/generated/validators.js')).href;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `
      import { tolerantValidators, strictValidators } from ${JSON.stringify(url)};
      const validate = tolerantValidators.get('user.created');
      console.log(JSON.stringify([validate({ eventType: 'user.created', data: {} }), validate.errors.length > 10, strictValidators.size]));
    `]);
    expect(JSON.parse(stdout)).toEqual([false, true, 5]);
  });

  it('the package by its name, ESM and CommonJS', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', `
      import { parseWebhookEvent } from '@capi/webhook-validator';
      import { schemas } from '@capi/webhook-validator/schemas';
      ${probe('parseWebhookEvent')}
      console.log(JSON.stringify([...summary, typeof schemas.User.$id]));
    `], { cwd: packageDir });
    const cjs = await run(process.execPath, ['-e', `
      const { parseWebhookEvent } = require('@capi/webhook-validator');
      const { schemas } = require('@capi/webhook-validator/schemas');
      ${probe('parseWebhookEvent')}
      console.log(JSON.stringify([...summary, typeof schemas.User.$id]));
    `], { cwd: packageDir });
    expect(JSON.parse(esm.stdout)).toEqual(['ok', '20 errors', 'string']);
    expect(JSON.parse(cjs.stdout)).toEqual(JSON.parse(esm.stdout));
  });
});

describe('runs where code generation from strings is forbidden (edge runtimes, strict CSP)', () => {
  it('in a V8 context without Node globals and with eval/new Function disabled', async () => {
    const bundle = await build({
      entryPoints: [join(packageDir, 'dist/index.js')], bundle: true, write: false, format: 'iife',
      globalName: 'webhookValidator', platform: 'neutral', logLevel: 'silent',
    });
    const context = vm.createContext({ TextDecoder, TextEncoder }, { codeGeneration: { strings: false, wasm: false } });
    vm.runInContext(bundle.outputFiles[0]!.text, context);
    const summary: unknown = vm.runInContext(`${probe('webhookValidator.parseWebhookEvent')}
      [...summary, typeof process, typeof require, (() => { try { return eval('1'); } catch { return 'eval blocked'; } })()];`, context);
    expect(summary).toEqual(['ok', '20 errors', 'undefined', 'undefined', 'eval blocked']);
  });
});

describe('runs in a browser under a Content-Security-Policy without unsafe-eval', () => {
  const csp = "default-src 'none'; script-src 'self'";
  const pages: Record<string, [string, string]> = {
    '/': ['text/html', '<!doctype html><html><body>pending<script type="module" src="/probe.js"></script></body></html>'],
    '/probe.js': ['text/javascript', `import { parseWebhookEvent } from '/index.js';
      ${probe('parseWebhookEvent')}
      let evalBlocked = false;
      try { new Function('return 1'); } catch { evalBlocked = true; }
      document.body.textContent = 'RESULT ' + JSON.stringify([...summary, evalBlocked]);`],
    '/index.js': ['text/javascript', readFileSync(join(packageDir, 'dist/index.js'), 'utf8')],
  };
  const server = createServer((request, response) => {
    const page = pages[request.url ?? ''];
    response.writeHead(page ? 200 : 404, { 'content-type': page?.[0] ?? 'text/plain', 'content-security-policy': csp });
    response.end(page?.[1] ?? 'not found');
  });
  let origin = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('the test server has no address');
    origin = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('Chromium (headless) imports dist/index.js and validates', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'webhook-validator-chromium-'));
    try {
      const chromium = spawn(process.env.CHROMIUM_PATH ?? 'chromium', [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`,
        '--virtual-time-budget=10000', '--dump-dom', `${origin}/`,
      ], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
      let dom = '';
      chromium.stdout.on('data', (chunk: Buffer) => { dom += chunk.toString(); });
      const exitCode = await new Promise<number | null>((resolve, reject) => {
        chromium.on('error', reject);
        chromium.on('close', resolve);
      });
      // Its helpers (zygote, renderers) may outlive the browser and still write to the profile.
      try { process.kill(-chromium.pid!, 'SIGKILL'); } catch { /* gone already */ }
      expect(exitCode).toBe(0);
      const result = /RESULT (\[.*?\])</.exec(dom)?.[1];
      expect(result, dom).toBeDefined();
      expect(JSON.parse(result!)).toEqual(['ok', '20 errors', true]);
    } finally {
      // Chromium's helper processes may still be writing to the profile for a moment after exit.
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  });
});
