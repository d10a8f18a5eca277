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
 * Lower-case hex SHA-256 of `bytes`: the deduplication key and `delivery.bodySha256`.
 * Synchronous where node:crypto is there, so that the hot path does not wait a tick for it.
 */
export function sha256Hex(bytes: Uint8Array): string | Promise<string> {
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
