// Plain Ed25519 over any message, on the same keys and engines as the webhook functions:
// for the RFC 8032 test vectors, and for callers who sign something other than a webhook.
import { describeValue } from './describe-value.js';
import type { Ed25519Engine } from './engine.js';
import { WebhookSignatureError } from './errors.js';
import { resolvePrivateKey, resolvePublicKey } from './import-key.js';
import type { PrivateKeyInput, PublicKeyInput } from './key-material.js';
import type { WebCryptoKey } from './web-crypto-key.js';

function messageBytes(message: unknown): Uint8Array<ArrayBuffer> {
  if (typeof message === 'string') return new TextEncoder().encode(message);
  if (message instanceof Uint8Array) return new Uint8Array(message);
  throw new TypeError(`message must be a string (signed as UTF-8) or a Uint8Array; got ${describeValue(message)}.`);
}

export async function signEd25519With(
  engine: Ed25519Engine,
  options: { message: string | Uint8Array; privateKey: PrivateKeyInput | WebCryptoKey },
): Promise<Uint8Array> {
  const key = await resolvePrivateKey(options.privateKey);
  return engine.sign(key, messageBytes(options.message));
}

export async function verifyEd25519With(
  engine: Ed25519Engine,
  options: { message: string | Uint8Array; signature: Uint8Array; publicKey: PublicKeyInput | WebCryptoKey },
): Promise<boolean> {
  const { signature } = options;
  if (!(signature instanceof Uint8Array)) {
    throw new WebhookSignatureError('malformed_signature', `signature must be the 64 signature bytes as a Uint8Array; got ${describeValue(signature)}.`);
  }
  const key = await resolvePublicKey(options.publicKey);
  return signature.length === 64 && engine.verify(key, new Uint8Array(signature), messageBytes(options.message));
}
