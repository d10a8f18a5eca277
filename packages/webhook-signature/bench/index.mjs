// Benchmarks of @capi/webhook-signature, as ratios against baselines measured in this run:
// the package's verify on each path against the raw platform call on the same inputs
// (header strings and raw body, key imported once), against @noble/ed25519 as the pure-JS
// peer, and the min+gzip size of the web build.
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchRatio, bundleSize, interleavedBatches, printTable, record } from '@capi/bench-kit';
import * as noble from '@noble/ed25519';
import * as nodeBuild from '../dist/node.js';
import * as webBuild from '../dist/index.js';

const packageDir = resolve(fileURLToPath(import.meta.url), '..', '..');
const SIZE_GOAL_BYTES = 3 * 1024;

// A realistic event: the full User object of a kyc.status.changed webhook (~1 KB).
const rawBodyText = JSON.stringify({
  eventType: 'kyc.status.changed',
  data: {
    id: 'b7c3c1f2-5d1e-4f8e-9a57-3f0c2d9b8e11', email: 'zoe@example.com', phone: '+33612345678',
    firstName: 'Zoë', lastName: 'Martin', address1: '12 rue de la Paix', address2: null, city: 'Paris',
    postalCode: '75002', state: null, country: 'FR', nationalityCountry: 'FR',
    signInWallets: [{ address: '0x3f5CE5FBFe3E9af3971dD833D26bA9b5C936f0bE' }],
    smartWallets: [{ address: '0x9C2bB1b2d6E7f5A4c3B2a1908F7e6D5c4B3a2910', chainId: '100' }],
    kycStatus: 'approved', availableFeatures: { providerIban: true },
    cards: [{ id: 'c_1', cardToken: 'tok_8f2a', lastFourDigits: '4242', embossedName: 'ZOE MARTIN', activatedAt: '2026-01-02T10:00:00Z', virtual: true }],
    bankingDetails: { providerIban: 'FR7630006000011234567890189', providerBic: 'AGRIFRPP', providerIbanStatus: 'active', address: 'Paris' },
    isSourceOfFundsAnswered: true, isPhoneValidated: true,
  },
});
const rawBodyBuffer = Buffer.from(rawBodyText); // what express.raw() hands over
const { publicKey, privateKey } = await nodeBuild.generateWebhookKeyPair();
const { timestamp, signature } = await nodeBuild.signWebhook({ rawBody: rawBodyText, privateKey });
const toleranceSeconds = 0; // the clock is not what is measured

// Baseline inputs: keys imported once, as a hand-written receiver would keep them.
const keyObject = createPublicKey(publicKey);
const cryptoKey = await webBuild.importPublicKey(publicKey);
const rawPublicKey = keyObject.export({ format: 'jwk' }).x;
const noblePublicKey = Buffer.from(rawPublicKey, 'base64url');
const encoder = new TextEncoder();

// Sanity: every contender accepts the signature before anything is timed.
const message = encoder.encode(`${timestamp}.${rawBodyText}`);
const signatureBytes = Buffer.from(signature, 'base64');
if (!nodeVerify(null, message, keyObject, signatureBytes)) throw new Error('node:crypto rejects the bench signature');
if (!(await crypto.subtle.verify('Ed25519', cryptoKey, signatureBytes, message))) throw new Error('WebCrypto rejects the bench signature');
if (!(await noble.verifyAsync(signatureBytes, message, noblePublicKey))) throw new Error('@noble/ed25519 rejects the bench signature');
await nodeBuild.verifyWebhookSignature({ rawBody: rawBodyBuffer, timestamp, signature, publicKey, toleranceSeconds });
await webBuild.verifyWebhookSignature({ rawBody: rawBodyText, timestamp, signature, publicKey, toleranceSeconds });

const nodePath = async () => nodeBuild.verifyWebhookSignature({ rawBody: rawBodyBuffer, timestamp, signature, publicKey, toleranceSeconds });
const webPath = async () => webBuild.verifyWebhookSignature({ rawBody: rawBodyText, timestamp, signature, publicKey, toleranceSeconds });

// Made twice by one factory: the baseline, and its identical copy for the control row.
const makeRawNodeVerify = () => () => {
  if (!nodeVerify(null, Buffer.concat([Buffer.from(`${timestamp}.`), rawBodyBuffer]), keyObject, Buffer.from(signature, 'base64'))) throw new Error('rejected');
};
const rawNodeVerify = makeRawNodeVerify();
const rawNodeVerifyControl = makeRawNodeVerify();
// The fastest plain decoding of the header without Buffer, so the baseline is not handicapped.
const bytesOfBase64 = (text) => {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
};
const rawSubtleVerify = async () => {
  const signatureFromHeader = bytesOfBase64(signature);
  if (!(await crypto.subtle.verify('Ed25519', cryptoKey, signatureFromHeader, encoder.encode(`${timestamp}.${rawBodyText}`)))) throw new Error('rejected');
};
const nobleVerify = async () => {
  const signatureFromHeader = bytesOfBase64(signature);
  if (!(await noble.verifyAsync(signatureFromHeader, encoder.encode(`${timestamp}.${rawBodyText}`), noblePublicKey))) throw new Error('rejected');
};

// bench-kit's interleavedBatches: thousands of short batches in shuffled order, each ratio from
// fast-decile batch times (see batchRatio), the median of the per-round ratios beside it. A
// control times the node baseline against an identical copy of itself. @noble/ed25519 is ~20
// times slower, so it is timed in a run of its own with smaller batches.
const times = await interleavedBatches({ nodePath, rawNodeVerify, webPath, rawSubtleVerify, rawNodeVerifyControl }, { rounds: 1_500, batch: 8 });
const nobleTimes = await interleavedBatches({ nodePath, webPath, nobleVerify }, { rounds: 150, batch: 2, warmupMs: 500 });

function recordRatio(name, result, baseline, goal) {
  record({
    name,
    value: result.perSecond,
    unit: 'verifications/s',
    baseline: `${baseline} (${Math.round(result.baselinePerSecond)}/s)`,
    ratio: result.ratio,
    goal: goal === undefined ? undefined : `>= ${goal}`,
    met: goal === undefined ? undefined : result.ratio >= goal,
  });
  if (goal !== undefined) {
    record({ name: '  the same, median of the per-round ratios (noise included)', value: result.medianPerSecond, unit: 'verifications/s (median)', baseline, ratio: result.medianRatio });
  }
}

recordRatio('verifyWebhookSignature, node build', batchRatio(times, 'nodePath', 'rawNodeVerify'), 'node:crypto.verify', 0.95);
recordRatio('verifyWebhookSignature, web build', batchRatio(times, 'webPath', 'rawSubtleVerify'), 'crypto.subtle.verify', 0.95);
recordRatio('control: node:crypto.verify against an identical copy of itself (1.00 = no bias)', batchRatio(times, 'rawNodeVerifyControl', 'rawNodeVerify'), 'node:crypto.verify');
recordRatio('verifyWebhookSignature, node build', batchRatio(nobleTimes, 'nodePath', 'nobleVerify'), '@noble/ed25519 verifyAsync');
recordRatio('verifyWebhookSignature, web build', batchRatio(nobleTimes, 'webPath', 'nobleVerify'), '@noble/ed25519 verifyAsync');

// Size of the web build as a browser bundle: everything, verification alone, and verification
// with the key provider (what a web receiver that fetches the key ships).
const scratch = mkdtempSync(join(tmpdir(), 'capi-webhook-signature-bench-'));
try {
  const webEntry = JSON.stringify(join(packageDir, 'dist', 'index.js'));
  const verifyOnly = join(scratch, 'verify-only.mjs');
  writeFileSync(verifyOnly, `export { verifyWebhookSignature } from ${webEntry};\n`);
  const withProvider = join(scratch, 'verify-with-provider.mjs');
  writeFileSync(withProvider, `export { verifyWebhookSignature, createPublicKeyProvider } from ${webEntry};\n`);
  const whole = await bundleSize(join(packageDir, 'dist', 'index.js'));
  const verifying = await bundleSize(verifyOnly);
  const receiving = await bundleSize(withProvider);
  record({ name: 'web build, min+gzip (whole API)', value: whole.gzipBytes, unit: 'bytes', goal: `<= ${SIZE_GOAL_BYTES}`, met: whole.gzipBytes <= SIZE_GOAL_BYTES });
  record({ name: 'web build, minified (whole API)', value: whole.minBytes, unit: 'bytes' });
  record({ name: 'web build, min+gzip (verifyWebhookSignature only)', value: verifying.gzipBytes, unit: 'bytes', goal: `<= ${SIZE_GOAL_BYTES}`, met: verifying.gzipBytes <= SIZE_GOAL_BYTES });
  record({ name: 'web build, min+gzip (verifyWebhookSignature + createPublicKeyProvider)', value: receiving.gzipBytes, unit: 'bytes' });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

printTable();
