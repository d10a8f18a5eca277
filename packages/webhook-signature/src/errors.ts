/**
 * Why a webhook signature was not accepted, or why a key or body could not be used.
 *
 * - `missing_timestamp` / `missing_signature`: the header is absent or empty.
 * - `malformed_timestamp`: not Unix seconds in decimal digits (milliseconds included), or sent more than once.
 * - `timestamp_too_old` / `timestamp_in_future`: outside the tolerance (replay or clock skew).
 * - `malformed_signature`: not the base64 of 64 bytes, or sent more than once.
 * - `invalid_signature`: well-formed but does not match this body, timestamp and key.
 * - `invalid_public_key` / `invalid_private_key`: the key is in no accepted format; or a
 *   public key no private key stands behind (the all-zero placeholder, a small-order point, a
 *   non-canonical encoding with y >= p), under which signatures can be forged.
 * - `body_not_raw`: the body is not a string or bytes (usually already parsed JSON).
 *
 * @example
 * ```ts
 * const status = (code: WebhookSignatureErrorCode) => (code === 'invalid_public_key' || code === 'body_not_raw' ? 500 : 401);
 * ```
 */
export type WebhookSignatureErrorCode =
  | 'missing_timestamp'
  | 'missing_signature'
  | 'malformed_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'malformed_signature'
  | 'invalid_signature'
  | 'invalid_public_key'
  | 'invalid_private_key'
  | 'body_not_raw';

/**
 * Thrown when a webhook cannot be verified or signed; `code` says why, `message` what to do.
 *
 * @example
 * ```ts
 * try {
 *   await verifyWebhookSignature({ rawBody, timestamp, signature, publicKey });
 * } catch (error) {
 *   // invalid_public_key and body_not_raw are the receiver's own configuration: 500, not 401.
 *   if (error instanceof WebhookSignatureError) return new Response(error.code, { status: error.code === 'invalid_public_key' || error.code === 'body_not_raw' ? 500 : 401 });
 *   throw error;
 * }
 * ```
 */
export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
  /** Machine-readable reason, stable across versions. */
  readonly code: WebhookSignatureErrorCode;

  constructor(code: WebhookSignatureErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Why the public-key endpoint gave no usable key.
 *
 * - `network_error`: the request failed (DNS, refused connection, TLS...).
 * - `timeout`: no complete answer within `timeoutMs`.
 * - `http_error`: the answer had a non-2xx status (see `status`).
 * - `key_unavailable`: the endpoint answered `success: false`.
 * - `malformed_response`: not JSON, not `{ success, publicKey }`, or a key in no accepted format
 *   or a weak key (`cause` is the `invalid_public_key` error).
 *
 * @example
 * ```ts
 * const needsConfigFix = (code: PublicKeyFetchErrorCode) => code === 'http_error' || code === 'malformed_response';
 * ```
 */
export type PublicKeyFetchErrorCode =
  | 'network_error'
  | 'timeout'
  | 'http_error'
  | 'key_unavailable'
  | 'malformed_response';

/**
 * Thrown by a public-key provider when `{webhooks_url}/api/v1/public-key` gives no usable
 * key. A receiver should answer 5xx: the service retries, and the key may be back by then.
 *
 * @example
 * ```ts
 * try {
 *   await provider.get();
 * } catch (error) {
 *   if (error instanceof PublicKeyFetchError) console.error(error.code, error.url, error.status);
 * }
 * ```
 */
export class PublicKeyFetchError extends Error {
  override readonly name = 'PublicKeyFetchError';
  /** Machine-readable reason, stable across versions. */
  readonly code: PublicKeyFetchErrorCode;
  /** The URL that was fetched. */
  readonly url: string;
  /** The HTTP status, when an answer arrived. */
  readonly status: number | undefined;

  constructor(
    code: PublicKeyFetchErrorCode,
    message: string,
    details: { url: string; status?: number; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
    this.code = code;
    this.url = details.url;
    this.status = details.status;
  }
}
