// Keys become WebCrypto CryptoKeys in every runtime; the node engine converts the extractable
// ones to KeyObjects once. Imports go through here so a bad key fails the same way everywhere.
import { decodeBase64 } from './base64.js';
import { PKCS8_PREFIX } from './ed25519-der.js';
import { WebhookSignatureError } from './errors.js';
import { decodeHex, encodeHex } from './hex.js';
import { type PrivateKeyInput, type PublicKeyInput, privateKeyBytes, publicKeyBytes } from './key-material.js';

const ED25519 = 'Ed25519';

export async function importPublicKeyWithWebCrypto(input: PublicKeyInput): Promise<CryptoKey> {
  const raw = publicKeyBytes(input);
  try {
    return await crypto.subtle.importKey('raw', raw, ED25519, true, ['verify']);
  } catch (cause) {
    throw new WebhookSignatureError('invalid_public_key', `WebCrypto rejected the key: ${cause}`, { cause });
  }
}

export async function importPrivateKeyWithWebCrypto(input: PrivateKeyInput): Promise<CryptoKey> {
  const { seed, publicKey } = privateKeyBytes(input);
  // PKCS8 is the only private-key import every WebCrypto supports.
  const pkcs8 = decodeHex(PKCS8_PREFIX + encodeHex(seed))!;
  const importSeed = (extractable: boolean) => crypto.subtle.importKey('pkcs8', pkcs8, ED25519, extractable, ['sign']);
  // A 64-byte key whose halves disagree would sign with one key and advertise another.
  if (publicKey && encodeHex(decodeBase64((await crypto.subtle.exportKey('jwk', await importSeed(true))).x!)!) !== encodeHex(publicKey)) {
    throw new WebhookSignatureError(
      'invalid_private_key',
      'The last 32 bytes of the 64-byte private key are not the public key of its first 32 (the seed): pass the seed alone.',
    );
  }
  return importSeed(false);
}

/** Checks a caller's own CryptoKey, so a wrong key fails with a clear code, not a DOMException. */
function checkCryptoKey(key: CryptoKey, type: 'public' | 'private'): CryptoKey {
  // WebCrypto refuses a key without the usage; node:crypto would not: check it for both.
  const usage = type === 'public' ? 'verify' : 'sign';
  if (key.algorithm.name === ED25519 && key.type === type && key.usages.includes(usage)) return key;
  throw new WebhookSignatureError(
    `invalid_${type}_key`,
    `Expected an Ed25519 ${type} key with usage "${usage}"; got a ${key.type} ${key.algorithm.name} CryptoKey with usages [${key.usages}].`,
  );
}

/**
 * Remembers the keys imported from text, so passing the same PEM string on every request
 * costs one lookup instead of one import. Bounded: oldest entry out first.
 */
function createKeyCache(importKey: (text: string) => Promise<CryptoKey>): (text: string) => CryptoKey | Promise<CryptoKey> {
  const keys = new Map<string, CryptoKey | Promise<CryptoKey>>();
  return (text) => {
    let key = keys.get(text);
    if (!key) {
      if (keys.size > 15) keys.delete(keys.keys().next().value!);
      keys.set(text, (key = importKey(text)));
      key.then((imported) => keys.set(text, imported), () => keys.delete(text));
    }
    return key;
  };
}

// Pure: a bundle that only verifies drops the private-key side.
const cachedPublicKey = /* @__PURE__ */ createKeyCache(importPublicKeyWithWebCrypto);
const cachedPrivateKey = /* @__PURE__ */ createKeyCache(importPrivateKeyWithWebCrypto);

function resolveKey(
  input: unknown,
  type: 'public' | 'private',
  cached: (text: string) => CryptoKey | Promise<CryptoKey>,
  importKey: (input: never) => Promise<CryptoKey>,
): CryptoKey | Promise<CryptoKey> {
  if (typeof CryptoKey === 'function' && input instanceof CryptoKey) return checkCryptoKey(input, type);
  return typeof input === 'string' ? cached(input) : importKey(input as never);
}

/** A usable public CryptoKey from anything accepted as a key (not a provider). */
export function resolvePublicKey(input: unknown): CryptoKey | Promise<CryptoKey> {
  return resolveKey(input, 'public', cachedPublicKey, importPublicKeyWithWebCrypto);
}

/** A usable private CryptoKey from anything accepted as a private key. */
export function resolvePrivateKey(input: unknown): CryptoKey | Promise<CryptoKey> {
  return resolveKey(input, 'private', cachedPrivateKey, importPrivateKeyWithWebCrypto);
}
