import { createPrivateKey, createPublicKey } from 'node:crypto';
import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';

/** Signs webhook bodies with the sandbox's Ed25519 key; `publicKey` is what GET /api/v1/public-key serves. */
export interface WebhookSigner {
  /** The public key in the encoding of the live endpoint (PEM, SPKI). */
  readonly publicKey: string;
  /** Signs `rawBody` now: the `X-Webhook-Timestamp` and `X-Webhook-Signature` headers. */
  sign(rawBody: string): Promise<{ timestamp: string; headers: Record<string, string> }>;
}

/**
 * A signer over @capi/webhook-signature: with a fresh key pair (the default; the key lives
 * as long as the sandbox and receivers fetch it from the webhooks base URL, as from the live
 * service) or with a given PKCS8 PEM private key, so a receiver can keep trusting one key.
 */
export async function createWebhookSigner(privateKeyPem?: string): Promise<WebhookSigner> {
  let privateKey: unknown;
  let publicKey: string;
  if (privateKeyPem === undefined) {
    const keyPair = await generateWebhookKeyPair();
    privateKey = keyPair.privateKey;
    publicKey = keyPair.publicKey as string;
  } else {
    // The service's webhooks are Ed25519 (reference 4.6); another key would sign nothing a receiver verifies.
    const type = createPrivateKey(privateKeyPem).asymmetricKeyType;
    if (type !== 'ed25519') throw new Error(`the key is ${type === undefined ? 'not an asymmetric key' : `an ${type} key`}, not Ed25519`);
    privateKey = privateKeyPem;
    publicKey = createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  }
  return {
    publicKey,
    async sign(rawBody) {
      const signed = await signWebhook({ rawBody, privateKey } as Parameters<typeof signWebhook>[0]);
      return { timestamp: String(signed.timestamp), headers: { ...signed.headers } as Record<string, string> };
    },
  };
}
