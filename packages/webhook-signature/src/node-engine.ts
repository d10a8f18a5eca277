import { KeyObject, sign, verify } from 'node:crypto';
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

/** node:crypto Ed25519 and Buffer, chosen by the `node` export condition. */
export const nodeEngine: Ed25519Engine = {
  verify: (publicKey, signature, message) => {
    const keyObject = keyObjectOf(publicKey);
    return keyObject ? verify(null, message, keyObject, signature) : webEngine.verify(publicKey, signature, message);
  },
  sign: (privateKey, message) => {
    const keyObject = keyObjectOf(privateKey);
    if (!keyObject) return webEngine.sign(privateKey, message);
    const signature = sign(null, message, keyObject);
    return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
  },
  message: (timestamp, body) =>
    bytes(typeof body === 'string' ? Buffer.from(`${timestamp}.${body}`) : Buffer.concat([Buffer.from(`${timestamp}.`, 'latin1'), body])),
  base64: (text) => bytes(Buffer.from(text, 'base64')),
};
