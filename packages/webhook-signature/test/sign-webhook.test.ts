import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { implementations, rejectsWithCode } from './implementations.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

const { secretKey: SEED, publicKey: PUBLIC_KEY } = RFC8032_VECTORS[0]!;
const BODY = '{"eventType":"kyc.status.changed","data":{"id":"u_1"}}';

describe.each(implementations)('signWebhook (%s build)', (_, api) => {
  describe('signs `${timestamp}.${rawBody}` and returns both header values and the headers', () => {
    it('with an explicit timestamp as a number or digits', async () => {
      const fromNumber = await api.signWebhook({ rawBody: BODY, privateKey: SEED, timestamp: 1700000000 });
      const fromText = await api.signWebhook({ rawBody: BODY, privateKey: SEED, timestamp: '1700000000' });
      expect(fromNumber).toEqual(fromText);
      expect(fromNumber.timestamp).toBe('1700000000');
      expect(fromNumber.signature).toMatch(/^[A-Za-z0-9+/]{86}==$/);
      expect(fromNumber.headers).toEqual({ 'X-Webhook-Timestamp': '1700000000', 'X-Webhook-Signature': fromNumber.signature });
    });

    it('a signature node:crypto accepts over the exact signed message', async () => {
      const { timestamp, signature } = await api.signWebhook({ rawBody: Buffer.from(BODY), privateKey: SEED, timestamp: 1 });
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(PUBLIC_KEY, 'hex').toString('base64url') }, format: 'jwk' });
      expect(verify(null, Buffer.from(`${timestamp}.${BODY}`), key, Buffer.from(signature, 'base64'))).toBe(true);
    });

    it('with the current time when no timestamp is given', async () => {
      const before = Math.floor(Date.now() / 1000);
      const { timestamp } = await api.signWebhook({ rawBody: BODY, privateKey: SEED });
      expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
      expect(Number(timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    });
  });

  describe('rejects a timestamp that is not Unix seconds', () => {
    it.each([-1, 1.5, Number.NaN, 1_700_000_000_000, '17e8', ' 1700000000', null])('%j gives malformed_timestamp', async (timestamp) => {
      const error = await rejectsWithCode(api.signWebhook({ rawBody: BODY, privateKey: SEED, timestamp: timestamp as never }), 'malformed_timestamp');
      expect(error.message).toContain('Unix seconds');
    });
  });

  describe('rejects a body that is not raw', () => {
    it('a parsed object gives body_not_raw', async () => {
      await rejectsWithCode(api.signWebhook({ rawBody: JSON.parse(BODY), privateKey: SEED }), 'body_not_raw');
    });
  });

  describe('rejects an unusable private key', () => {
    it('a public key gives invalid_private_key', async () => {
      await rejectsWithCode(api.signWebhook({ rawBody: BODY, privateKey: PUBLIC_KEY + PUBLIC_KEY.slice(0, 2) }), 'invalid_private_key');
    });

    it('no options object is a TypeError', async () => {
      await expect(api.signWebhook(null as never)).rejects.toThrow(TypeError);
    });
  });
});

describe.each(implementations)('generateWebhookKeyPair (%s build)', (_, api) => {
  it('returns the public key as SPKI PEM, as the key endpoint serves it, and the private key as PKCS8 PEM', async () => {
    const pair = await api.generateWebhookKeyPair();
    expect(pair.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=]{60}\n-----END PUBLIC KEY-----\n$/);
    expect(pair.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=]{64}\n-----END PRIVATE KEY-----\n$/);
    // Receivers that hand the endpoint's key straight to node:crypto read it as is.
    expect(createPublicKey(pair.publicKey).asymmetricKeyType).toBe('ed25519');
  });

  it('makes pairs whose signatures verify with their own public key only', async () => {
    const [first, second] = await Promise.all([api.generateWebhookKeyPair(), api.generateWebhookKeyPair()]);
    expect(first.publicKey).not.toBe(second.publicKey);
    const signed = await api.signWebhook({ rawBody: BODY, privateKey: first.privateKey });
    const options = { rawBody: BODY, timestamp: signed.timestamp, signature: signed.signature };
    await expect(api.verifyWebhookSignature({ ...options, publicKey: first.publicKey })).resolves.toBeUndefined();
    await rejectsWithCode(api.verifyWebhookSignature({ ...options, publicKey: second.publicKey }), 'invalid_signature');
  });
});
