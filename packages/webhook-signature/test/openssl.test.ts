// Cross-implementation: keys and signatures made by the openssl CLI verify here, and
// signatures made here verify with the openssl CLI.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { implementations, rejectsWithCode } from './implementations.js';

const OPENSSL = 'openssl';
const BODY = '{"eventType":"kyc.phone-validation.changed","data":{"id":"u_9","city":"Zürich"}}';
const TIMESTAMP = '1700000123';
const NOW = () => Number(TIMESTAMP) * 1000;

let dir: string;
const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'capi-webhook-signature-openssl-'));
  openssl('genpkey', '-algorithm', 'ed25519', '-out', file('openssl-private.pem'));
  openssl('pkey', '-in', file('openssl-private.pem'), '-pubout', '-out', file('openssl-public.pem'));
  writeFileSync(file('message.bin'), `${TIMESTAMP}.${BODY}`, 'utf8');
  openssl('pkeyutl', '-sign', '-rawin', '-inkey', file('openssl-private.pem'), '-in', file('message.bin'), '-out', file('openssl.sig'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** openssl's verdict on a signature of message.bin; exit status 0 means verified. */
function opensslVerifies(publicKeyPem: string, signatureBase64: string): boolean {
  writeFileSync(file('public-under-test.pem'), publicKeyPem);
  writeFileSync(file('under-test.sig'), Buffer.from(signatureBase64, 'base64'));
  const result = spawnSync(OPENSSL, ['pkeyutl', '-verify', '-rawin', '-pubin', '-inkey', file('public-under-test.pem'), '-in', file('message.bin'), '-sigfile', file('under-test.sig')], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.includes('Signature Verified Successfully');
}

describe.each(implementations)('cross-checks with the openssl CLI (%s build)', (_, api) => {
  it('verifies a signature made by openssl pkeyutl -sign -rawin with an openssl genpkey key', async () => {
    const publicKey = readFileSync(file('openssl-public.pem'), 'utf8');
    const signature = readFileSync(file('openssl.sig')).toString('base64');
    await expect(api.verifyWebhookSignature({ rawBody: BODY, timestamp: TIMESTAMP, signature, publicKey, now: NOW })).resolves.toBeUndefined();
    await rejectsWithCode(api.verifyWebhookSignature({ rawBody: `${BODY}\n`, timestamp: TIMESTAMP, signature, publicKey, now: NOW }), 'invalid_signature');
  });

  it('signs with the openssl private key exactly as openssl does (Ed25519 is deterministic)', async () => {
    const privateKey = readFileSync(file('openssl-private.pem'), 'utf8');
    const { signature } = await api.signWebhook({ rawBody: BODY, privateKey, timestamp: TIMESTAMP });
    expect(signature).toBe(readFileSync(file('openssl.sig')).toString('base64'));
  });

  it('makes keys and signatures that openssl pkeyutl -verify -rawin accepts, and a changed one it rejects', async () => {
    const { publicKey, privateKey } = await api.generateWebhookKeyPair();
    const { signature } = await api.signWebhook({ rawBody: BODY, privateKey, timestamp: TIMESTAMP });
    expect(opensslVerifies(publicKey, signature)).toBe(true);
    const changed = Buffer.from(signature, 'base64');
    changed[10]! ^= 0x20;
    expect(opensslVerifies(publicKey, changed.toString('base64'))).toBe(false);
  });
});

// Why importPublicKey refuses small-order keys: the platform-grade crypto library does not.
describe.each(implementations)('the identity-key forgery (%s build)', (_, api) => {
  const identity = Buffer.from(`01${'00'.repeat(31)}`, 'hex');
  const identityPem = `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]).toString('base64')}\n-----END PUBLIC KEY-----\n`;
  // R = the identity point, S = 0: [S]B = R + [k]A holds for every message when A is the identity.
  const forged = Buffer.concat([identity, Buffer.alloc(32)]).toString('base64');

  it('openssl pkeyutl -verify -rawin ACCEPTS it, with no private key; importPublicKey refuses the key', async () => {
    expect(opensslVerifies(identityPem, forged)).toBe(true);
    const error = await rejectsWithCode(api.verifyWebhookSignature({ rawBody: BODY, timestamp: TIMESTAMP, signature: forged, publicKey: identityPem, now: NOW }), 'invalid_public_key');
    expect(error.message).toContain('got a small-order point (from PEM "PUBLIC KEY")');
  });
});
