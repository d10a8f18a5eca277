import { describe, expect, it } from 'vitest';
import { hexToBytes, implementations, rejectsWithCode } from './implementations.js';
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

describe.each(implementations)('plain Ed25519 rejects inputs of the wrong kind (%s build)', (_, api) => {
  const [vector] = RFC8032_VECTORS as [(typeof RFC8032_VECTORS)[0]];

  it('a signature that is not bytes gives malformed_signature; one of the wrong length verifies false', async () => {
    const publicKey = vector.publicKey;
    await rejectsWithCode(api.verifyEd25519({ message: '', signature: vector.signature as never, publicKey }), 'malformed_signature');
    expect(await api.verifyEd25519({ message: '', signature: hexToBytes(vector.signature).subarray(1), publicKey })).toBe(false);
  });

  it('a message that is neither a string nor bytes is a TypeError', async () => {
    await expect(api.signEd25519({ message: 42 as never, privateKey: vector.secretKey })).rejects.toThrow(/message must be a string/);
  });
});
