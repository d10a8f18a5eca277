import { decodeBase64 } from './base64.js';
import type { Ed25519Engine } from './engine.js';
import { signedMessage } from './signed-message.js';

/** WebCrypto Ed25519: Node >= 20, browsers, Deno, Bun and edge workers. */
export const webEngine: Ed25519Engine = {
  verify: (publicKey, signature, message) => crypto.subtle.verify('Ed25519', publicKey, signature, message),
  sign: async (privateKey, message) => new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, message)),
  message: signedMessage,
  base64: (text) => decodeBase64(text)!,
};
