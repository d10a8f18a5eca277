import { PublicKeyFetchError, verifyWebhookSignature, WebhookSignatureError } from '@capi/webhook-signature';
import { WebhookReceiverError } from './errors.js';
import type { ReceiverOutcome } from './status-table.js';

type VerifyOptions = Parameters<typeof verifyWebhookSignature>[0];

/**
 * The signature options of `createWebhookReceiver`, handed to `verifyWebhookSignature`.
 *
 * @example
 * ```ts
 * createWebhookReceiver({ publicKey: createPublicKeyProvider({ url: `${webhooksUrl}/api/v1/public-key` }), toleranceSeconds: 300 });
 * ```
 */
export interface SignatureCheckOptions {
  /**
   * The service's Ed25519 public key: PEM, base64 or hex (anything `importPublicKey` takes),
   * a `CryptoKey`, or a provider from `createPublicKeyProvider({ url })` that fetches it
   * from the public-key endpoint and follows key rotation.
   */
  publicKey: VerifyOptions['publicKey'];
  /** Largest distance between `X-Webhook-Timestamp` and now, in seconds, both ways. Default 300; `0` disables. */
  toleranceSeconds?: number;
  /** Clock in ms, injectable for tests. Default `Date.now`. */
  now?: () => number;
}

/** Why a delivery's signature was not accepted, and whose fault it is. */
export interface SignatureRejection {
  readonly outcome: ReceiverOutcome;
  readonly detail: string | undefined;
  readonly error: unknown;
  /** `true` when the receiver, not the sender, is at fault (a bad key, an unreachable key endpoint): reported to onError. */
  readonly serverSide: boolean;
}

const SENDER_FAULTS = new Set<string>([
  'missing_timestamp', 'missing_signature', 'malformed_timestamp', 'timestamp_too_old',
  'timestamp_in_future', 'malformed_signature', 'invalid_signature',
]);

/**
 * Binds the signature options once and returns the check run on every delivery (`verify`
 * resolves when the signature is valid) and `toRejection`, which turns its failure into the
 * outcome to answer.
 */
export function createSignatureCheck(options: SignatureCheckOptions) {
  const { publicKey, toleranceSeconds, now } = options;
  if (publicKey === undefined || publicKey === null || publicKey === '') {
    throw new WebhookReceiverError('invalid_options',
      'publicKey is required: the PEM from {webhooks_url}/api/v1/public-key, or createPublicKeyProvider({ url }) to fetch it.');
  }
  if (toleranceSeconds !== undefined && (typeof toleranceSeconds !== 'number' || !(toleranceSeconds >= 0))) {
    throw new WebhookReceiverError('invalid_options',
      `toleranceSeconds must be a number of seconds >= 0 (0 disables the check), got ${String(toleranceSeconds)}.`);
  }
  if (now !== undefined && typeof now !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'now must be a function returning milliseconds, like Date.now.');
  }
  const toRejection = (error: unknown): SignatureRejection => {
    if (error instanceof WebhookSignatureError && SENDER_FAULTS.has(error.code)) {
      return { outcome: error.code as ReceiverOutcome, detail: undefined, error, serverSide: false };
    }
    if (error instanceof WebhookSignatureError && error.code === 'invalid_public_key') {
      return { outcome: 'receiver_misconfigured', detail: undefined, error, serverSide: true };
    }
    // A provider made by another copy of @capi/webhook-signature (a second installed version,
    // or its CommonJS build beside this ESM one) throws that copy's class: recognise it by name.
    if (error instanceof PublicKeyFetchError || (error instanceof Error && error.name === 'PublicKeyFetchError')) {
      // The key endpoint failed: it may be back by the retry.
      return { outcome: 'public_key_unavailable', detail: undefined, error, serverSide: true };
    }
    return { outcome: 'receiver_misconfigured', detail: undefined, error, serverSide: true };
  };
  // The receiver awaits the verification itself and converts a rejection with toRejection:
  // no derived promise, and no extra tick, on the success path of every delivery.
  return {
    verify(
      rawBody: Uint8Array,
      timestamp: VerifyOptions['timestamp'],
      signature: VerifyOptions['signature'],
    ): Promise<void> {
      return verifyWebhookSignature({ rawBody, timestamp, signature, publicKey, toleranceSeconds, now });
    },
    toRejection,
  };
}

/** The bound signature check of one receiver: `verify`, and `toRejection` for its failures. */
export type SignatureCheck = ReturnType<typeof createSignatureCheck>;
