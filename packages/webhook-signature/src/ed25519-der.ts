// The fixed DER framings of Ed25519 keys (RFC 8410), in hex. Ed25519 keys have one encoding
// each, so comparing prefixes is enough; no general ASN.1 parser is needed.

/** SubjectPublicKeyInfo header; the 32-byte key follows. */
export const SPKI_PREFIX = '302a300506032b6570032100';
/** PKCS8 v1 header; the 32-byte seed follows. */
export const PKCS8_PREFIX = '302e020100300506032b657004220420';
/** PKCS8 v2 (OneAsymmetricKey with the public key) header; seed, then 812100, then the key. */
export const PKCS8_WITH_PUBLIC_KEY_PREFIX = '3051020101300506032b657004220420';

// The algorithm OIDs (DER content) of the keys most often passed by mistake.
const ALGORITHM_OIDS = [
  ['2b6570', 'Ed25519'],
  ['2b6571', 'Ed448'],
  ['2b656e', 'X25519'],
  ['2a864886f70d0101', 'RSA'],
  ['2a8648ce3d02', 'EC'],
];

/** The algorithm whose OID is in the header of a DER key (as hex), to say what was passed instead. */
export function algorithmOfDer(derHex: string): string | undefined {
  const header = derHex.slice(0, 80);
  return ALGORITHM_OIDS.find(([oid]) => header.includes(oid!))?.[1];
}
