// A fresh consumer project outside the workspace, as a partner would start one: npm installs
// the @capi packages from the local registry only (a scoped registry in the project's
// .npmrc) and every other dependency (viem, jose, openapi-fetch...) from the normal npm
// registry. It type-checks a consumer file under moduleResolution "bundler" and "node16"
// (ESM and CommonJS flavours), then runs an ESM and a CommonJS program that sign in against
// the sandbox and verify a signed webhook.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What the consumer programs do, once for `import` and once for `require`. */
function scenario(kind) {
  const load =
    kind === 'esm'
      ? `import assert from 'node:assert/strict';
import { createPartnerClient, signerFromViemAccount } from '@capi/client';
import { DEV_WALLET, startSandbox } from '@capi/sandbox';
import { DEV_WALLET as WALLET_ENTRY } from '@capi/sandbox/dev-wallet';
import { WEBHOOK_EVENT_TYPES } from '@capi/event-types';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider, generateWebhookKeyPair, signWebhook, verifyWebhookSignature } from '@capi/webhook-signature';
import { createServer } from 'node:http';
import { privateKeyToAccount } from 'viem/accounts';
`
      : `const assert = require('node:assert/strict');
const { createPartnerClient, signerFromViemAccount } = require('@capi/client');
const { DEV_WALLET, startSandbox } = require('@capi/sandbox');
const { DEV_WALLET: WALLET_ENTRY } = require('@capi/sandbox/dev-wallet');
const { WEBHOOK_EVENT_TYPES } = require('@capi/event-types');
const { parseWebhookEvent } = require('@capi/webhook-validator');
const { createWebhookReceiver, toNodeHandler } = require('@capi/webhook-receiver');
const { createPublicKeyProvider, generateWebhookKeyPair, signWebhook, verifyWebhookSignature } = require('@capi/webhook-signature');
const { createServer } = require('node:http');
const { privateKeyToAccount } = require('viem/accounts');
`;
  return `${load}
// The daily limit is the newer generation's: the dev wallet's user is seeded with its account.
const SANDBOX_OPTIONS = {
  generation: 'newer',
  users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
};

async function main() {
  assert.deepEqual(WALLET_ENTRY, DEV_WALLET, '@capi/sandbox/dev-wallet serves the same wallet as @capi/sandbox');
  const sandbox = await startSandbox(SANDBOX_OPTIONS);
  try {
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl });
    const account = privateKeyToAccount(DEV_WALLET.privateKey);
    const session = await client.signInWithEthereum({ ...signerFromViemAccount(account), domain: 'localhost', uri: 'http://localhost/', chainId: 100 });
    assert.equal(session.token.split('.').length, 3, 'sign-in returns a JWT');
    const limit = await client.getDailyLimit();
    assert.equal(typeof limit.amount, 'number', 'the signed-in client reads the daily limit');
    const served = await client.getWebhookPublicKey();
    assert.equal(served.publicKey, sandbox.publicKey, 'the webhook key service serves the sandbox key');

    const keys = await generateWebhookKeyPair();
    const rawBody = JSON.stringify({ eventType: 'kyc.status.changed', data: { id: 'user-1' } });
    const signed = await signWebhook({ rawBody, privateKey: keys.privateKey });
    await verifyWebhookSignature({ rawBody, timestamp: signed.timestamp, signature: signed.signature, publicKey: keys.publicKey });
    await assert.rejects(
      verifyWebhookSignature({ rawBody: rawBody + ' ', timestamp: signed.timestamp, signature: signed.signature, publicKey: keys.publicKey }),
      (error) => error.code === 'invalid_signature',
      'a changed body is rejected',
    );
    assert.equal(parseWebhookEvent(rawBody).ok, false, 'the validator refuses an event whose data is not a User');

    // The sandbox delivers a real event to a receiver served by node:http, whose key comes
    // from the sandbox's key endpoint through the provider.
    const received = [];
    const receiver = createWebhookReceiver({ publicKey: createPublicKeyProvider({ url: sandbox.webhooksUrl + '/api/v1/public-key' }) })
      .on('kyc.status.changed', (event, delivery) => { received.push({ event, delivery }); });
    const server = createServer(toNodeHandler(receiver));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      sandbox.addWebhookEndpoint('http://127.0.0.1:' + server.address().port + '/webhooks');
      sandbox.sendEvent('kyc.status.changed');
      await sandbox.whenDeliveriesSettled();
      assert.equal(sandbox.deliveries().at(-1).state, 'succeeded', 'the receiver answered the sandbox 2xx');
      assert.equal(received.length, 1, 'the handler ran once');
      assert.ok(WEBHOOK_EVENT_TYPES.includes(received[0].event.eventType), 'a known event type');
      assert.match(received[0].delivery.bodySha256, /^[0-9a-f]{64}$/, 'the delivery carries the body hash');
      assert.equal(parseWebhookEvent(JSON.stringify(received[0].event)).ok, true, 'the validator accepts the delivered event');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    console.log('${kind} consumer: signed in (limit ' + limit.amount + ' cents), verified a webhook and received one from the sandbox');
  } finally {
    await sandbox.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;
}

/** The type-checked consumer: every published package imported, the main calls typed. */
function typedConsumer(packageNames) {
  const namespaces = packageNames.map((name, index) => `import * as published${index} from '${name}';`).join('\n');
  return `${namespaces}
import { createPartnerClient, signerFromViemAccount, type PartnerClient } from '@capi/client';
import { DEV_WALLET, startSandbox, type Sandbox } from '@capi/sandbox';
import { DEV_WALLET as WALLET_ENTRY } from '@capi/sandbox/dev-wallet';
import { signWebhook, verifyWebhookSignature, type SignedWebhook } from '@capi/webhook-signature';
import { createWebhookReceiver, type WebhookReceiver } from '@capi/webhook-receiver';
import { privateKeyToAccount } from 'viem/accounts';

export const everyPackage = [${packageNames.map((_, index) => `published${index}`).join(', ')}];
// The browser-safe entry types the wallet as the main entry does (a viem account takes its key).
export const walletAccount = privateKeyToAccount(WALLET_ENTRY.privateKey satisfies typeof DEV_WALLET.privateKey);

export async function signInAndVerify(privateKey: string): Promise<number> {
  // The daily limit is the newer generation's: the dev wallet's user is seeded with its account.
  const sandbox: Sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
  });
  const client: PartnerClient = createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl });
  await client.signInWithEthereum({ ...signerFromViemAccount(privateKeyToAccount(DEV_WALLET.privateKey)), domain: 'localhost', uri: 'http://localhost/', chainId: 100 });
  const limit = await client.getDailyLimit();
  const signed: SignedWebhook = await signWebhook({ rawBody: '{}', privateKey });
  await verifyWebhookSignature({ rawBody: '{}', timestamp: signed.timestamp, signature: signed.signature, publicKey: sandbox.publicKey });
  await sandbox.close();
  return limit.amount;
}

export function onKycStatus(publicKey: string, record: (kycStatus: string, bodySha256: string) => void): WebhookReceiver {
  return createWebhookReceiver({ publicKey }).on('kyc.status.changed', (event, delivery) => record(event.data.kycStatus, delivery.bodySha256));
}
`;
}

// ESM consumers under "bundler" and "node16" resolution (the import conditions and .d.ts);
// a CommonJS consumer (.cts, the require conditions and .d.cts) under "node20", which models
// Node 20's require() of ESM. The packages' .d.cts import no viem types, but the consumer
// itself imports viem/accounts, whose ESM-only types a .cts under "node16" cannot import (TS1479).
const tsconfigs = {
  'tsconfig.bundler.json': { module: 'esnext', moduleResolution: 'bundler', files: ['consumer.ts'] },
  'tsconfig.node16.json': { module: 'node16', moduleResolution: 'node16', files: ['consumer.ts'] },
  'tsconfig.node20-cjs.json': { module: 'node20', moduleResolution: 'node16', files: ['consumer-cjs.cts'] },
};

/**
 * Writes the consumer project.
 * @param {string} dir a folder outside the workspace
 * @param {{ registryUrl: string, packages: { name: string, version: string }[], thirdParty: Record<string, string> }} options
 */
export function writeConsumerProject(dir, { registryUrl, packages, thirdParty }) {
  mkdirSync(dir, { recursive: true });
  const dependencies = Object.fromEntries([...packages.map((pkg) => [pkg.name, pkg.version]), ...Object.entries(thirdParty)].sort());
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'capi-consumer', private: true, type: 'module', dependencies }, null, 2)}\n`);
  // Only @capi comes from the local registry; the rest from the normal npm registry.
  writeFileSync(path.join(dir, '.npmrc'), `@capi:registry=${registryUrl}\nfund=false\naudit=false\npackage-lock=false\n`);
  writeFileSync(path.join(dir, 'consumer.mjs'), scenario('esm'));
  writeFileSync(path.join(dir, 'consumer.cjs'), scenario('cjs'));
  const typed = typedConsumer(packages.map((pkg) => pkg.name));
  writeFileSync(path.join(dir, 'consumer.ts'), typed);
  writeFileSync(path.join(dir, 'consumer-cjs.cts'), typed.replace('export const everyPackage', 'export const everyPackageFromRequire'));
  for (const [file, { module, moduleResolution, files }] of Object.entries(tsconfigs)) {
    const compilerOptions = { target: 'es2022', module, moduleResolution, strict: true, noEmit: true, skipLibCheck: true, types: ['node'], lib: ['es2022', 'dom'] };
    writeFileSync(path.join(dir, file), `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`);
  }
}

/**
 * Runs one step of the consumer; a failure carries the step's output.
 * @param {string} step
 * @param {string} command
 * @param {string[]} args
 * @param {string} cwd
 */
export async function consumerStep(step, command, args, cwd) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
    return `${stdout}${stderr}`.trim();
  } catch (error) {
    const failure = /** @type {any} */ (error);
    throw new Error(`${step} failed (${command} ${args.join(' ')} in ${cwd}):\n${`${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim() || failure.message}`);
  }
}

export { tsconfigs };
