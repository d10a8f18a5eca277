import { describe, expect, it } from 'vitest';
import { hexToBytes, implementations } from './implementations.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

describe.each(implementations)('RFC 8032 section 7.1 test vectors (%s build)', (_, api) => {
  it.each(RFC8032_VECTORS)('signs $name with the seed and gets the RFC signature', async (vector) => {
    const signature = await api.signEd25519({ message: hexToBytes(vector.message), privateKey: vector.secretKey });
    expect(Buffer.from(signature).toString('hex')).toBe(vector.signature);
  });

  it.each(RFC8032_VECTORS)('verifies the RFC signature of $name with the RFC public key', async (vector) => {
    const publicKey = await api.importPublicKey(vector.publicKey);
    const message = hexToBytes(vector.message);
    expect(await api.verifyEd25519({ message, signature: hexToBytes(vector.signature), publicKey })).toBe(true);
    const altered = hexToBytes(vector.signature);
    altered[0]! ^= 1;
    expect(await api.verifyEd25519({ message, signature: altered, publicKey })).toBe(false);
  });

  it.each(RFC8032_VECTORS)('accepts $name as a 64-byte seed+public key and derives the RFC public key', async (vector) => {
    const privateKey = await api.importPrivateKey(vector.secretKey + vector.publicKey);
    const signature = await api.signEd25519({ message: hexToBytes(vector.message), privateKey });
    expect(Buffer.from(signature).toString('hex')).toBe(vector.signature);
  });
});
