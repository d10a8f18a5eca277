// Keys that no private key stands behind are refused, in every format and on both builds. The
// list is derived here independently of src/weak-key.ts: the 8 small-order points come from
// @noble/ed25519 by projecting points onto the torsion subgroup (P -> L*P), the non-canonical
// encodings from RFC 8032 5.1.3 (y must be < p) and the 255-bit field of the encoding.
import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { Point } from '@noble/ed25519';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicKeyProvider } from '../src/index.js';
import { implementations, rejectsWithCode, rejectsWithFetchCode } from './implementations.js';
import { type KeyServer, startKeyServer } from './key-server.js';

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const encode = (y: bigint, signBit: 0 | 1): Buffer => {
  const bytes = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number((y >> BigInt(8 * i)) & 0xffn);
  bytes[31]! |= signBit << 7;
  return bytes;
};
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** The 8 points of order dividing 8, as canonical encodings: L*P for pseudo-random points P. */
function smallOrderPoints(): Set<string> {
  const found = new Set<string>();
  for (let i = 0; found.size < 8 && i < 2000; i++) {
    let point: Point;
    try {
      point = Point.fromBytes(createHash('sha256').update(`point ${i}`).digest(), false);
    } catch {
      continue; // not on the curve
    }
    found.add(point.multiplyUnsafe(L - 1n).add(point).toHex());
  }
  return found;
}

const SMALL_ORDER = [...smallOrderPoints()];
// Each small-order point with both sign bits: for x = 0 (y = 1, y = p - 1) the set sign bit
// is itself a non-canonical encoding of the same point; for the others it encodes -P, also
// small-order. So 5 y values, 10 encodings.
const SMALL_ORDER_ENCODINGS = SMALL_ORDER.flatMap((pointHex) => {
  const bytes = Buffer.from(pointHex, 'hex');
  const flipped = Buffer.from(bytes);
  flipped[31]! ^= 0x80;
  return [hex(bytes), hex(flipped)];
});
// y = p ... 2^255 - 1 (p + 18), with both sign bits: every encoding with y >= p.
const NON_CANONICAL_ENCODINGS = Array.from({ length: 19 }, (_, k) => [hex(encode(P + BigInt(k), 0)), hex(encode(P + BigInt(k), 1))]).flat();
const WEAK = [...new Set([...SMALL_ORDER_ENCODINGS, ...NON_CANONICAL_ENCODINGS])];

const FORMATS: [string, (raw: Buffer) => unknown][] = [
  ['hex', (raw) => hex(raw)],
  ['base64', (raw) => raw.toString('base64')],
  ['base64url', (raw) => raw.toString('base64url')],
  ['bytes', (raw) => new Uint8Array(raw)],
  ['ArrayBuffer', (raw) => new Uint8Array(raw).buffer],
  ['DER SPKI base64', (raw) => Buffer.concat([SPKI_PREFIX, raw]).toString('base64')],
  ['PEM (SPKI)', (raw) => `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([SPKI_PREFIX, raw]).toString('base64')}\n-----END PUBLIC KEY-----\n`],
];

describe('the list of weak encodings, cross-checked', () => {
  it('has the 8 small-order points of the published list (libsodium blocklist, Chalkias et al.)', () => {
    expect(SMALL_ORDER).toHaveLength(8);
    for (const pointHex of SMALL_ORDER) expect(Point.fromHex(pointHex).isSmallOrder()).toBe(true);
    // libsodium's blocklist: y = 0, 1, p - 1 and the two order-8 y, sign bit masked.
    const masked = new Set(SMALL_ORDER.map((pointHex) => hex(encode(BigInt(`0x${hex(Buffer.from(pointHex, 'hex').reverse())}`) & (2n ** 255n - 1n), 0))));
    expect([...masked].sort()).toEqual(
      [
        '0000000000000000000000000000000000000000000000000000000000000000',
        '0100000000000000000000000000000000000000000000000000000000000000',
        '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
        'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
        'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      ].sort(),
    );
  });

  it('has 38 encodings with y >= p, which RFC 8032 decoding (noble, strict) refuses', () => {
    expect(NON_CANONICAL_ENCODINGS).toHaveLength(38);
    for (const encoding of NON_CANONICAL_ENCODINGS) expect(() => Point.fromHex(encoding, false)).toThrow();
    expect(new Set(SMALL_ORDER_ENCODINGS).size).toBe(10);
    expect(WEAK).toHaveLength(10 + 38);
  });
});

describe.each(implementations)('importPublicKey refuses weak keys (%s build)', (_, api) => {
  it.each(FORMATS)('every small-order and non-canonical encoding, as %s, with invalid_public_key', async (_, format) => {
    for (const encoding of WEAK) {
      const error = await rejectsWithCode(api.importPublicKey(format(Buffer.from(encoding, 'hex')) as string), 'invalid_public_key');
      expect(error.message).toMatch(/; got (a small-order point|a non-canonical encoding \(y >= p\)|the all-zero placeholder key) \(from .+\), which lets anyone forge signatures: set the key from GET \{webhooks_url\}\/api\/v1\/public-key\.$/);
    }
  });

  it('names the all-zero placeholder key of an .env template', async () => {
    const error = await rejectsWithCode(api.importPublicKey('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='), 'invalid_public_key');
    expect(error.message).toContain('got the all-zero placeholder key (from base64)');
  });

  it('refuses a weak key wherever a key is accepted: verifyWebhookSignature and verifyEd25519', async () => {
    const identity = encode(1n, 0);
    await rejectsWithCode(
      api.verifyWebhookSignature({ rawBody: '{}', timestamp: '1700000000', signature: Buffer.concat([identity, Buffer.alloc(32)]).toString('base64'), publicKey: hex(identity), now: () => 1_700_000_000_000 }),
      'invalid_public_key',
    );
    await rejectsWithCode(api.verifyEd25519({ message: 'x', signature: new Uint8Array(64), publicKey: new Uint8Array(identity) }), 'invalid_public_key');
  });

  it('still accepts real keys, including ones whose y is just below p', async () => {
    const { publicKey } = await api.generateWebhookKeyPair();
    expect((await api.importPublicKey(publicKey)).type).toBe('public');
    // The largest canonical y on the curve, found from the top: y < p passes the y >= p test.
    let y = P - 2n;
    let point: Point | undefined;
    for (; !point; y--) {
      try {
        point = Point.fromBytes(encode(y, 0), false);
      } catch {
        // not on the curve
      }
    }
    expect(point.isSmallOrder()).toBe(false);
    expect((await api.importPublicKey(point.toBytes())).type).toBe('public');
    for (let i = 0; i < 20; i++) {
      const seed = createHash('sha256').update(`seed ${i}`).digest();
      const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
      const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(12);
      expect((await api.importPublicKey(raw.toString('base64'))).type).toBe('public');
    }
  });
});

// OpenSSL 3.0 (Node 20 and 22) accepts the forgery; the OpenSSL 3.5 of Node 24 refuses it. Partners
// run both, and the platform's own library may be either, so our check stays on every engine.
const opensslAcceptsSmallOrder = /^3\.0\./.test(process.versions.openssl);

describe('why: node:crypto on OpenSSL 3.0 accepts forgeries under small-order keys', () => {
  it(`the all-zero key (order 4) ${opensslAcceptsSmallOrder ? 'verifies' : 'is refused by'} R = identity, S = 0 for some timestamps (OpenSSL ${process.versions.openssl})`, () => {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.alloc(32)]), format: 'der', type: 'spki' });
    const forged = Buffer.concat([encode(1n, 0), Buffer.alloc(32)]);
    const verified = Array.from({ length: 64 }, (_, i) => verify(null, Buffer.from(`${1_700_000_000 + i}.{"eventType":"user.created"}`), key, forged));
    expect(verified.includes(true)).toBe(opensslAcceptsSmallOrder);
  });
});

describe('createPublicKeyProvider refuses a served weak key', () => {
  let server: KeyServer;
  beforeAll(async () => {
    server = await startKeyServer();
  });
  afterAll(() => server.close());

  it.each([
    ['the all-zero key', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'the all-zero placeholder key'],
    ['the identity point as PEM', FORMATS[6]![1](encode(1n, 0)) as string, 'a small-order point'],
    ['y = p', hex(encode(P, 0)), 'a non-canonical encoding'],
  ])('%s gives malformed_response whose cause is invalid_public_key', async (_, publicKey, saw) => {
    server.serveKey(publicKey);
    const error = await rejectsWithFetchCode(createPublicKeyProvider({ url: server.url }).get(), 'malformed_response');
    expect(error.message).toContain(saw);
    expect((error.cause as { code?: string }).code).toBe('invalid_public_key');
  });
});
