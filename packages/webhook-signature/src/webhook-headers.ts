// Reading the two webhook headers as a receiver gets them: a string, nothing, or (from
// Node's headersDistinct and some frameworks) an array of every value that was sent.
import { decodeBase64 } from './base64.js';
import { describeValue } from './describe-value.js';
import { type WebhookSignatureErrorCode, WebhookSignatureError } from './errors.js';

export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
export const SIGNATURE_HEADER = 'X-Webhook-Signature';

/** A header value as frameworks hand it over: a string, absent, or every value sent. */
export type HeaderValue = string | readonly string[] | null | undefined;

// More than 15 digits cannot be an exact number, and no real clock is that far off.
const UNIX_SECONDS = /^[0-9]{1,15}$/;
// 64 bytes are 86 base64 characters plus "==". The last one carries 2 bits of the final byte,
// so it must be one of A, Q, g, w (decodeBase64 enforces that too).
const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{86}(==)?$/;

function readHeader(value: unknown, name: string, missing: WebhookSignatureErrorCode, malformed: WebhookSignatureErrorCode): string {
  if (Array.isArray(value)) {
    if (value.length > 1) {
      throw new WebhookSignatureError(malformed, `${name} was sent ${value.length} times; exactly one value is allowed. Reject the request.`);
    }
    value = value[0];
  }
  if (value === undefined || value === null || value === '') {
    throw new WebhookSignatureError(missing, `The ${name} header is missing: reject the request (401). If it was sent, pass the header's value.`);
  }
  if (typeof value !== 'string') {
    throw new WebhookSignatureError(malformed, `${name} must be passed as the header's string value; got ${describeValue(value)}.`);
  }
  return value;
}

/** The timestamp header's text, checked to be Unix seconds in decimal digits. */
export function readTimestampHeader(value: unknown): string {
  const text = readHeader(value, TIMESTAMP_HEADER, 'missing_timestamp', 'malformed_timestamp');
  if (UNIX_SECONDS.test(text)) return text;
  throw new WebhookSignatureError(
    'malformed_timestamp',
    `${TIMESTAMP_HEADER} must be Unix seconds in decimal digits; got ${JSON.stringify(text.slice(0, 24))}. Reject the request.`,
  );
}

/** The 64 signature bytes of the signature header. */
export function readSignatureHeader(value: unknown): Uint8Array<ArrayBuffer> {
  const text = readHeader(value, SIGNATURE_HEADER, 'missing_signature', 'malformed_signature');
  const bytes = SIGNATURE_BASE64.test(text) ? decodeBase64(text) : undefined;
  if (bytes) return bytes;
  throw new WebhookSignatureError(
    'malformed_signature',
    `${SIGNATURE_HEADER} must be the base64 of a 64-byte Ed25519 signature (88 characters); got ${text.length} characters. Reject the request.`,
  );
}

/**
 * Rejects a timestamp further than `toleranceSeconds` from `nowMs`, in either direction:
 * an old one is a replay or a stale retry, a future one a forged or skewed clock.
 */
export function checkTimestampTolerance(timestamp: string, toleranceSeconds: number, nowMs: number): void {
  if (toleranceSeconds === 0) return;
  const skew = Number(timestamp) - Math.floor(nowMs / 1000);
  if (skew < -toleranceSeconds) {
    throw new WebhookSignatureError(
      'timestamp_too_old',
      `${TIMESTAMP_HEADER} is ${-skew}s old, beyond the ${toleranceSeconds}s tolerance: a replay or a late delivery. Reject it; if every request fails, check this server's clock.`,
    );
  }
  if (skew > toleranceSeconds) {
    throw new WebhookSignatureError(
      'timestamp_in_future',
      `${TIMESTAMP_HEADER} is ${skew}s in the future, beyond the ${toleranceSeconds}s tolerance. Reject it; if every request fails, check this server's clock.`,
    );
  }
}
