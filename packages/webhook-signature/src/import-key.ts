// Keys become WebCrypto CryptoKeys in every runtime; the node engine converts them to
// KeyObjects once. Imports go through here so a bad key fails the same way everywhere.
import { decodeBase64 } from './base64.js';
import { pkcs8FromSeed } from './ed25519-der.js';
import { WebhookSignatureError } from './errors.js';
import { type PrivateKeyInput, type PublicKeyInput, privateKeyBytes, publicKeyBytes } from './key-material.js';

const ED25519 = 'Ed25519';

export async function importPublicKeyWithWebCrypto(input: PublicKeyInput): Promise<CryptoKey> {
  const raw = publicKeyBytes(input);
  try {
    return await crypto.subtle.importKey('raw', raw, ED25519, true, ['verify']);
  } catch (cause) {
    throw new WebhookSignatureError('invalid_public_key', `WebCrypto rejected the key: ${String(cause)}`, { cause });
  }
}

export async function importPrivateKeyWithWebCrypto(input: PrivateKeyInput): Promise<CryptoKey> {
  const { seed, publicKey } = privateKeyBytes(input);
  const pkcs8 = pkcs8FromSeed(seed);
  if (publicKey) {
    // A 64-byte key whose halves disagree would sign with one key and advertise another.
    const probe = await crypto.subtle.importKey('pkcs8', pkcs8, ED25519, true, ['sign']);
    const derived = decodeBase64((await crypto.subtle.exportKey('jwk', probe)).x ?? '');
    if (!derived || derived.some((byte, i) => byte !== publicKey[i])) {
      throw new WebhookSignatureError(
        'invalid_private_key',
        'The last 32 bytes of the 64-byte private key are not the public key of its first 32 (the seed): pass the seed alone.',
      );
    }
  }
  return crypto.subtle.importKey('pkcs8', pkcs8, ED25519, false, ['sign']);
}

/** Checks a caller's own CryptoKey, so a wrong key fails with a clear code, not a DOMException. */
export function checkCryptoKey(key: CryptoKey, type: 'public' | 'private'): CryptoKey {
  // WebCrypto refuses a key without the usage; node:crypto would not: check it for both.
  const usage = type === 'public' ? 'verify' : 'sign';
  if (key.algorithm.name === ED25519 && key.type === type && key.usages.includes(usage)) return key;
  const code = type === 'public' ? 'invalid_public_key' : 'invalid_private_key';
  throw new WebhookSignatureError(
    code,
    `Expected an Ed25519 ${type} key with usage "${usage}"; got a ${key.type} ${key.algorithm.name} CryptoKey with usages [${key.usages}].`,
  );
}

export function isCryptoKey(value: unknown): value is CryptoKey {
  return typeof CryptoKey === 'function' && value instanceof CryptoKey;
}

/**
 * Remembers the keys imported from text, so passing the same PEM string on every request
 * costs one lookup instead of one import. Bounded: oldest entry out first.
 */
export function createKeyCache(
  importKey: (text: string) => Promise<CryptoKey>,
  maxEntries = 16,
): (text: string) => CryptoKey | Promise<CryptoKey> {
  const keys = new Map<string, CryptoKey | Promise<CryptoKey>>();
  return (text) => {
    const known = keys.get(text);
    if (known) return known;
    if (keys.size >= maxEntries) keys.delete(keys.keys().next().value!);
    const pending = importKey(text).then(
      (key) => {
        keys.set(text, key);
        return key;
      },
      (error: unknown) => {
        keys.delete(text);
        throw error;
      },
    );
    keys.set(text, pending);
    return pending;
  };
}

// Pure: a bundle that only verifies drops the private-key side.
const cachedPublicKey = /* @__PURE__ */ createKeyCache(importPublicKeyWithWebCrypto);
const cachedPrivateKey = /* @__PURE__ */ createKeyCache(importPrivateKeyWithWebCrypto);

/** A usable public CryptoKey from anything accepted as a key (not a provider). */
export function resolvePublicKey(input: unknown): CryptoKey | Promise<CryptoKey> {
  if (isCryptoKey(input)) return checkCryptoKey(input, 'public');
  if (typeof input === 'string') return cachedPublicKey(input);
  return importPublicKeyWithWebCrypto(input as PublicKeyInput);
}

/** A usable private CryptoKey from anything accepted as a private key. */
export function resolvePrivateKey(input: unknown): CryptoKey | Promise<CryptoKey> {
  if (isCryptoKey(input)) return checkCryptoKey(input, 'private');
  if (typeof input === 'string') return cachedPrivateKey(input);
  return importPrivateKeyWithWebCrypto(input as PrivateKeyInput);
}
