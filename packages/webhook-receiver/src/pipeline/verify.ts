import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@capi/event-types';
import { sha256Hex } from '../body-digest.js';
import type { DeliverySource } from '../delivery-source.js';
import type { WebhookDelivery } from '../receiver-types.js';
import type { Answer, PipelineContext } from './context.js';

const TIMESTAMP_HEADER = WEBHOOK_TIMESTAMP_HEADER.toLowerCase();
const SIGNATURE_HEADER = WEBHOOK_SIGNATURE_HEADER.toLowerCase();

/** A delivery whose signature was verified: what the handlers learn, and the signature the dead-letter store keeps. */
export interface VerifiedDelivery {
  readonly delivery: WebhookDelivery;
  readonly signature: string;
}

/**
 * Stage 2, verify: the Ed25519 signature over the timestamp and the raw body, then the body's
 * SHA-256. A sender's fault (a forgery, a stale timestamp) is answered 401, and reported to
 * onError at most once a minute (a wrong key or clock looks the same); a server's (a key that
 * cannot be used, an unreachable key endpoint) is reported to onError and answered 5xx.
 */
export async function verifyDelivery(context: PipelineContext, source: DeliverySource, rawBody: Uint8Array, receivedAt: number): Promise<VerifiedDelivery | Answer> {
  const timestamp = source.header(TIMESTAMP_HEADER);
  const signature = source.header(SIGNATURE_HEADER);
  try {
    await context.signatureCheck.verify(rawBody, timestamp, signature);
  } catch (error) {
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
  const digest = sha256Hex(rawBody);
  return {
    delivery: {
      timestamp: Number(firstValue(timestamp)),
      bodySha256: typeof digest === 'string' ? digest : await digest,
      receivedAt,
    },
    signature: String(firstValue(signature)),
  };
}

// Node hands a repeated header as an array; the check refuses such deliveries, so this only
// keeps the types honest.
function firstValue(header: string | readonly string[] | null | undefined): string | null | undefined {
  return Array.isArray(header) ? (header as readonly string[])[0] : (header as string | null | undefined);
}
