import { encodeBase64 } from './base64.js';
import type { Ed25519Engine } from './engine.js';
import { WebhookSignatureError } from './errors.js';
import { resolvePrivateKey } from './import-key.js';
import type { PrivateKeyInput } from './key-material.js';
import { type RawBody, readRawBody } from './signed-message.js';
import type { WebCryptoKey } from './web-crypto-key.js';
import { LARGEST_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER, UNIX_SECONDS } from './webhook-headers.js';
import { requireOptionsObject } from './options-check.js';

/**
 * Options of `signWebhook`.
 *
 * @example
 * ```ts
 * const options: SignWebhookOptions = { rawBody: JSON.stringify(event), privateKey, timestamp: 1700000000 };
 * ```
 */
export interface SignWebhookOptions {
  /** The exact body that will be sent. */
  rawBody: RawBody;
  /** The private key: key text or bytes, or a CryptoKey. */
  privateKey: PrivateKeyInput | WebCryptoKey;
  /** Unix seconds, as a number or decimal digits (default: now). */
  timestamp?: number | string;
}

/**
 * What `signWebhook` returns: the two header values, and the headers ready to send.
 *
 * @example
 * ```ts
 * const { headers }: SignedWebhook = await signWebhook({ rawBody: body, privateKey });
 * await fetch(receiverUrl, { method: 'POST', headers, body });
 * ```
 */
export interface SignedWebhook {
  /** The `X-Webhook-Timestamp` value. */
  timestamp: string;
  /** The `X-Webhook-Signature` value. */
  signature: string;
  /** Both headers by name, for `fetch(url, { method: 'POST', headers, body })`. */
  headers: { 'X-Webhook-Timestamp': string; 'X-Webhook-Signature': string };
}

function timestampText(value: unknown): string {
  if (value === undefined) return String(Math.floor(Date.now() / 1000));
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text === 'string' && UNIX_SECONDS.test(text) && Number(text) < LARGEST_SECONDS) return text;
  throw new WebhookSignatureError(
    'malformed_timestamp',
    `timestamp must be Unix seconds (not milliseconds) as a whole number or digits; got ${String(value)}.`,
  );
}

export async function signWebhookWith(engine: Ed25519Engine, options: SignWebhookOptions): Promise<SignedWebhook> {
  requireOptionsObject(options, 'rawBody, privateKey, timestamp?');
  const body = readRawBody(options.rawBody);
  const timestamp = timestampText(options.timestamp);
  const key = await resolvePrivateKey(options.privateKey);
  const signature = encodeBase64(await engine.sign(key, engine.message(timestamp, body)));
  return { timestamp, signature, headers: { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signature } };
}
