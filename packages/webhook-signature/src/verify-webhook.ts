import type { Ed25519Engine } from './engine.js';
import { WebhookSignatureError } from './errors.js';
import { resolvePublicKey } from './import-key.js';
import type { PublicKeyInput } from './key-material.js';
import type { PublicKeyProvider } from './public-key-provider.js';
import type { WebCryptoKey } from './web-crypto-key.js';
import { numberOption, requireOptionsObject } from './options-check.js';
import { type RawBody, readRawBody } from './signed-message.js';
import {
  type HeaderValue,
  SIGNATURE_HEADER,
  checkTimestampTolerance,
  readSignatureHeader,
  readTimestampHeader,
} from './webhook-headers.js';

/** Industry practice (Stripe, Standard Webhooks); the reference states no tolerance. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Options of `verifyWebhookSignature` and `isValidWebhookSignature`.
 *
 * @example
 * ```ts
 * const options: VerifyWebhookSignatureOptions = {
 *   rawBody: req.body,
 *   timestamp: req.headers['x-webhook-timestamp'],
 *   signature: req.headers['x-webhook-signature'],
 *   publicKey: provider,
 * };
 * ```
 */
export interface VerifyWebhookSignatureOptions {
  /** The request body exactly as received: string, Uint8Array/Buffer or ArrayBuffer. */
  rawBody: RawBody;
  /** The `X-Webhook-Timestamp` header value (Unix seconds, decimal digits). */
  timestamp: HeaderValue;
  /** The `X-Webhook-Signature` header value (base64 of the 64-byte Ed25519 signature). */
  signature: HeaderValue;
  /** The service's public key: key text or bytes, a CryptoKey, or a {@link PublicKeyProvider}. */
  publicKey: PublicKeyInput | WebCryptoKey | PublicKeyProvider;
  /** Largest accepted distance between the timestamp and now, both ways (default 300); 0 disables the check. */
  toleranceSeconds?: number;
  /** The clock in milliseconds (default `Date.now`). */
  now?: () => number;
}

function invalidSignature(cause?: unknown): WebhookSignatureError {
  return new WebhookSignatureError(
    'invalid_signature',
    `${SIGNATURE_HEADER} does not match this timestamp, body and key: verify the raw body as received, with the key from {webhooks_url}/api/v1/public-key.`,
    { cause },
  );
}

function isPublicKeyProvider(value: unknown): value is PublicKeyProvider {
  return typeof (value as PublicKeyProvider | null)?.get === 'function';
}

async function verifyWithProvider(
  engine: Ed25519Engine,
  provider: PublicKeyProvider,
  signature: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
): Promise<void> {
  let key: CryptoKey;
  try {
    key = await resolvePublicKey(await provider.get());
  } catch (error) {
    // Stale if error: the key endpoint failing is no reason to stop verifying with the key it
    // served last. Had the service rotated meanwhile, the refresh below reports the failure.
    const last = provider.lastKey?.();
    if (last === undefined) throw error;
    key = await resolvePublicKey(last);
  }
  if (await engine.verify(key, signature, message)) return;
  // The service may have rotated its key: refetch once. The provider rate-limits refetches,
  // so a flood of forgeries gets the cached key back instead of causing a fetch each.
  let fresh: CryptoKey;
  try {
    fresh = await resolvePublicKey(await provider.refresh());
  } catch (cause) {
    throw invalidSignature(cause);
  }
  if (fresh === key || !(await engine.verify(fresh, signature, message))) throw invalidSignature();
}

export async function verifyWebhookSignatureWith(engine: Ed25519Engine, options: VerifyWebhookSignatureOptions): Promise<void> {
  requireOptionsObject(options, 'rawBody, timestamp, signature, publicKey');
  const { now = Date.now, publicKey } = options;
  const toleranceSeconds = numberOption(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS, 'toleranceSeconds');
  const nowMs = typeof now === 'function' ? now() : NaN;
  if (!Number.isFinite(nowMs)) throw new TypeError('now must be a function returning milliseconds, like Date.now.');

  const body = readRawBody(options.rawBody);
  const timestamp = readTimestampHeader(options.timestamp);
  const signature = readSignatureHeader(options.signature, engine.base64);
  checkTimestampTolerance(timestamp, toleranceSeconds, nowMs);
  const message = engine.message(timestamp, body);

  if (isPublicKeyProvider(publicKey)) return verifyWithProvider(engine, publicKey, signature, message);
  // Cached keys and node:crypto answer synchronously: await only what is really pending.
  const resolved = resolvePublicKey(publicKey);
  const verdict = engine.verify(resolved instanceof Promise ? await resolved : resolved, signature, message);
  if (verdict !== true && (verdict === false || !(await verdict))) throw invalidSignature();
}

export async function isValidWebhookSignatureWith(engine: Ed25519Engine, options: VerifyWebhookSignatureOptions): Promise<boolean> {
  try {
    await verifyWebhookSignatureWith(engine, options);
    return true;
  } catch {
    return false;
  }
}
