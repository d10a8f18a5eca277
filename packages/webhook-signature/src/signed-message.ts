// The bytes that are signed: `${timestamp}.${rawBody}` as UTF-8 (reference section 6.2).
import { describeValue } from './describe-value.js';
import { WebhookSignatureError } from './errors.js';

/**
 * The request body exactly as received: a string, or bytes (a Node `Buffer` is a Uint8Array).
 * Never a parsed object: re-serializing JSON changes the bytes and breaks the signature.
 *
 * @example
 * ```ts
 * const rawBody: RawBody = await request.text(); // or req.body from express.raw()
 * ```
 */
export type RawBody = string | Uint8Array | ArrayBuffer;

const encoder = new TextEncoder();

/** The body as a string or a byte view (no copy), or `body_not_raw` saying how to keep it raw. */
export function readRawBody(rawBody: unknown): string | Uint8Array {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  throw new WebhookSignatureError(
    'body_not_raw',
    `rawBody must be the body as received (string or bytes), not ${describeValue(rawBody)}${typeof rawBody === 'object' && rawBody ? ' (already parsed JSON?)' : ''}: ` +
      'keep it raw with express.raw() or await request.text(), and parse after verifying.',
  );
}

/** UTF-8 bytes of `${timestamp}.${body}`. */
export function signedMessage(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(`${timestamp}.${body}`);
  const prefix = encoder.encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix);
  message.set(body, prefix.length);
  return message;
}
