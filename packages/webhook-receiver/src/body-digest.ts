// node:crypto hashes a small body several times faster than WebCrypto's asynchronous digest,
// and the hash is on every delivery's path. process.getBuiltinModule (Node >= 20.16, Bun,
// Deno) reaches it without a static import, so edge bundles never see node:crypto.
type NodeCrypto = typeof import('node:crypto');
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
  .process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
// The one-shot crypto.hash (Node >= 20.12) skips the Hash object createHash allocates: about
// half the cost of hashing a 1 KB body. Bun and Deno may lack it, so createHash stays the fallback.
const oneShotHash = typeof nodeCrypto?.hash === 'function' ? nodeCrypto.hash : undefined;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * Bodies from this size up are hashed with WebCrypto, which Node, Bun and Deno run off the main
 * thread: the receiver parses and validates the body while it is hashed (about 0.7 ms of SHA-256
 * per MB), instead of one after the other. Below it, the hop to the worker thread costs about
 * as much as hashing in place.
 */
export const OFF_THREAD_DIGEST_BYTES = 128 * 1024;

/**
 * Lower-case hex SHA-256 of `bytes`: the deduplication key and `delivery.bodySha256`.
 * Synchronous where node:crypto is there, so that the hot path does not wait a tick for it;
 * a promise for a large body (see {@link OFF_THREAD_DIGEST_BYTES}), which the caller awaits
 * only once it has parsed the body.
 */
export function sha256Hex(bytes: Uint8Array): string | Promise<string> {
  if (bytes.byteLength >= OFF_THREAD_DIGEST_BYTES && typeof crypto !== 'undefined' && crypto.subtle !== undefined) return webCryptoSha256Hex(bytes);
  if (oneShotHash !== undefined) return oneShotHash('sha256', bytes, 'hex');
  if (nodeCrypto !== undefined) return nodeCrypto.createHash('sha256').update(bytes).digest('hex');
  return webCryptoSha256Hex(bytes);
}

async function webCryptoSha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const byte of digest) hex += HEX[byte];
  return hex;
}
