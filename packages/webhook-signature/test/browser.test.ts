// The web build in a real browser: headless Chromium loads dist/index.js (no bundler, no
// Node globals), verifies a webhook signed by the node build, and signs one the node build
// verifies. The page reports back over loopback HTTP.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as nodeBuild from '../src/node.js';
import { placeBuild } from './package-build.js';

const BODY = '{"eventType":"user.created","data":{"id":"u_1","firstName":"Zoë","city":"Zürich"}}';

const PROBE = `import * as api from '/index.js';
const report = (result) => fetch('/result', { method: 'POST', body: JSON.stringify(result) });
try {
  const input = await (await fetch('/input')).json();
  const options = { rawBody: input.body, timestamp: input.timestamp, signature: input.signature, publicKey: input.publicKey, toleranceSeconds: 0 };
  const verified = await api.verifyWebhookSignature(options).then(() => true, (error) => error.code ?? String(error));
  const tampered = await api.isValidWebhookSignature({ ...options, rawBody: input.body + ' ' });
  const malformed = await api.verifyWebhookSignature({ ...options, signature: 'abc' }).catch((error) => error.code);
  const pair = await api.generateWebhookKeyPair();
  const signed = await api.signWebhook({ rawBody: input.body, privateKey: pair.privateKey });
  await report({ verified, tampered, malformed, signed: { timestamp: signed.timestamp, signature: signed.signature, publicKey: pair.publicKey }, buffer: typeof Buffer });
} catch (error) {
  await report({ failure: String(error && error.stack || error) });
}`;

let scratch: string;
let webBuild: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'capi-webhook-signature-browser-'));
  await placeBuild(join(scratch, 'dist'), { types: false });
  webBuild = join(scratch, 'dist', 'index.js');
}, 120_000);

afterAll(() => {
  // Chromium's helper processes may still be writing to the profile for a moment after exit.
  rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(text));
  });

describe('the web build runs in a browser (headless Chromium)', () => {
  it('verifies what the node build signs, and signs what the node build verifies', async () => {
    const pair = await nodeBuild.generateWebhookKeyPair();
    const signedByNode = await nodeBuild.signWebhook({ rawBody: BODY, privateKey: pair.privateKey });
    const input = JSON.stringify({ body: BODY, timestamp: signedByNode.timestamp, signature: signedByNode.signature, publicKey: pair.publicKey });
    const webBuildText = readFileSync(webBuild, 'utf8');

    let deliver!: (result: string) => void;
    const reported = new Promise<string>((resolve) => (deliver = resolve));
    const server = createServer(async (request, response) => {
      const pages: Record<string, [string, string]> = {
        '/': ['text/html', '<!doctype html><meta charset="utf-8"><script type="module" src="/probe.js"></script>'],
        '/probe.js': ['text/javascript', PROBE],
        '/index.js': ['text/javascript', webBuildText],
        '/input': ['application/json', input],
      };
      if (request.method === 'POST' && request.url === '/result') deliver(await readBody(request));
      const page = pages[request.url ?? ''];
      response.writeHead(page ? 200 : 204, { 'content-type': `${page?.[0] ?? 'text/plain'}; charset=utf-8` }).end(page?.[1]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const profile = mkdtempSync(join(scratch, 'profile-'));
    const chromium = spawn(
      process.env.CHROMIUM_PATH ?? 'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
        `--user-data-dir=${profile}`, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`],
      // Its own process group, so that the browser and its helpers are stopped together (below).
      { stdio: 'ignore', detached: true },
    );
    const closed = new Promise<void>((resolve) => chromium.on('close', () => resolve()));
    const exited = new Promise<string>((resolve) => chromium.on('exit', (code) => resolve(JSON.stringify({ failure: `chromium exited (${code})` }))));
    try {
      const result = JSON.parse(await Promise.race([reported, exited]));
      expect(result).toMatchObject({ verified: true, tampered: false, malformed: 'malformed_signature', buffer: 'undefined' });
      const { timestamp, signature, publicKey } = result.signed;
      await expect(nodeBuild.verifyWebhookSignature({ rawBody: BODY, timestamp, signature, publicKey })).resolves.toBeUndefined();
    } finally {
      // The whole group: the helpers (zygote, renderers) write to the profile too, and outlive a
      // kill of the browser alone long enough for its removal to fail with ENOTEMPTY under load.
      try { process.kill(-chromium.pid!, 'SIGKILL'); } catch { /* gone already */ }
      await closed; // before the profile folder is removed
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 120_000);
});
