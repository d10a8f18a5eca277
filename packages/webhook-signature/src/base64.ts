// Base64 without Buffer or atob, so the same code runs in every runtime. Decoding is strict:
// a one-character change of a signature header must never decode to the same bytes.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
// base64url shares the table: one decoder serves key text in either alphabet.
VALUES[45] = 62; // '-'
VALUES[95] = 63; // '_'

/** Standard base64 with `=` padding. */
export function encodeBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63] + ALPHABET[n & 63];
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = (bytes[i]! << 16) | (rest === 2 ? bytes[i + 1]! << 8 : 0);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63] + (rest === 2 ? ALPHABET[(n >> 6) & 63] : '=') + '=';
  }
  return out;
}

/**
 * Decodes base64 or base64url, padded or not. Returns undefined for anything else, including
 * non-canonical text whose unused trailing bits are not zero.
 */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  let end = text.length;
  if (text.endsWith('=')) {
    if (end % 4 !== 0) return undefined;
    end -= text.endsWith('==') ? 2 : 1;
  }
  if (end % 4 === 1) return undefined;
  const out = new Uint8Array((end * 3) >> 2);
  let bits = 0;
  let buffer = 0;
  let o = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? VALUES[c]! : -1;
    if (v < 0) return undefined;
    buffer = (buffer << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (buffer >> bits) & 255;
    }
  }
  return (buffer & ((1 << bits) - 1)) === 0 ? out : undefined;
}
