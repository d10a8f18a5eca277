import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebCryptoKey } from '../src/index.js';
import { hexToBytes, implementations, rejectsWithCode } from './implementations.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

const VECTOR = RFC8032_VECTORS[2]!; // TEST 3: a non-empty message
const RAW_PUBLIC = Buffer.from(VECTOR.publicKey, 'hex');
const SPKI_DER = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), RAW_PUBLIC]);
const PKCS8_DER = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(VECTOR.secretKey, 'hex')]);
const PUBLIC_PEM = createPublicKey({ key: SPKI_DER, format: 'der', type: 'spki' }).export({ format: 'pem', type: 'spki' }) as string;
const PRIVATE_PEM = createPrivateKey({ key: PKCS8_DER, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }) as string;
// OneAsymmetricKey v2 (RFC 8410): the seed followed by [1] the public key.
const PKCS8_V2_DER = Buffer.concat([
  Buffer.from('3051020101300506032b657004220420', 'hex'),
  Buffer.from(VECTOR.secretKey, 'hex'),
  Buffer.from('812100', 'hex'),
  RAW_PUBLIC,
]);

const splitLines = (text: string) => text.replace(/(.{20})/g, '$1\n  ');

describe.each(implementations)('importPublicKey (%s build)', (_, api) => {
  const verifiesVector = async (key: WebCryptoKey) =>
    api.verifyEd25519({ message: hexToBytes(VECTOR.message), signature: hexToBytes(VECTOR.signature), publicKey: key });

  describe('accepts every documented public-key format', () => {
    it.each([
      ['PEM (SPKI)', PUBLIC_PEM],
      ['PEM with CRLF line ends', PUBLIC_PEM.replace(/\n/g, '\r\n')],
      ['PEM with literal \\n escapes (from an environment variable)', PUBLIC_PEM.replace(/\n/g, '\\n')],
      ['PEM inside surrounding text', `key:\n${PUBLIC_PEM}\n(end)`],
      ['hex of the raw key', VECTOR.publicKey],
      ['upper-case hex of the raw key', VECTOR.publicKey.toUpperCase()],
      ['base64 of the raw key', RAW_PUBLIC.toString('base64')],
      ['base64 of the raw key without padding', RAW_PUBLIC.toString('base64').replace(/=+$/, '')],
      ['base64url of the raw key', RAW_PUBLIC.toString('base64url')],
      ['base64 of the DER SPKI', SPKI_DER.toString('base64')],
      ['base64url of the DER SPKI', SPKI_DER.toString('base64url')],
      ['hex of the DER SPKI', SPKI_DER.toString('hex')],
      ['hex with whitespace and line breaks', splitLines(VECTOR.publicKey)],
      ['base64 with surrounding whitespace', `  ${SPKI_DER.toString('base64')}\n`],
      ['the raw key as a Uint8Array', new Uint8Array(RAW_PUBLIC)],
      ['the raw key as an ArrayBuffer', new Uint8Array(RAW_PUBLIC).buffer],
      ['the DER SPKI as a Buffer', SPKI_DER],
    ])('%s', async (_, input) => {
      const key = await api.importPublicKey(input as string);
      expect(key.type).toBe('public');
      expect(key.algorithm.name).toBe('Ed25519');
      expect(await verifiesVector(key)).toBe(true);
    });
  });

  describe('rejects anything else with invalid_public_key, naming what it got', () => {
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const ecdsa = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' });
    it.each([
      ['a private key PEM', PRIVATE_PEM, 'a private key (from PEM "PRIVATE KEY")'],
      ['an X25519 key', x25519, 'an X25519 key'],
      ['an EC key as base64 DER', ecdsa.toString('base64'), 'an EC key'],
      ['31 bytes of hex', VECTOR.publicKey.slice(2), '31 bytes (from hex)'],
      ['33 bytes', new Uint8Array(33), '33 bytes (from bytes)'],
      ['a truncated PEM', PUBLIC_PEM.slice(0, 60), 'a PEM block that cannot be read'],
      ['text that is no encoding', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 me@host', 'neither PEM, base64, base64url nor hex'],
      ['an empty string', '', 'an empty string'],
      ['a number', 12345, 'got a number'],
      ['null', null, 'got null'],
      ['a plain object', { publicKey: VECTOR.publicKey }, 'got an object'],
    ])('%s', async (_, input, saw) => {
      const error = await rejectsWithCode(api.importPublicKey(input as string), 'invalid_public_key');
      expect(error.message).toContain(saw);
      expect(error.message).toMatch(/^Expected an Ed25519 public key/);
    });

    it('reads hostile PEM-like text in linear time (60,000 BEGIN lines without an END)', async () => {
      // A rescan from every BEGIN line took over 4 s for 20,000 lines, and grows with their square.
      const error = await rejectsWithCode(api.importPublicKey('-----BEGIN PUBLIC KEY-----'.repeat(60_000)), 'invalid_public_key');
      expect(error.message).toContain('a PEM block that cannot be read');
    });

    it('reads the first block when the text holds two PEM blocks', async () => {
      expect(await verifiesVector(await api.importPublicKey(`${PUBLIC_PEM}${x25519}`))).toBe(true);
    });
  });
});

describe.each(implementations)('importPrivateKey (%s build)', (_, api) => {
  const signsVector = async (input: unknown) => {
    const signature = await api.signEd25519({ message: hexToBytes(VECTOR.message), privateKey: await api.importPrivateKey(input as string) });
    return Buffer.from(signature).toString('hex');
  };

  describe('accepts every documented private-key format', () => {
    it.each([
      ['PKCS8 PEM', PRIVATE_PEM],
      ['PKCS8 PEM with literal \\n escapes', PRIVATE_PEM.replace(/\n/g, '\\n')],
      ['hex of the 32-byte seed', VECTOR.secretKey],
      ['base64 of the 32-byte seed', Buffer.from(VECTOR.secretKey, 'hex').toString('base64')],
      ['base64url of the 32-byte seed', Buffer.from(VECTOR.secretKey, 'hex').toString('base64url')],
      ['hex of the 64-byte seed+public key', VECTOR.secretKey + VECTOR.publicKey],
      ['base64 of the 64-byte seed+public key', Buffer.from(VECTOR.secretKey + VECTOR.publicKey, 'hex').toString('base64')],
      ['base64 of the PKCS8 DER', PKCS8_DER.toString('base64')],
      ['hex of the PKCS8 DER', PKCS8_DER.toString('hex')],
      ['PKCS8 v2 DER with the public key', PKCS8_V2_DER],
      ['the seed as a Uint8Array', hexToBytes(VECTOR.secretKey)],
      ['the seed as an ArrayBuffer', hexToBytes(VECTOR.secretKey).buffer],
    ])('%s', async (_, input) => {
      expect(await signsVector(input)).toBe(VECTOR.signature);
    });
  });

  describe('rejects anything else with invalid_private_key, never echoing the key', () => {
    it.each([
      ['a public key PEM', PUBLIC_PEM, 'a public key (from PEM "PUBLIC KEY")'],
      ['the hex of a public DER SPKI', SPKI_DER.toString('hex'), 'a public key'],
      ['a seed+public key whose halves do not match', VECTOR.secretKey + RFC8032_VECTORS[0]!.publicKey, 'are not the public key of its first 32'],
      ['PKCS8 v2 with a foreign public key', Buffer.concat([PKCS8_V2_DER.subarray(0, 51), Buffer.alloc(32, 9)]), 'are not the public key'],
      ['an RSA private key', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }), 'an RSA key'],
      ['31 bytes', new Uint8Array(31), '31 bytes (from bytes)'],
      ['text that is no encoding', 'correct horse battery staple!', 'neither PEM, base64, base64url nor hex'],
      ['undefined', undefined, 'got undefined'],
    ])('%s', async (_, input, saw) => {
      const error = await rejectsWithCode(api.importPrivateKey(input as string), 'invalid_private_key');
      expect(error.message).toContain(saw);
      expect(error.message).not.toContain(VECTOR.secretKey);
      expect(error.message).not.toContain('correct horse');
    });

    it('a public CryptoKey passed to signWebhook', async () => {
      const publicKey = await api.importPublicKey(VECTOR.publicKey);
      const error = await rejectsWithCode(api.signWebhook({ rawBody: '{}', privateKey: publicKey }), 'invalid_private_key');
      expect(error.message).toContain('public Ed25519 CryptoKey');
    });
  });
});
