import { encodePem } from './pem.js';

/**
 * A fresh Ed25519 key pair, as PEM text.
 *
 * @example
 * ```ts
 * const pair: WebhookKeyPair = await generateWebhookKeyPair();
 * serveKeyEndpoint({ success: true, publicKey: pair.publicKey });
 * ```
 */
export interface WebhookKeyPair {
  /** SPKI PEM (`-----BEGIN PUBLIC KEY-----`): what the service's public-key endpoint serves. */
  publicKey: string;
  /** PKCS8 PEM (`-----BEGIN PRIVATE KEY-----`): what `signWebhook` takes. Keep it secret. */
  privateKey: string;
}

export async function generateWebhookKeyPairWithWebCrypto(): Promise<WebhookKeyPair> {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
  const [spki, pkcs8] = await Promise.all([
    crypto.subtle.exportKey('spki', pair.publicKey),
    crypto.subtle.exportKey('pkcs8', pair.privateKey),
  ]);
  return { publicKey: encodePem('PUBLIC KEY', new Uint8Array(spki)), privateKey: encodePem('PRIVATE KEY', new Uint8Array(pkcs8)) };
}
