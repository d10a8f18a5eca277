// Reading the two webhook headers as a receiver gets them: a string, nothing, or (from
// Node's headersDistinct and some frameworks) an array of every value that was sent.
import { describeValue } from './describe-value.js';
import { type WebhookSignatureErrorCode, WebhookSignatureError } from './errors.js';

export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
export const SIGNATURE_HEADER = 'X-Webhook-Signature';

/**
 * A header value as frameworks hand it over: a string, absent, or every value sent.
 *
 * @example
 * ```ts
 * const timestamp: HeaderValue = req.headers['x-webhook-timestamp']; // Node: string | string[] | undefined
 * ```
 */
export type HeaderValue = string | readonly string[] | null | undefined;

// More than 15 digits cannot be an exact number, and no real clock is that far off.
export const UNIX_SECONDS = /^[0-9]{1,15}$/;

/** Above this a timestamp is almost surely milliseconds (year 5138 in seconds). */
export const LARGEST_SECONDS = 1e11;
// 64 bytes are 86 base64 characters plus "==". The last one carries only 2 bits, so it must be
// one of A, Q, g, w: otherwise two spellings would decode to the same signature.
const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{85}[AQgw](==)?$/;

function readHeader(value: unknown, name: string, missing: WebhookSignatureErrorCode, malformed: WebhookSignatureErrorCode): string {
  if (Array.isArray(value)) {
    if (value.length > 1) throw new WebhookSignatureError(malformed, `${name} was sent ${value.length} times; exactly one is allowed.`);
    value = value[0];
  }
  if (value == null || value === '') throw new WebhookSignatureError(missing, `The ${name} header is missing; if it was sent, pass its value.`);
  if (typeof value !== 'string') throw new WebhookSignatureError(malformed, `Pass ${name} as the header's string value, not ${describeValue(value)}.`);
  return value;
}

/** The timestamp header's text, checked to be Unix seconds in decimal digits. */
export function readTimestampHeader(value: unknown): string {
  const text = readHeader(value, TIMESTAMP_HEADER, 'missing_timestamp', 'malformed_timestamp');
  if (UNIX_SECONDS.test(text)) {
    if (Number(text) < LARGEST_SECONDS) return text;
    throw new WebhookSignatureError('malformed_timestamp', `${TIMESTAMP_HEADER} must be Unix seconds, not milliseconds; got ${text}.`);
  }
  throw new WebhookSignatureError('malformed_timestamp', `${TIMESTAMP_HEADER} must be Unix seconds in decimal digits; got ${JSON.stringify(text.slice(0, 24))}.`);
}

/** The 64 signature bytes of the signature header, decoded by `decode` once the spelling is checked. */
export function readSignatureHeader(value: unknown, decode: (base64: string) => Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const text = readHeader(value, SIGNATURE_HEADER, 'missing_signature', 'malformed_signature');
  if (SIGNATURE_BASE64.test(text)) return decode(text);
  throw new WebhookSignatureError('malformed_signature', `${SIGNATURE_HEADER} must be the base64 of a 64-byte Ed25519 signature; got ${text.length} characters.`);
}

/**
 * Rejects a timestamp further than `toleranceSeconds` from `nowMs`, in either direction:
 * an old one is a replay or a stale retry, a future one a forged or skewed clock.
 */
export function checkTimestampTolerance(timestamp: string, toleranceSeconds: number, nowMs: number): void {
  const skew = Number(timestamp) - Math.floor(nowMs / 1000);
  if (toleranceSeconds && Math.abs(skew) > toleranceSeconds) {
    throw new WebhookSignatureError(
      skew < 0 ? 'timestamp_too_old' : 'timestamp_in_future',
      `${TIMESTAMP_HEADER} is ${Math.abs(skew)}s ${skew < 0 ? 'old' : 'in the future'}, beyond the ${toleranceSeconds}s tolerance: a replay, or a wrong clock on this server.`,
    );
  }
}
