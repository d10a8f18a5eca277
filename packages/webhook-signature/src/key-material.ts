// Turns every accepted spelling of an Ed25519 key into its raw bytes, and says precisely what
// was passed when it is none of them. Private key text is never echoed in a message.
import { decodeBase64 } from './base64.js';
import { describeValue } from './describe-value.js';
import { PKCS8_PREFIX, PKCS8_WITH_PUBLIC_KEY_PREFIX, SPKI_PREFIX, algorithmOfDer } from './ed25519-der.js';
import { WebhookSignatureError } from './errors.js';
import { decodeHex, encodeHex } from './hex.js';
import { compactKeyText, parsePem } from './pem.js';
import { weakPublicKey } from './weak-key.js';

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

interface KeyBytes {
  bytes: Uint8Array<ArrayBuffer>;
  /** The bytes in hex, to compare DER prefixes and find OIDs. */
  hex: string;
  /** Where the bytes came from, for messages: `bytes`, `hex`, `base64` or `PEM "<label>"`. */
  source: string;
}

// Text of only hex digits is read as hex: base64 of a key is never all hex digits (DER
// starts with "M", padded base64 ends with "="), except with negligible probability.
function decodeKeyInput(input: unknown, fail: (saw: string) => never, preview: boolean): KeyBytes {
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  let source = 'bytes';
  if (input instanceof ArrayBuffer || input instanceof Uint8Array) bytes = new Uint8Array(input);
  else if (typeof input !== 'string') fail(describeValue(input));
  else if (input.includes('-----BEGIN')) {
    const pem = parsePem(input) ?? fail('a PEM block that cannot be read');
    bytes = pem.der;
    source = `PEM "${pem.label}"`;
  } else {
    const text = compactKeyText(input) || fail('an empty string');
    source = 'hex';
    bytes = decodeHex(text);
    if (!bytes) {
      source = 'base64';
      bytes = decodeBase64(text) ?? fail(`${text.length} characters${preview ? ` (${JSON.stringify(text.slice(0, 12))}...)` : ''} that are neither PEM, base64, base64url nor hex`);
    }
  }
  return { bytes: bytes!, hex: encodeHex(bytes!), source };
}

/** What the bytes are instead of the expected key: another algorithm, or just a length. */
function foreignKey({ bytes, hex, source }: KeyBytes): string {
  const algorithm = algorithmOfDer(hex);
  return `${algorithm && algorithm !== 'Ed25519' ? `an ${algorithm} key` : `${bytes.length} bytes`} (from ${source})`;
}

/** The raw 32-byte public key, or `invalid_public_key` naming what was passed or why it is unsafe. */
export function publicKeyBytes(input: unknown): Uint8Array<ArrayBuffer> {
  const fail = (saw: string): never => {
    throw new WebhookSignatureError('invalid_public_key', `Expected an Ed25519 public key: ${TEXT_FORMS} the 32-byte key or its DER SPKI; got ${saw}.`);
  };
  const key = decodeKeyInput(input, fail, true);
  const { bytes, hex, source } = key;
  const raw = bytes.length === 32 ? bytes : bytes.length === 44 && hex.startsWith(SPKI_PREFIX) ? bytes.subarray(12) : undefined;
  const weak = raw && weakPublicKey(raw);
  if (weak) fail(`${weak} (from ${source}), which lets anyone forge signatures: set the key from GET {webhooks_url}/api/v1/public-key`);
  if (raw) return raw;
  return fail(source.includes('PRIVATE') || hex.startsWith(PKCS8_PREFIX) ? `a private key (from ${source}): keep it secret and pass the public key` : foreignKey(key));
}

/** The 32-byte seed and, when the input carries it, the public key it claims to match. */
export function privateKeyBytes(input: unknown): { seed: Uint8Array<ArrayBuffer>; publicKey?: Uint8Array } {
  const fail = (saw: string): never => {
    throw new WebhookSignatureError(
      'invalid_private_key',
      `Expected an Ed25519 private key: ${TEXT_FORMS} the 32-byte seed, the 64-byte seed+public key or the PKCS8 DER; got ${saw}.`,
    );
  };
  const key = decodeKeyInput(input, fail, false);
  const { bytes, hex, source } = key;
  if (bytes.length === 32) return { seed: bytes };
  if (bytes.length === 64) return { seed: bytes.subarray(0, 32), publicKey: bytes.subarray(32) };
  if (bytes.length === 48 && hex.startsWith(PKCS8_PREFIX)) return { seed: bytes.subarray(16) };
  if (bytes.length === 83 && hex.startsWith(PKCS8_WITH_PUBLIC_KEY_PREFIX)) return { seed: bytes.subarray(16, 48), publicKey: bytes.subarray(51) };
  return fail(source.includes('PUBLIC') || hex.startsWith(SPKI_PREFIX) ? `a public key (from ${source}): signing needs the private key` : foreignKey(key));
}
