// @capi/webhook-signature, web build: WebCrypto Ed25519 in every runtime. The `node` export
// condition loads node.ts instead, which overrides the engine-bound functions below.
import { signEd25519With, verifyEd25519With } from './ed25519-message.js';
import { importPrivateKeyWithWebCrypto, importPublicKeyWithWebCrypto } from './import-key.js';
import type { PrivateKeyInput, PublicKeyInput } from './key-material.js';
import { type WebhookKeyPair, generateWebhookKeyPairWithWebCrypto } from './key-pair.js';
import { type SignWebhookOptions, type SignedWebhook, signWebhookWith } from './sign-webhook.js';
import {
  type VerifyWebhookSignatureOptions,
  isValidWebhookSignatureWith,
  verifyWebhookSignatureWith,
} from './verify-webhook.js';
import type { WebCryptoKey } from './web-crypto-key.js';
import { webEngine } from './web-engine.js';

export { PublicKeyFetchError, type PublicKeyFetchErrorCode, WebhookSignatureError, type WebhookSignatureErrorCode } from './errors.js';
export type { PrivateKeyInput, PublicKeyInput } from './key-material.js';
export type { WebhookKeyPair } from './key-pair.js';
export { type PublicKeyProvider, type PublicKeyProviderOptions, PREVIOUS_KEY_GRACE_MS, createPublicKeyProvider } from './public-key-provider.js';
export type { SignWebhookOptions, SignedWebhook } from './sign-webhook.js';
export type { RawBody } from './signed-message.js';
export type { VerifyWebhookSignatureOptions } from './verify-webhook.js';
export type { WebCryptoKey } from './web-crypto-key.js';
export type { HeaderValue } from './webhook-headers.js';

/**
 * Resolves when `signature` is the service's Ed25519 signature of `${timestamp}.${rawBody}`
 * and the timestamp is within the tolerance; otherwise rejects with a
 * {@link WebhookSignatureError} whose `code` says why. A {@link PublicKeyProvider} that fails
 * rejects with its {@link PublicKeyFetchError}.
 *
 * @example
 * ```ts
 * await verifyWebhookSignature({
 *   rawBody: await request.text(),
 *   timestamp: request.headers.get('x-webhook-timestamp'),
 *   signature: request.headers.get('x-webhook-signature'),
 *   publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY!,
 * });
 * ```
 */
export function verifyWebhookSignature(options: VerifyWebhookSignatureOptions): Promise<void> {
  return verifyWebhookSignatureWith(webEngine, options);
}

/**
 * Like {@link verifyWebhookSignature}, but resolves to `true` or `false` and never throws.
 *
 * @example
 * ```ts
 * if (!(await isValidWebhookSignature({ rawBody, timestamp, signature, publicKey }))) {
 *   return new Response('invalid signature', { status: 401 });
 * }
 * ```
 */
export function isValidWebhookSignature(options: VerifyWebhookSignatureOptions): Promise<boolean> {
  return isValidWebhookSignatureWith(webEngine, options);
}

/**
 * Signs a webhook body the way the service does, for tests, sandboxes and partners' own
 * test suites. Returns both header values and the headers ready to send.
 *
 * @example
 * ```ts
 * const { privateKey } = await generateWebhookKeyPair();
 * const body = JSON.stringify({ eventType: 'user.created', data: user });
 * const { headers } = await signWebhook({ rawBody: body, privateKey });
 * await fetch('http://localhost:3000/webhooks', { method: 'POST', headers, body });
 * ```
 */
export function signWebhook(options: SignWebhookOptions): Promise<SignedWebhook> {
  return signWebhookWith(webEngine, options);
}

/**
 * A new Ed25519 key pair as PEM: the public key in the SPKI PEM that the service's
 * public-key endpoint serves, the private key in PKCS8 PEM for {@link signWebhook}.
 *
 * @example
 * ```ts
 * const { publicKey, privateKey } = await generateWebhookKeyPair();
 * ```
 */
export function generateWebhookKeyPair(): Promise<WebhookKeyPair> {
  return generateWebhookKeyPairWithWebCrypto();
}

/**
 * Imports an Ed25519 public key from PEM (SPKI), from base64, base64url or hex text of the
 * raw 32-byte key or of its DER SPKI (whitespace ignored), or from those bytes. Anything
 * else rejects with `invalid_public_key`, naming what it got; so does a key under which
 * signatures can be forged: the all-zero placeholder, a small-order point, or a non-canonical
 * encoding (y >= p).
 *
 * @example
 * ```ts
 * const publicKey = await importPublicKey('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
 * ```
 */
export function importPublicKey(input: PublicKeyInput): Promise<WebCryptoKey> {
  return importPublicKeyWithWebCrypto(input);
}

/**
 * Imports an Ed25519 private key from PEM (PKCS8), or from base64, base64url or hex text (or
 * bytes) of the 32-byte seed, the 64-byte seed+public key or the PKCS8 DER. Anything else
 * rejects with `invalid_private_key`; the key itself never appears in the message.
 *
 * @example
 * ```ts
 * const privateKey = await importPrivateKey(process.env.WEBHOOK_SIGNING_KEY!);
 * ```
 */
export function importPrivateKey(input: PrivateKeyInput): Promise<WebCryptoKey> {
  return importPrivateKeyWithWebCrypto(input);
}

/**
 * Plain Ed25519 (RFC 8032) signature of `message` (a string is signed as UTF-8): the primitive
 * under {@link signWebhook}, for messages that are not webhooks.
 *
 * @example
 * ```ts
 * const signature = await signEd25519({ message: new Uint8Array([0x72]), privateKey: seedHex });
 * ```
 */
export function signEd25519(options: { message: string | Uint8Array; privateKey: PrivateKeyInput | WebCryptoKey }): Promise<Uint8Array> {
  return signEd25519With(webEngine, options);
}

/**
 * Plain Ed25519 (RFC 8032) verification of a 64-byte `signature` of `message`: the primitive
 * under {@link verifyWebhookSignature}. Resolves to a boolean.
 *
 * @example
 * ```ts
 * const valid = await verifyEd25519({ message, signature, publicKey });
 * ```
 */
export function verifyEd25519(options: {
  message: string | Uint8Array;
  signature: Uint8Array;
  publicKey: PublicKeyInput | WebCryptoKey;
}): Promise<boolean> {
  return verifyEd25519With(webEngine, options);
}
