import { bundleWorker, startWorkerd } from '@capi/workerd-kit';
import { DEV_WALLET, startSandbox, type Sandbox } from '@capi/sandbox';
import { generateWebhookKeyPair } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyChecks, receiveChecks } from '../conformance/suite.mjs';
import { expectConformance } from './expect-conformance.js';

let sandbox: Sandbox;
let worker: Awaited<ReturnType<typeof startWorkerd>>;
let inputs: string[];
let receiverKeys: { publicKey: string; privateKey: string };

beforeAll(async () => {
  // The daily limit is the newer generation's; the dev wallet's user is seeded with its account.
  sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
  });
  receiverKeys = await generateWebhookKeyPair();
  const input = { sandbox: { baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl, walletPrivateKey: DEV_WALLET.privateKey }, receiverKeys };
  const bundle = await bundleWorker('conformance/worker.mjs');
  inputs = bundle.inputs;
  worker = await startWorkerd({ code: bundle.code, bindings: { CONFORMANCE: JSON.stringify(input) } });
});

afterAll(async () => {
  await worker?.close();
  await sandbox?.close();
});

describe('the packages conform on workerd (bundled as wrangler bundles, no nodejs_compat)', () => {
  it('bundles the web builds: the WebCrypto signature build, never a node: module', () => {
    const files = inputs.filter((file) => file.includes('packages/'));
    expect(files).toContain('../../packages/webhook-signature/dist/index.js');
    expect(files).not.toContain('../../packages/webhook-signature/dist/node.js');
    for (const name of ['webhook-validator', 'event-types', 'webhook-receiver', 'client']) {
      expect(files).toContain(`../../packages/${name}/dist/index.js`);
    }
    expect(inputs.filter((file) => file.startsWith('node:'))).toEqual([]);
  });

  it('verifies and refuses, validates, receives over HTTP and calls the sandbox, with no warning', async () => {
    const checks = await (await fetch(`${worker.url}/checks`)).json();
    const receive = await receiveChecks({
      url: `${worker.url}/webhooks`,
      privateKey: receiverKeys.privateKey,
      dispatched: async () => (await fetch(`${worker.url}/dispatched`)).json(),
      reported: async () => (await fetch(`${worker.url}/reported`)).json(),
    });
    const receiveTransactional = await receiveChecks({
      url: `${worker.url}/webhooks-transactional`,
      privateKey: receiverKeys.privateKey,
      dispatched: async () => (await fetch(`${worker.url}/transactional-dispatched`)).json(),
      reported: async () => (await fetch(`${worker.url}/transactional-reported`)).json(),
    });
    expect(checks.version).toBe('Cloudflare-Workers');
    expectConformance({ ...checks, receive, receiveTransactional }, sandbox.publicKey);
    expect(worker.stderr()).toBe('');
  }, 60_000);

  it('acknowledgeEarly without waitUntil: answers after the handler (workerd would cancel it after a 202) and reports wait_until_missing once', async () => {
    const early = await earlyChecks({
      url: `${worker.url}/webhooks-early`,
      privateKey: receiverKeys.privateKey,
      dispatched: async () => (await fetch(`${worker.url}/early-dispatched`)).json(),
      reported: async () => (await fetch(`${worker.url}/early-reported`)).json(),
    });
    expect(early).toEqual({ replies: ['200 processed', '200 processed'], dispatched: ['pending', 'approved'], reported: ['wait_until_missing processed'] });
    expect(worker.stderr()).toBe('');
  }, 60_000);
});
