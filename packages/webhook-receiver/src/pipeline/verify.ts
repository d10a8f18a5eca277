import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@capi/event-types';
import { sha256Hex } from '../body-digest.js';
import type { DeliverySource } from '../delivery-source.js';
import { hasSeveralCpus } from '../runtime.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { Answer, PipelineContext } from './context.js';

const TIMESTAMP_HEADER = WEBHOOK_TIMESTAMP_HEADER.toLowerCase();
const SIGNATURE_HEADER = WEBHOOK_SIGNATURE_HEADER.toLowerCase();

/** A delivery whose signature was verified: what the handlers learn, and the signature the dead-letter store keeps. */
export interface VerifiedDelivery {
  readonly delivery: WebhookDelivery;
  readonly signature: string;
  /** A large body, decoded while its signature was checked, for the default validator to parse (see {@link OVERLAP_BYTES}). */
  readonly text?: string | undefined;
}

/**
 * From this body size on, @capi/webhook-signature verifies on node:crypto's thread pool (its
 * THREAD_POOL_VERIFY_BYTES) when there is more than one CPU, and this thread hashes and decodes
 * the body meanwhile instead of after: at 1 MB about 0.5 ms of SHA-256 and 0.5 ms of UTF-8
 * decoding run beside the 1.2 ms of the verification. Neither parses anything: the body is
 * parsed only once it is authentic. A forgery then costs this thread the hash and the decoding
 * instead of the verification, which is less. On one CPU nothing runs beside the verification,
 * so the body is hashed after it, and a forgery is never hashed.
 */
const OVERLAP_BYTES = hasSeveralCpus() ? 128 * 1024 : Infinity;
let utf8: TextDecoder | undefined;

/**
 * Stage 2, verify: the Ed25519 signature over the timestamp and the raw body, then the body's
 * SHA-256. A sender's fault (a forgery, a stale timestamp) is answered 401, and reported to
 * onError at most once a minute (a wrong key or clock looks the same); a server's (a key that
 * cannot be used, an unreachable key endpoint) is reported to onError and answered 5xx.
 */
export async function verifyDelivery(context: PipelineContext, source: DeliverySource, rawBody: Uint8Array, receivedAt: number): Promise<VerifiedDelivery | Answer> {
  const timestamp = source.header(TIMESTAMP_HEADER);
  const signature = source.header(SIGNATURE_HEADER);
  const verification = context.signatureCheck.verify(rawBody, timestamp, signature);
  let digest: string | Promise<string> | undefined;
  let text: string | undefined;
  if (rawBody.byteLength >= OVERLAP_BYTES) {
    digest = sha256Hex(rawBody);
    text = context.decodesForValidator ? decoded(rawBody, context.parseOptions.maxBytes) : undefined;
  }
  try {
    await verification;
  } catch (error) {
    if (typeof digest === 'object') digest.catch(() => {}); // nothing waits for it any more
    const rejection = context.signatureCheck.toRejection(error);
    if (rejection.serverSide) context.report(rejection.error, { outcome: rejection.outcome, afterReply: false });
    else context.rejectedSignature(rejection.outcome, rejection.error);
    // Refused for the key (a rotation not fetched yet, no key at all): kept, so that once a newer
    // key shows it authentic its retry is expected in its place (see refused-deliveries.ts).
    if (context.refused !== undefined && (rejection.outcome === 'invalid_signature' || rejection.outcome === 'public_key_unavailable') && typeof timestamp === 'string' && typeof signature === 'string') {
      // Its timestamp is checked again as of its arrival, on the receiver's clock.
      context.refused.keep(rawBody, timestamp, signature, receivedAt, context.now() - (Date.now() - receivedAt));
    }
    return { outcome: rejection.outcome, detail: rejection.detail };
  }
  digest ??= sha256Hex(rawBody);
  return {
    delivery: {
      timestamp: Number(firstValue(timestamp)),
      bodySha256: typeof digest === 'string' ? digest : await digest,
      receivedAt,
    },
    signature: String(firstValue(signature)),
    text,
  };
}

/**
 * The body as the validator decodes it (fatal UTF-8, one BOM taken off by the validator, which
 * sees the BOM kept here), or undefined where the validator must see the bytes to say what is
 * wrong: a body over its size limit, or not UTF-8.
 */
function decoded(rawBody: Uint8Array, maxBytes: number): string | undefined {
  if (rawBody.byteLength > maxBytes) return undefined;
  try {
    utf8 ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    return utf8.decode(rawBody);
  } catch {
    return undefined;
  }
}

// Node hands a repeated header as an array; the check refuses such deliveries, so this only
// keeps the types honest.
function firstValue(header: string | readonly string[] | null | undefined): string | null | undefined {
  return Array.isArray(header) ? (header as readonly string[])[0] : (header as string | null | undefined);
}
