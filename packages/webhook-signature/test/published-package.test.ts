// The package as consumers get it: its build in a scratch node_modules, resolved by esbuild,
// Node and tsc through its export conditions.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createContext, runInContext } from 'node:vm';
import { join, resolve } from 'node:path';
import { build as esbuild } from 'esbuild';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeBuild } from './package-build.js';

let consumer: string;
let packageDir: string;

beforeAll(async () => {
  consumer = mkdtempSync(join(tmpdir(), 'capi-webhook-signature-consumer-'));
  packageDir = join(consumer, 'node_modules', '@capi', 'webhook-signature');
  mkdirSync(packageDir, { recursive: true });
  copyFileSync('package.json', join(packageDir, 'package.json'));
  await placeBuild(join(packageDir, 'dist'));
}, 120_000);

afterAll(() => {
  rmSync(consumer, { recursive: true, force: true });
});

async function bundle(platform: 'browser' | 'node' | 'neutral', conditions: string[] = [], format: 'esm' | 'iife' = 'esm') {
  const result = await esbuild({
    stdin: { contents: "export * from '@capi/webhook-signature';", resolveDir: consumer, loader: 'js' },
    bundle: true,
    write: false,
    format,
    globalName: 'capi',
    platform,
    conditions,
    mainFields: platform === 'neutral' ? ['module', 'main'] : undefined,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

describe('the web build runs without Node: no node: imports, no Buffer', () => {
  it('bundles for the browser from the default export condition', async () => {
    const { code, inputs } = await bundle('browser');
    expect(inputs.some((input) => input.endsWith('dist/index.js'))).toBe(true);
    expect(inputs.some((input) => input.endsWith('dist/node.js'))).toBe(false);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    expect(code).not.toMatch(/(?<![\w/])Buffer\s*[.(]/);
    expect(code).not.toMatch(/["']node:/);
    expect(code).not.toMatch(/\brequire\(/);
  });

  it('signs and verifies in a realm with only web globals (no Buffer, no require, no process)', async () => {
    const { code } = await bundle('browser', [], 'iife');
    const realm = createContext({ crypto, CryptoKey, TextEncoder, URL, AbortSignal, fetch, atob, btoa });
    runInContext(code, realm);
    const result = await runInContext(
      `(async () => {
        const pair = await capi.generateWebhookKeyPair();
        const signed = await capi.signWebhook({ rawBody: 'é', privateKey: pair.privateKey });
        await capi.verifyWebhookSignature({ rawBody: 'é', ...signed, publicKey: pair.publicKey });
        return [typeof Buffer, typeof require, typeof process, await capi.isValidWebhookSignature({ rawBody: 'e', ...signed, publicKey: pair.publicKey })];
      })()`,
      realm,
    );
    expect(result).toEqual(['undefined', 'undefined', 'undefined', false]);
  });

  it('is what edge workers resolve too (workerd/worker conditions)', async () => {
    const { inputs } = await bundle('neutral', ['workerd', 'worker', 'import']);
    expect(inputs.some((input) => input.endsWith('dist/index.js'))).toBe(true);
  });
});

describe('the node export condition picks the node:crypto build', () => {
  it('for bundlers targeting Node', async () => {
    const { inputs } = await bundle('node');
    expect(inputs.some((input) => input.endsWith('dist/node.js'))).toBe(true);
  });

  it('for Node itself, with import and with require, both working', () => {
    const script = (load: string) => `
      ${load}
      const { generateWebhookKeyPair, signWebhook, verifyWebhookSignature, WebhookSignatureError } = api;
      const pair = await generateWebhookKeyPair();
      const signed = await signWebhook({ rawBody: '{}', privateKey: pair.privateKey });
      await verifyWebhookSignature({ rawBody: '{}', timestamp: signed.timestamp, signature: signed.signature, publicKey: pair.publicKey });
      const failed = await verifyWebhookSignature({ rawBody: '{ }', ...signed, publicKey: pair.publicKey }).catch((error) => error);
      console.log(JSON.stringify({ resolved, ok: true, code: failed.code, typed: failed instanceof WebhookSignatureError }));`;
    const esm = script(`import * as api from '@capi/webhook-signature'; const resolved = import.meta.resolve('@capi/webhook-signature');`);
    const cjs = `(async () => { ${script(`const api = require('@capi/webhook-signature'); const resolved = require.resolve('@capi/webhook-signature');`)} })()`;
    const run = (args: string[]) => JSON.parse(execFileSync(process.execPath, args, { cwd: consumer, encoding: 'utf8' })) as Record<string, unknown>;
    const fromImport = run(['--input-type=module', '-e', esm]);
    const fromRequire = run(['--input-type=commonjs', '-e', cjs]);
    expect(fromImport).toMatchObject({ ok: true, code: 'invalid_signature', typed: true });
    expect(fromImport.resolved).toMatch(/dist\/node\.js$/);
    expect(fromRequire).toMatchObject({ ok: true, code: 'invalid_signature', typed: true });
    expect(fromRequire.resolved).toMatch(/dist\/node\.cjs$/);
  });
});

describe('the types compile for Node projects without the DOM lib, from ESM and CommonJS', () => {
  it('type-checks a consumer that uses every export with lib ES2022 and @types/node only', () => {
    const usage = `
      const pair = (await webcrypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
      const header: string | string[] | undefined = undefined;
      await api.verifyWebhookSignature({ rawBody: Buffer.from('{}'), timestamp: header, signature: null, publicKey: pair.publicKey });
      const provider: api.PublicKeyProvider = api.createPublicKeyProvider({ url: 'https://webhooks.example.com/api/v1/public-key' });
      const valid: boolean = await api.isValidWebhookSignature({ rawBody: new ArrayBuffer(0), timestamp: '1', signature: 'x', publicKey: provider });
      const key: api.WebCryptoKey = await api.importPublicKey(new Uint8Array(32));
      const signed: api.SignedWebhook = await api.signWebhook({ rawBody: '{}', privateKey: await api.importPrivateKey('00'.repeat(32)) });
      const pem: api.WebhookKeyPair = await api.generateWebhookKeyPair();
      const bytes: Uint8Array = await api.signEd25519({ message: 'm', privateKey: pem.privateKey });
      const ok: boolean = await api.verifyEd25519({ message: 'm', signature: bytes, publicKey: key });
      const code: api.WebhookSignatureErrorCode | api.PublicKeyFetchErrorCode = new api.WebhookSignatureError('invalid_signature', 'x').code;
      console.log(valid, signed.headers['X-Webhook-Signature'], ok, code, new api.PublicKeyFetchError('timeout', 'x', { url: 'u' }).status);`;
    writeFileSync(join(consumer, 'esm.mts'), `import * as api from '@capi/webhook-signature';\nimport { webcrypto } from 'node:crypto';\n${usage}\nexport {};\n`);
    writeFileSync(join(consumer, 'cjs.cts'), `import api = require('@capi/webhook-signature');\nimport { webcrypto } from 'node:crypto';\nasync function main() {${usage}}\nvoid main();\n`);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], typeRoots: [resolve('node_modules/@types')] },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    const tsc = resolve('node_modules/typescript/bin/tsc');
    const result = execFileSync(process.execPath, [tsc, '-p', consumer, '--pretty', 'false'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(result).toBe('');
  }, 60_000);
});

describe('package.json passes publint', () => {
  it('reports no errors or warnings', async () => {
    const { messages } = await publint({ pkgDir: packageDir, pack: false, level: 'warning' });
    expect(messages).toEqual([]);
  });
});
