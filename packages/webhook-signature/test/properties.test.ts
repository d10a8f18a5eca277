import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { implementations } from './implementations.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

const { secretKey: SEED, publicKey: PUBLIC_KEY } = RFC8032_VECTORS[3]!;
const TIMESTAMP = '1700000000';
// Tolerance off: these properties are about the signed bytes, not the clock.
const verifyOptions = { publicKey: PUBLIC_KEY, toleranceSeconds: 0 };
const RUNS = 60;

const body = fc.uint8Array({ minLength: 1, maxLength: 4096 });
const changedByte = fc.integer({ min: 1, max: 255 });
// Any single code point but the surrogate halves (built directly: fast-check's 'binary' unit is slow to start).
const anyCharacter = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCodePoint(code));

describe.each(implementations)('signatures are bound to every byte (%s build)', (_, api) => {
  it('rejects any one-byte change of the body', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.nat(), changedByte, async (rawBody, at, flip) => {
        const { timestamp, signature } = await api.signWebhook({ rawBody, privateKey: SEED, timestamp: TIMESTAMP });
        const changed = rawBody.slice();
        changed[at % changed.length]! ^= flip;
        expect(await api.isValidWebhookSignature({ ...verifyOptions, rawBody, timestamp, signature })).toBe(true);
        expect(await api.isValidWebhookSignature({ ...verifyOptions, rawBody: changed, timestamp, signature })).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects any one-character change of the timestamp', async () => {
    const rawBody = '{"eventType":"user.created"}';
    const { signature } = await api.signWebhook({ rawBody, privateKey: SEED, timestamp: TIMESTAMP });
    await fc.assert(
      fc.asyncProperty(fc.nat(TIMESTAMP.length - 1), anyCharacter, async (at, char) => {
        fc.pre(char !== TIMESTAMP[at]);
        const timestamp = TIMESTAMP.slice(0, at) + char + TIMESTAMP.slice(at + 1);
        expect(await api.isValidWebhookSignature({ ...verifyOptions, rawBody, timestamp, signature })).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects any one-byte change of the signature, and any one-character change of its header', async () => {
    const rawBody = '{"eventType":"user.created"}';
    const { signature } = await api.signWebhook({ rawBody, privateKey: SEED, timestamp: TIMESTAMP });
    const bytes = Buffer.from(signature, 'base64');
    await fc.assert(
      fc.asyncProperty(fc.nat(63), changedByte, fc.nat(87), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }), async (at, flip, charAt, char) => {
        const changed = Buffer.from(bytes);
        changed[at]! ^= flip;
        const fromBytes = changed.toString('base64');
        expect(await api.isValidWebhookSignature({ ...verifyOptions, rawBody, timestamp: TIMESTAMP, signature: fromBytes })).toBe(false);
        fc.pre(char !== signature[charAt]);
        const fromText = signature.slice(0, charAt) + char + signature.slice(charAt + 1);
        expect(await api.isValidWebhookSignature({ ...verifyOptions, rawBody, timestamp: TIMESTAMP, signature: fromText })).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });
});

describe.each(implementations)('sign then verify round-trips any body (%s build)', (_, api) => {
  const roundTrips = async (rawBody: string | Uint8Array) => {
    const { timestamp, signature } = await api.signWebhook({ rawBody, privateKey: SEED });
    await api.verifyWebhookSignature({ rawBody, timestamp, signature, publicKey: PUBLIC_KEY });
    // The receiver gets bytes whatever the sender had: both spellings verify alike.
    const asBytes = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
    return api.isValidWebhookSignature({ rawBody: asBytes, timestamp, signature, publicKey: PUBLIC_KEY });
  };

  it('any Unicode text, the empty string included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: anyCharacter, maxLength: 512 }), async (rawBody) => {
        expect(await roundTrips(rawBody)).toBe(true);
      }),
      { numRuns: RUNS, examples: [[''], ['Zoë €100 — 日本語 🎉']] },
    );
  });

  it('any bytes, the empty body included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (rawBody) => {
        expect(await roundTrips(rawBody)).toBe(true);
      }),
      { numRuns: RUNS, examples: [[new Uint8Array(0)]] },
    );
  });

  it('a 1 MB body, as text and as bytes', async () => {
    const text = 'é'.repeat(512 * 1024); // 1 MiB of UTF-8
    expect(await roundTrips(text)).toBe(true);
    expect(await roundTrips(new TextEncoder().encode(text))).toBe(true);
  });
});
