// The node engine verifies a large message on libuv's thread pool, so that the event loop is free
// for the ~1.5 ms a 1 MB body takes; a smaller one synchronously, where the hop costs more.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importPublicKeyWithWebCrypto as importPublicKey } from '../src/import-key.js';
import { availableParallelism } from 'node:os';
import { createNodeEngine, nodeEngine, THREAD_POOL_VERIFY_BYTES } from '../src/node-engine.js';
import * as nodeBuild from '../src/node.js';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const otherPem = other.publicKey.export({ type: 'spki', format: 'pem' }).toString();

function signedMessage(size: number) {
  const message = new Uint8Array(Buffer.alloc(size, 0x61));
  const signature = new Uint8Array(sign(null, message, privateKey));
  return { message, signature };
}

const pooled = createNodeEngine({ threadPool: true });

describe('the node engine', () => {
  it(`verifies a message of ${THREAD_POOL_VERIFY_BYTES} bytes or more on the thread pool (a promise), and a smaller one synchronously`, async () => {
    const key = await importPublicKey(pem);
    const small = signedMessage(THREAD_POOL_VERIFY_BYTES - 1);
    expect(pooled.verify(key, small.signature, small.message)).toBe(true);

    const large = signedMessage(THREAD_POOL_VERIFY_BYTES);
    const verdict = pooled.verify(key, large.signature, large.message);
    expect(verdict).toBeInstanceOf(Promise);
    await expect(verdict).resolves.toBe(true);
  });

  it('verifies every message synchronously on one CPU, where the pool would only take turns with the event loop', async () => {
    const key = await importPublicKey(pem);
    const large = signedMessage(1_000_000);
    expect(createNodeEngine({ threadPool: false }).verify(key, large.signature, large.message)).toBe(true);
    // The engine the node build uses chose by the CPUs this process may run on.
    expect(nodeEngine.verify(key, large.signature, large.message) instanceof Promise).toBe(availableParallelism() > 1);
  });

  it('answers false on the thread pool for a changed message, a changed signature or another key', async () => {
    const key = await importPublicKey(pem);
    const { message, signature } = signedMessage(1_000_000);
    const changed = message.slice();
    changed[500_000] = 0x62;
    await expect(pooled.verify(key, signature, changed)).resolves.toBe(false);
    const forged = signature.slice();
    forged[0]! ^= 1;
    await expect(pooled.verify(key, forged, message)).resolves.toBe(false);
    await expect(pooled.verify(await importPublicKey(otherPem), signature, message)).resolves.toBe(false);
  });

  it('verifies a large body through a key provider, refetching the key once after a rotation', async () => {
    const rawBody = new Uint8Array(Buffer.alloc(1_000_000, 0x61));
    const timestamp = '1700000000';
    const { signature } = await nodeBuild.signWebhook({ rawBody, timestamp, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    const [current, previous] = await Promise.all([importPublicKey(pem), importPublicKey(otherPem)]);
    let served = previous;
    const provider = { get: async () => served, refresh: async () => (served = current) };
    await expect(nodeBuild.verifyWebhookSignature({ rawBody, timestamp, signature, publicKey: provider, now: () => 1_700_000_000_000 })).resolves.toBeUndefined();
    expect(served).toBe(current);
  });
});
