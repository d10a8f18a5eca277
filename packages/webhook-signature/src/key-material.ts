// Turns every accepted spelling of an Ed25519 key into its raw bytes, and says precisely what
// was passed when it is none of them. Private key text is never echoed in a message.
import { decodeBase64 } from './base64.js';
import { describeValue } from './describe-value.js';
import {
  PKCS8_PREFIX,
  PKCS8_WITH_PUBLIC_KEY_PREFIX,
  SPKI_PREFIX,
  algorithmOfDer,
  startsWith,
} from './ed25519-der.js';
import { WebhookSignatureError } from './errors.js';
import { decodeHex } from './hex.js';
import { compactKeyText, parsePem } from './pem.js';

/**
 * An Ed25519 public key: PEM (`BEGIN PUBLIC KEY`, SPKI); base64, base64url or hex text of the
 * raw 32-byte key or of its 44-byte DER SPKI (whitespace ignored); or those bytes.
 *
 * @example
 * ```ts
 * const publicKey: PublicKeyInput = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
 * ```
 */
export type PublicKeyInput = string | Uint8Array | ArrayBuffer;

/**
 * An Ed25519 private key: PEM (`BEGIN PRIVATE KEY`, PKCS8); base64, base64url or hex text of
 * the 32-byte seed, of the 64-byte seed followed by the public key, or of the PKCS8 DER;
 * or those bytes.
 *
 * @example
 * ```ts
 * const privateKey: PrivateKeyInput = process.env.WEBHOOK_SIGNING_KEY!; // -----BEGIN PRIVATE KEY-----...
 * ```
 */
export type PrivateKeyInput = string | Uint8Array | ArrayBuffer;

const TEXT_FORMS = 'PEM, or base64, base64url or hex of';
const PUBLIC_FORMATS = `an Ed25519 public key: ${TEXT_FORMS} the 32-byte key or its DER SPKI`;
const PRIVATE_FORMATS = `an Ed25519 private key: ${TEXT_FORMS} the 32-byte seed, the 64-byte seed+public key or the PKCS8 DER`;

interface KeyBytes {
  bytes: Uint8Array<ArrayBuffer>;
  source: string;
}

// Text of only hex digits is read as hex: base64 of a key is never all hex digits (DER
// starts with "M", padded base64 ends with "="), except with negligible probability.
function decodeKeyInput(input: unknown, fail: (saw: string) => never, preview: boolean): KeyBytes {
  if (input instanceof ArrayBuffer) return { bytes: new Uint8Array(input.slice(0)), source: 'bytes' };
  if (input instanceof Uint8Array) return { bytes: new Uint8Array(input), source: 'bytes' };
  if (typeof input !== 'string') return fail(describeValue(input));
  const pem = parsePem(input);
  if (pem) return { bytes: pem.der, source: `PEM "${pem.label}"` };
  if (input.includes('-----BEGIN')) return fail('a PEM block that cannot be read');
  const text = compactKeyText(input);
  if (text === '') return fail('an empty string');
  const hex = decodeHex(text);
  if (hex) return { bytes: hex, source: 'hex' };
  const base64 = decodeBase64(text);
  if (base64) return { bytes: base64, source: 'base64' };
  const shown = preview ? ` (${JSON.stringify(text.slice(0, 12))}...)` : '';
  return fail(`${text.length} characters${shown} that are neither PEM, base64, base64url nor hex`);
}

function foreignKey(key: KeyBytes): string {
  const algorithm = algorithmOfDer(key.bytes);
  return `${algorithm && algorithm !== 'Ed25519' ? `an ${algorithm} key` : `${key.bytes.length} bytes`} (from ${key.source})`;
}

/** The raw 32-byte public key, or `invalid_public_key` naming what was passed. */
export function publicKeyBytes(input: unknown): Uint8Array<ArrayBuffer> {
  const fail = (saw: string): never => {
    throw new WebhookSignatureError('invalid_public_key', `Expected ${PUBLIC_FORMATS}; got ${saw}.`);
  };
  const key = decodeKeyInput(input, fail, true);
  const { bytes } = key;
  if (bytes.length === 32) return bytes;
  if (bytes.length === 44 && startsWith(bytes, SPKI_PREFIX)) return bytes.subarray(12);
  if (key.source.includes('PRIVATE') || startsWith(bytes, PKCS8_PREFIX)) {
    return fail(`a private key (from ${key.source}): keep it secret and pass the public key`);
  }
  return fail(foreignKey(key));
}

/** The 32-byte seed and, when the input carries it, the public key it claims to match. */
export function privateKeyBytes(input: unknown): { seed: Uint8Array<ArrayBuffer>; publicKey?: Uint8Array } {
  const fail = (saw: string): never => {
    throw new WebhookSignatureError('invalid_private_key', `Expected ${PRIVATE_FORMATS}; got ${saw}.`);
  };
  const key = decodeKeyInput(input, fail, false);
  const { bytes } = key;
  if (bytes.length === 32) return { seed: bytes };
  if (bytes.length === 64) return { seed: bytes.subarray(0, 32), publicKey: bytes.subarray(32) };
  if (bytes.length === 48 && startsWith(bytes, PKCS8_PREFIX)) return { seed: bytes.subarray(16) };
  if (bytes.length === 83 && startsWith(bytes, PKCS8_WITH_PUBLIC_KEY_PREFIX)) {
    return { seed: bytes.subarray(16, 48), publicKey: bytes.subarray(51) };
  }
  if (key.source.includes('PUBLIC') || startsWith(bytes, SPKI_PREFIX)) {
    return fail(`a public key (from ${key.source}): signing needs the private key`);
  }
  return fail(foreignKey(key));
}
