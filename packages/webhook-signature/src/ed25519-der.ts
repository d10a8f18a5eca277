// The fixed DER framings of Ed25519 keys (RFC 8410). Ed25519 keys have one encoding each,
// so byte prefixes are enough; no general ASN.1 parser is needed.
import { decodeHex } from './hex.js';

/** SubjectPublicKeyInfo header; the 32-byte key follows. */
export const SPKI_PREFIX = /* @__PURE__ */ decodeHex('302a300506032b6570032100')!;
/** PKCS8 v1 header; the 32-byte seed follows. */
export const PKCS8_PREFIX = /* @__PURE__ */ decodeHex('302e020100300506032b657004220420')!;
/** PKCS8 v2 (OneAsymmetricKey with the public key) header; seed, then 8121 00, then the key. */
export const PKCS8_WITH_PUBLIC_KEY_PREFIX = /* @__PURE__ */ decodeHex('3051020101300506032b657004220420')!;

const ALGORITHM_OIDS: Record<string, string> = {
  '06032b6570': 'Ed25519',
  '06032b6571': 'Ed448',
  '06032b656e': 'X25519',
  '06092a864886f70d010101': 'RSA',
  '06072a8648ce3d0201': 'EC',
};

export function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** PKCS8 DER of a 32-byte seed: the only private-key import every WebCrypto supports. */
export function pkcs8FromSeed(seed: Uint8Array): Uint8Array<ArrayBuffer> {
  const der = new Uint8Array(PKCS8_PREFIX.length + 32);
  der.set(PKCS8_PREFIX);
  der.set(seed, PKCS8_PREFIX.length);
  return der;
}

/** The algorithm named by the first OID in a DER key, to say what was passed instead. */
export function algorithmOfDer(der: Uint8Array): string | undefined {
  const hex = Array.from(der.subarray(0, 40), (b) => b.toString(16).padStart(2, '0')).join('');
  for (const oid in ALGORITHM_OIDS) if (hex.includes(oid)) return ALGORITHM_OIDS[oid];
  return undefined;
}
