import { DEV_WALLET, startSandbox, type Sandbox } from '@capi/sandbox';
import { generateWebhookKeyPair } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSuiteIn } from '../src/run-runtime.mjs';
import { expectConformance, expectEarlyAcknowledgement } from './expect-conformance.js';

let sandbox: Sandbox;
let input: unknown;

beforeAll(async () => {
  // The daily limit is the newer generation's; the dev wallet's user is seeded with its account.
  sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
  });
  input = {
    sandbox: { baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl, walletPrivateKey: DEV_WALLET.privateKey },
    receiverKeys: await generateWebhookKeyPair(),
  };
});

afterAll(() => sandbox?.close());

// The build each runtime must load of @capi/webhook-signature: node:crypto on Node, the
// WebCrypto build on Bun and Deno (their `bun` / `deno` export conditions, ahead of `node`).
const runtimes = [
  { name: 'node20', version: /^v20\./, signatureBuild: 'dist/node.js' },
  { name: 'node22', version: /^v22\./, signatureBuild: 'dist/node.js' },
  { name: 'node24', version: /^v24\./, signatureBuild: 'dist/node.js' },
  { name: 'bun', version: /^1\./, signatureBuild: 'dist/index.js' },
  { name: 'deno', version: /^2\./, signatureBuild: 'dist/index.js' },
];

describe.each(runtimes)('the packages conform on $name', ({ name, version, signatureBuild }) => {
  it('verifies and refuses, validates, receives over HTTP (acknowledgeEarly without waitUntil too) and calls the sandbox, with no warning', async () => {
    const { code, stdout, stderr } = await runSuiteIn(name, input);
    // Any output on stderr fails: a deprecation warning (DEP0204 on Bun) or any other.
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const results = JSON.parse(stdout);
    expect(results.version).toMatch(version);
    expect(results.resolved['@capi/webhook-signature']).toMatch(new RegExp(`/packages/webhook-signature/${signatureBuild.replace('.', '\\.')}$`));
    for (const name of ['webhook-validator', 'event-types', 'webhook-receiver', 'client']) {
      expect(results.resolved[`@capi/${name}`]).toMatch(new RegExp(`/packages/${name}/dist/index\\.js$`));
    }
    expectConformance(results, sandbox.publicKey);
    expectEarlyAcknowledgement(results.early);
    // The node:crypto build signs and verifies there too, silently (checked by the stderr above).
    expect(results.nodeBuild).toBe(true);
    if (name === 'deno') {
      // A host --allow-net leaves out: refused by Deno before sending, so not retried, and a
      // refresh refused so keeps its refresh token (offered again at the next request).
      expect(results.denoPermission).toEqual({
        request: { name: 'ConnectionError', code: 'network_permission_denied', causeName: 'NotCapable', attempts: 1, namesFlag: true },
        refresh: {
          errors: ['TokenRenewalError token_refresh_unreachable NotCapable', 'TokenRenewalError token_refresh_unreachable NotCapable'],
          offered: ['kept-refresh-token', 'kept-refresh-token'],
        },
      });
    } else {
      expect(results.denoPermission).toBeUndefined();
    }
  }, 120_000);
});
