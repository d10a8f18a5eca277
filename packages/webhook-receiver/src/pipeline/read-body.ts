import type { DeliverySource } from '../delivery-source.js';
import { WebhookReceiverError } from '../errors.js';
import type { Answer, PipelineContext } from './context.js';

/**
 * Stage 1, read: the raw body, up to `maxBodyBytes`, or the answer when it cannot be had. A
 * body that is too large or cut short is the sender's side (nothing is reported); a body a
 * parser consumed first is the server's (reported to onError, answered 500 so it is retried).
 */
export async function readBody(context: PipelineContext, source: DeliverySource): Promise<Uint8Array | Answer> {
  try {
    return await source.readRawBody(context.maxBodyBytes);
  } catch (error) {
    if (!(error instanceof WebhookReceiverError)) throw error;
    if (error.code === 'body_too_large' || error.code === 'body_incomplete') return { outcome: error.code, detail: error.message };
    if (error.code === 'body_already_consumed') {
      context.report(error, { outcome: 'body_already_consumed', afterReply: false });
      return { outcome: 'body_already_consumed', detail: error.message };
    }
    throw error;
  }
}
