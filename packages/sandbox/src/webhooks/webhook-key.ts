import { createWebhookSigner, type WebhookSigner } from './webhook-signer.js';

/**
 * The sandbox's webhook signing key, as the webhook key service serves it: rotatable, and
 * switchable to answer `success: false` (reference 2.8: `success` "must be true for the key
 * to be usable"), so that partners can test their receiver's key handling.
 *
 * It is the scheduler's signer: every attempt signs with the key current when it starts, so
 * the deliveries after a rotation (retries of earlier events included) carry the new key's
 * signature, as a service that rotated its key would sign them.
 */
export class WebhookKey implements WebhookSigner {
  #signer: WebhookSigner;
  #success = true;

  private constructor(signer: WebhookSigner) {
    this.#signer = signer;
  }

  /** A key made fresh at start (or from a given PKCS8 PEM private key). */
  static async create(privateKeyPem?: string): Promise<WebhookKey> {
    return new WebhookKey(await createWebhookSigner(privateKeyPem));
  }

  /** The current public key (PEM, SPKI). */
  get publicKey(): string {
    return this.#signer.publicKey;
  }

  /** Whether the key service answers `success: true` with the key (else `success: false`, no key). */
  get success(): boolean {
    return this.#success;
  }

  sign(rawBody: string): ReturnType<WebhookSigner['sign']> {
    return this.#signer.sign(rawBody);
  }

  /** Replaces the key pair with a fresh one; resolves to the new public key. */
  async rotate(): Promise<string> {
    this.#signer = await createWebhookSigner();
    return this.#signer.publicKey;
  }

  /** Makes the key service answer `success: false` (false) until `true` restores it; signing goes on. */
  setSuccess(success: boolean): void {
    this.#success = success;
  }

  /** What `GET {webhooks_url}/api/v1/public-key` answers now. */
  answer(): { success: boolean; publicKey: string; message?: string } {
    if (this.#success) return { success: true, publicKey: this.#signer.publicKey };
    return {
      success: false,
      publicKey: '',
      message:
        'The webhook key is not available (the sandbox was told to answer success: false; PUT /__sandbox/webhook-key {"success": true} or sandbox.setWebhookKeySuccess(true) restores it). Do not verify with this answer; keep the key you have and try again later.',
    };
  }
}
