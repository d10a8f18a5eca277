import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { implementations, rejectsWithCode } from './implementations.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

const [{ secretKey: SEED, publicKey: PUBLIC_KEY }] = RFC8032_VECTORS as [(typeof RFC8032_VECTORS)[0]];
const OTHER_PUBLIC_KEY = RFC8032_VECTORS[1]!.publicKey;
const BODY = '{"eventType":"user.created","data":{"id":"u_1","firstName":"Zoë"}}';
const TIMESTAMP = '1700000000';
const NOW = () => Number(TIMESTAMP) * 1000;

describe.each(implementations)('verifyWebhookSignature (%s build)', (_, api) => {
  let signature: string;
  const verify = (overrides: Partial<Parameters<typeof api.verifyWebhookSignature>[0]> = {}) =>
    api.verifyWebhookSignature({ rawBody: BODY, timestamp: TIMESTAMP, signature, publicKey: PUBLIC_KEY, now: NOW, ...overrides });

  beforeAll(async () => {
    ({ signature } = await api.signWebhook({ rawBody: BODY, privateKey: SEED, timestamp: TIMESTAMP }));
  });

  describe('accepts the signature of `${timestamp}.${rawBody}` made with the service key', () => {
    it('with the body as a string, Buffer, Uint8Array or ArrayBuffer', async () => {
      const bytes = new TextEncoder().encode(BODY);
      await expect(verify()).resolves.toBeUndefined();
      await expect(verify({ rawBody: Buffer.from(BODY) })).resolves.toBeUndefined();
      await expect(verify({ rawBody: bytes })).resolves.toBeUndefined();
      await expect(verify({ rawBody: bytes.buffer })).resolves.toBeUndefined();
    });

    it('with the key as text, CryptoKey or a provider', async () => {
      const key = await api.importPublicKey(PUBLIC_KEY);
      await expect(verify({ publicKey: key })).resolves.toBeUndefined();
      await expect(verify({ publicKey: Buffer.from(PUBLIC_KEY, 'hex').toString('base64') })).resolves.toBeUndefined();
      const provider = { get: async () => key, refresh: async () => key };
      await expect(verify({ publicKey: provider })).resolves.toBeUndefined();
    });

    it('with more distinct key strings than the import cache holds, each still verifying', async () => {
      const spellings = Array.from({ length: 20 }, (_, i) => `${' '.repeat(i)}${PUBLIC_KEY}`);
      for (const publicKey of [...spellings, ...spellings]) await expect(verify({ publicKey })).resolves.toBeUndefined();
    });

    it('with header values as one-element arrays (Node headersDistinct)', async () => {
      await expect(verify({ timestamp: [TIMESTAMP], signature: [signature] })).resolves.toBeUndefined();
    });

    it('with the default clock when the timestamp is now', async () => {
      const fresh = await api.signWebhook({ rawBody: BODY, privateKey: SEED });
      await expect(
        api.verifyWebhookSignature({ rawBody: BODY, timestamp: fresh.timestamp, signature: fresh.signature, publicKey: PUBLIC_KEY }),
      ).resolves.toBeUndefined();
    });
  });

  describe('rejects a request without X-Webhook-Timestamp', () => {
    it.each([undefined, null, '', []])('timestamp %j gives missing_timestamp', async (timestamp) => {
      const error = await rejectsWithCode(verify({ timestamp: timestamp as never }), 'missing_timestamp');
      expect(error.message).toContain('X-Webhook-Timestamp');
    });
  });

  describe('rejects a request without X-Webhook-Signature', () => {
    it.each([undefined, null, '', []])('signature %j gives missing_signature', async (value) => {
      const error = await rejectsWithCode(verify({ signature: value as never }), 'missing_signature');
      expect(error.message).toContain('X-Webhook-Signature');
    });
  });

  describe('rejects a header sent more than once', () => {
    it('two timestamps give malformed_timestamp', async () => {
      const error = await rejectsWithCode(verify({ timestamp: [TIMESTAMP, TIMESTAMP] }), 'malformed_timestamp');
      expect(error.message).toContain('sent 2 times');
    });

    it('two signatures give malformed_signature', async () => {
      await rejectsWithCode(verify({ signature: [signature, signature] }), 'malformed_signature');
    });

    it("Node's comma-joined repeated header gives malformed_timestamp", async () => {
      await rejectsWithCode(verify({ timestamp: `${TIMESTAMP}, ${TIMESTAMP}` }), 'malformed_timestamp');
    });
  });

  describe('rejects a timestamp that is not Unix seconds in decimal digits', () => {
    it.each(['-1', '+1700000000', '1700000000.5', ' 1700000000', '1700000000 ', '0x6553f100', '1.7e9', 'abc', '١٧٠٠٠٠٠٠٠٠', '1234567890123456'])(
      '%j gives malformed_timestamp',
      async (timestamp) => {
        const error = await rejectsWithCode(verify({ timestamp }), 'malformed_timestamp');
        expect(error.message).toContain('decimal digits');
      },
    );

    it('milliseconds instead of seconds give malformed_timestamp, saying so (not timestamp_in_future)', async () => {
      const error = await rejectsWithCode(verify({ timestamp: String(Date.now()), toleranceSeconds: 0 }), 'malformed_timestamp');
      expect(error.message).toContain('not milliseconds');
    });

    it('a number instead of the header string gives malformed_timestamp', async () => {
      await rejectsWithCode(verify({ timestamp: 1700000000 as never }), 'malformed_timestamp');
    });
  });

  describe('rejects a timestamp older than the tolerance', () => {
    it('accepts exactly 300 seconds of age and rejects 301', async () => {
      await expect(verify({ now: () => NOW() + 300_999 })).resolves.toBeUndefined();
      const error = await rejectsWithCode(verify({ now: () => NOW() + 301_000 }), 'timestamp_too_old');
      expect(error.message).toContain('301s old');
    });
  });

  describe('rejects a timestamp further in the future than the tolerance', () => {
    it('accepts exactly 300 seconds ahead and rejects 301', async () => {
      await expect(verify({ now: () => NOW() - 300_000 })).resolves.toBeUndefined();
      const error = await rejectsWithCode(verify({ now: () => NOW() - 301_000 }), 'timestamp_in_future');
      expect(error.message).toContain('301s in the future');
    });
  });

  describe('applies toleranceSeconds, and no time check at all when it is 0', () => {
    it('uses a custom tolerance in both directions', async () => {
      await rejectsWithCode(verify({ toleranceSeconds: 10, now: () => NOW() + 11_000 }), 'timestamp_too_old');
      await rejectsWithCode(verify({ toleranceSeconds: 10, now: () => NOW() - 11_000 }), 'timestamp_in_future');
      await expect(verify({ toleranceSeconds: 10, now: () => NOW() + 10_000 })).resolves.toBeUndefined();
    });

    it('accepts any age with toleranceSeconds 0', async () => {
      await expect(verify({ toleranceSeconds: 0, now: () => NOW() + 10 * 365 * 86_400_000 })).resolves.toBeUndefined();
      await expect(verify({ toleranceSeconds: 0, now: () => 0 })).resolves.toBeUndefined();
    });
  });

  describe('rejects a signature that is not the base64 of 64 bytes', () => {
    const cases: [string, (valid: string) => string][] = [
      ['cut short', (valid) => valid.slice(0, 40)],
      ['65 bytes', () => Buffer.alloc(65, 7).toString('base64')],
      ['base64url alphabet', () => Buffer.alloc(64, 0xfb).toString('base64url')],
      ['non-canonical final character', (valid) => `${valid.slice(0, 85)}B==`],
      ['whitespace inside', (valid) => `${valid.slice(0, 40)} ${valid.slice(41)}`],
      ['hex instead of base64', () => Buffer.alloc(64, 1).toString('hex')],
    ];
    it.each(cases)('%s gives malformed_signature', async (_, make) => {
      const error = await rejectsWithCode(verify({ signature: make(signature) }), 'malformed_signature');
      expect(error.message).toContain('64-byte');
    });

    it('accepts the signature without its "==" padding', async () => {
      await expect(verify({ signature: signature.slice(0, 86) })).resolves.toBeUndefined();
    });
  });

  describe('rejects a signature made over another body, timestamp or key', () => {
    it('another body gives invalid_signature', async () => {
      const error = await rejectsWithCode(verify({ rawBody: `${BODY} ` }), 'invalid_signature');
      expect(error.message).toContain('raw body');
    });

    it('another timestamp gives invalid_signature', async () => {
      await rejectsWithCode(verify({ timestamp: String(Number(TIMESTAMP) + 1) }), 'invalid_signature');
    });

    it('another key gives invalid_signature', async () => {
      await rejectsWithCode(verify({ publicKey: OTHER_PUBLIC_KEY }), 'invalid_signature');
    });

    it('a 1 MB body verifies, and with one byte changed or under another key gives invalid_signature', async () => {
      const large = new TextEncoder().encode(`{"eventType":"user.created","data":{"id":"u_1","notes":"${'x'.repeat(1_000_000)}"}}`);
      const signed = await api.signWebhook({ rawBody: large, privateKey: SEED, timestamp: TIMESTAMP });
      await expect(verify({ rawBody: large, signature: signed.signature })).resolves.toBeUndefined();
      const changed = large.slice();
      changed[changed.length - 3] = 0x79;
      await rejectsWithCode(verify({ rawBody: changed, signature: signed.signature }), 'invalid_signature');
      await rejectsWithCode(verify({ rawBody: large, signature: signed.signature, publicKey: OTHER_PUBLIC_KEY }), 'invalid_signature');
    });

    it('re-serialized JSON (the usual mistake) gives invalid_signature', async () => {
      await rejectsWithCode(verify({ rawBody: JSON.stringify(JSON.parse(BODY), null, 2) }), 'invalid_signature');
    });
  });

  describe('rejects an unusable public key with invalid_public_key', () => {
    it('text in no key format', async () => {
      const error = await rejectsWithCode(verify({ publicKey: 'not a key!' }), 'invalid_public_key');
      expect(error.message).toContain('neither PEM, base64, base64url nor hex');
    });

    it('an RSA key', async () => {
      const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
      const error = await rejectsWithCode(verify({ publicKey: rsa }), 'invalid_public_key');
      expect(error.message).toContain('an RSA key');
    });

    it('a private CryptoKey', async () => {
      const privateKey = await api.importPrivateKey(SEED);
      const error = await rejectsWithCode(verify({ publicKey: privateKey }), 'invalid_public_key');
      expect(error.message).toContain('private Ed25519 CryptoKey');
    });

    it('a CryptoKey that may not verify', async () => {
      const exported = await crypto.subtle.exportKey('raw', (await api.importPublicKey(PUBLIC_KEY)) as CryptoKey);
      const wrapOnly = await crypto.subtle.importKey('raw', exported, 'Ed25519', true, []);
      const error = await rejectsWithCode(verify({ publicKey: wrapOnly }), 'invalid_public_key');
      expect(error.message).toContain('usage "verify"');
    });

    it('a number', async () => {
      const error = await rejectsWithCode(verify({ publicKey: 42 as never }), 'invalid_public_key');
      expect(error.message).toContain('got a number');
    });
  });

  describe('rejects a body that is not raw with body_not_raw', () => {
    it('a parsed JSON object, with advice on keeping the raw body', async () => {
      const error = await rejectsWithCode(verify({ rawBody: JSON.parse(BODY) }), 'body_not_raw');
      expect(error.message).toContain('already parsed JSON');
      expect(error.message).toContain('express.raw');
      expect(error.message).toContain('request.text()');
    });

    it.each([undefined, null, 42])('%j', async (rawBody) => {
      await rejectsWithCode(verify({ rawBody: rawBody as never }), 'body_not_raw');
    });
  });

  describe('rejects misuse of the options with a TypeError', () => {
    it.each([
      ['a negative tolerance', { toleranceSeconds: -1 }],
      ['a NaN tolerance', { toleranceSeconds: Number.NaN }],
      ['a string tolerance', { toleranceSeconds: '300' }],
      ['a clock that is not a function', { now: 1700000000000 }],
      ['a clock that returns no number', { now: () => undefined }],
    ])('%s', async (_, overrides) => {
      await expect(verify(overrides as never)).rejects.toThrow(TypeError);
    });

    it('no options object', async () => {
      await expect(api.verifyWebhookSignature(undefined as never)).rejects.toThrow(/one options object/);
    });
  });
});

describe.each(implementations)('isValidWebhookSignature (%s build)', (_, api) => {
  it('resolves true for a valid signature and false for every failure, never throwing', async () => {
    const { signature } = await api.signWebhook({ rawBody: BODY, privateKey: SEED, timestamp: TIMESTAMP });
    const base = { rawBody: BODY, timestamp: TIMESTAMP, signature, publicKey: PUBLIC_KEY, now: NOW };
    expect(await api.isValidWebhookSignature(base)).toBe(true);
    const failing = [
      { ...base, rawBody: `${BODY}x` },
      { ...base, timestamp: undefined },
      { ...base, signature: 'x' },
      { ...base, publicKey: 'garbage' },
      { ...base, rawBody: {} as never },
      { ...base, toleranceSeconds: -5 },
      { ...base, publicKey: { get: () => Promise.reject(new Error('down')), refresh: () => Promise.reject(new Error('down')) } },
      undefined as never,
    ];
    for (const options of failing) expect(await api.isValidWebhookSignature(options)).toBe(false);
  });
});
