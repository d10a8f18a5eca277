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
import { generateWebhookKeyPair, signWebhook, verifyWebhookSignature } from '@capi/webhook-signature';
import { privateKeyToAccount } from 'viem/accounts';
`
      : `const assert = require('node:assert/strict');
const { createPartnerClient, signerFromViemAccount } = require('@capi/client');
const { DEV_WALLET, startSandbox } = require('@capi/sandbox');
const { generateWebhookKeyPair, signWebhook, verifyWebhookSignature } = require('@capi/webhook-signature');
const { privateKeyToAccount } = require('viem/accounts');
`;
  return `${load}
async function main() {
  const sandbox = await startSandbox();
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
    console.log('${kind} consumer: signed in (limit ' + limit.amount + ' cents) and verified a webhook');
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
import { signWebhook, verifyWebhookSignature, type SignedWebhook } from '@capi/webhook-signature';
import { privateKeyToAccount } from 'viem/accounts';

export const everyPackage = [${packageNames.map((_, index) => `published${index}`).join(', ')}];

export async function signInAndVerify(privateKey: string): Promise<number> {
  const sandbox: Sandbox = await startSandbox();
  const client: PartnerClient = createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl });
  await client.signInWithEthereum({ ...signerFromViemAccount(privateKeyToAccount(DEV_WALLET.privateKey)), domain: 'localhost', uri: 'http://localhost/', chainId: 100 });
  const limit = await client.getDailyLimit();
  const signed: SignedWebhook = await signWebhook({ rawBody: '{}', privateKey });
  await verifyWebhookSignature({ rawBody: '{}', timestamp: signed.timestamp, signature: signed.signature, publicKey: sandbox.publicKey });
  await sandbox.close();
  return limit.amount;
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
