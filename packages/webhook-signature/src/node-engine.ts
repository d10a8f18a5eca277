import { KeyObject, sign, verify } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Ed25519Engine } from './engine.js';
import { webEngine } from './web-engine.js';

// node:crypto's one-shot calls skip WebCrypto's promise and thread-pool round trip.
// KeyObject.from copies the key handle, so each CryptoKey is converted once. Only extractable
// keys are converted: passing a non-extractable one to KeyObject.from is deprecated (DEP0204,
// printed by Bun and newer Node), so those (the private keys this package imports, and any
// caller's non-extractable key) stay on WebCrypto.
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: CryptoKey): KeyObject | undefined {
  if (!key.extractable) return undefined;
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = KeyObject.from(key);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

// Buffers come from Node's pool (no zero-filled allocation per message) and decode base64
// natively: both are on every verification's path.
const bytes = (buffer: Buffer) => buffer as Uint8Array<ArrayBuffer>;

/**
 * From this message size on, node:crypto verifies on libuv's thread pool when the process may
 * use more than one CPU, and the event loop is free meanwhile: Ed25519 hashes the whole message
 * with SHA-512, about 1.2 ms at 1 MB. Below it, the copy and the round trip to the pool (about
 * 0.04 ms) cost more than the verification; on one CPU, the pool only takes turns with the
 * event loop, and the copy is pure cost (about 7% slower at 1 MB, measured under taskset).
 */
export const THREAD_POOL_VERIFY_BYTES = 128 * 1024;

function verifyOnThreadPool(keyObject: KeyObject, signature: Uint8Array, message: Uint8Array): Promise<boolean> {
  return new Promise((resolve, reject) => {
    verify(null, message, keyObject, signature, (error, valid) => (error ? reject(error) : resolve(valid)));
  });
}

/**
 * node:crypto Ed25519 and Buffer; `threadPool`: whether large messages are verified on the
 * thread pool (see {@link THREAD_POOL_VERIFY_BYTES}).
 */
export function createNodeEngine({ threadPool }: { threadPool: boolean }): Ed25519Engine {
  const poolFrom = threadPool ? THREAD_POOL_VERIFY_BYTES : Infinity;
  return {
    verify: (publicKey, signature, message) => {
      const keyObject = keyObjectOf(publicKey);
      if (!keyObject) return webEngine.verify(publicKey, signature, message);
      return message.byteLength < poolFrom ? verify(null, message, keyObject, signature) : verifyOnThreadPool(keyObject, signature, message);
    },
    sign: nodeSign,
    message: nodeMessage,
    base64: (text) => bytes(Buffer.from(text, 'base64')),
  };
}

const nodeSign: Ed25519Engine['sign'] = (privateKey, message) => {
  const keyObject = keyObjectOf(privateKey);
  if (!keyObject) return webEngine.sign(privateKey, message);
  const signature = sign(null, message, keyObject);
  return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
};

const nodeMessage: Ed25519Engine['message'] = (timestamp, body) =>
  bytes(typeof body === 'string' ? Buffer.from(`${timestamp}.${body}`) : Buffer.concat([Buffer.from(`${timestamp}.`, 'latin1'), body]));

/** The engine of the `node` export condition: the thread pool where the process may use more than one CPU (its affinity mask, as `os.availableParallelism()` counts it). */
export const nodeEngine: Ed25519Engine = createNodeEngine({ threadPool: availableParallelism() > 1 });

