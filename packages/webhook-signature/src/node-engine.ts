import { KeyObject, sign, verify } from 'node:crypto';
import type { Ed25519Engine } from './engine.js';

// node:crypto's one-shot calls skip WebCrypto's promise and thread-pool round trip.
// KeyObject.from copies the key handle, so each CryptoKey is converted once.
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: CryptoKey): KeyObject {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = KeyObject.from(key);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

/** node:crypto Ed25519, chosen by the `node` export condition. */
export const nodeEngine: Ed25519Engine = {
  verify: (publicKey, signature, message) => verify(null, message, keyObjectOf(publicKey), signature),
  sign: (privateKey, message) => {
    const signature = sign(null, message, keyObjectOf(privateKey));
    return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
  },
};
