// The webhook-signature README's example for Cloudflare Workers, Bun and Deno, run as written on
// each runtime: the Worker block on workerd (its key a text binding in env, as wrangler gives
// it), and the Bun and Deno blocks serving that block's handleWebhook with the key from their
// environment. A signed delivery is 204, a forgery 401, and a key that never arrived 500
// invalid_public_key (seen), never a 401 taken for a forgery.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker, freePort, startWorkerd } from '@capi/workerd-kit';
import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeBinary } from '../src/runtimes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(join(here, '../../../packages/webhook-signature/README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Example: Cloudflare Workers, Bun, Deno'), readme.indexOf('## API'));
const [workerBlock, bunBlock, denoBlock] = [...section.matchAll(/```js\n([^]*?)```/g)].map((match) => match[1]!);

let dir: string;
let keys: { publicKey: string; privateKey: string };
const stops: Array<() => unknown> = [];

beforeAll(async () => {
  keys = await generateWebhookKeyPair();
  // Inside this package, so that the blocks resolve @capi/webhook-signature from its node_modules.
  dir = mkdtempSync(join(here, '..', '.readme-'));
  writeFileSync(join(dir, 'webhook.mjs'), workerBlock!);
});

afterAll(async () => {
  for (const stop of stops) await stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** How a signed delivery, a forgery and (to `missingKeyUrl`) a delivery without the key are answered. */
async function answers(url: string, missingKeyUrl: string) {
  const rawBody = JSON.stringify({ eventType: 'kyc.status.changed', data: { id: 'usr_1' } });
  const post = async (target: string, signature?: string) => {
    const { headers } = await signWebhook({ rawBody, privateKey: keys.privateKey });
    const response = await fetch(target, { method: 'POST', headers: { ...headers, ...(signature ? { 'X-Webhook-Signature': signature } : {}) }, body: rawBody });
    const text = await response.text();
    return `${response.status} ${text === '' ? '' : (JSON.parse(text) as { error: string }).error}`.trim();
  };
  return { signed: await post(url), forged: await post(url, btoa(String.fromCharCode(...new Uint8Array(64)))), missingKey: await post(missingKeyUrl) };
}

const expected = { signed: '204', forged: '401 invalid_signature', missingKey: '500 invalid_public_key' };

/** Runs `block` (with handleWebhook imported) on Bun or Deno, port 3000 replaced; resolves its URL once it answers. */
async function serveBlock(runtime: 'bun' | 'deno', block: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const file = join(dir, `${runtime}-${port}.mjs`);
  writeFileSync(file, `import { handleWebhook } from './webhook.mjs';\n${block.replace('port: 3000', `port: ${port}, hostname: '127.0.0.1'`)}`);
  const args = runtime === 'bun' ? [file] : ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=CAPI_WEBHOOK_PUBLIC_KEY', '--allow-read', file];
  const child: ChildProcess = spawn(await runtimeBinary(runtime), args, { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  stops.push(() => child.kill());
  const url = `http://127.0.0.1:${port}/webhooks`;
  for (let tries = 0; ; tries++) {
    try {
      await fetch(url, { method: 'GET' });
      return url;
    } catch {
      if (tries > 200 || child.exitCode !== null) throw new Error(`${runtime} did not serve the README block:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('the webhook-signature README example runs on each runtime it names', () => {
  it('Cloudflare Workers (workerd): the key from env, the second argument of fetch', async () => {
    const { code } = await bundleWorker(join(dir, 'webhook.mjs'));
    const worker = await startWorkerd({ code, bindings: { CAPI_WEBHOOK_PUBLIC_KEY: keys.publicKey } });
    stops.push(() => worker.close());
    const unset = await startWorkerd({ code });
    stops.push(() => unset.close());
    expect(await answers(`${worker.url}/webhooks`, `${unset.url}/webhooks`)).toEqual(expected);
  }, 60_000);

  it.each([['bun', () => bunBlock!], ['deno', () => denoBlock!]] as const)('%s: the key from the environment', async (runtime, block) => {
    const url = await serveBlock(runtime, block(), { CAPI_WEBHOOK_PUBLIC_KEY: keys.publicKey });
    const unset = await serveBlock(runtime, block(), {});
    expect(await answers(url, unset)).toEqual(expected);
  }, 60_000);
});
