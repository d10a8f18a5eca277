// Refuses Ed25519 public keys that no private key stands behind. Under a small-order key
// (RFC 8032 leaves them legal; libsodium blocks them) the signature R = small-order point,
// S = 0 verifies for some or all messages with no private key, and node:crypto, WebCrypto and
// openssl all accept it. Encodings with y >= p are not canonical (RFC 8032 5.1.3) and alias
// y = 0 and y = 1. libsodium's blocklist (and "Taming the many EdDSAs") compares y with the
// sign bit masked against 0, 1, p - 1 and the two order-8 y, which add up to p: that is this.
import { encodeHex } from './hex.js';

const P = 2n ** 255n - 19n;
const ORDER_8_Y = 0x5fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;

/** Why a raw 32-byte public key is unsafe to verify with, or undefined when it is a real key. */
export function weakPublicKey(raw: Uint8Array): string | undefined {
  // Little-endian, sign bit (bit 255) masked.
  const y = BigInt(`0x${encodeHex(raw.slice().reverse())}`) % 2n ** 255n;
  if (y >= P) return 'a non-canonical encoding (y >= p)';
  if (!y && !raw[31]) return 'the all-zero placeholder key';
  if ([0n, 1n, P - 1n, ORDER_8_Y, P - ORDER_8_Y].includes(y)) return 'a small-order point';
  return undefined;
}
