import { WebhookReceiverError } from '../errors.js';
import type { Answer, PipelineContext } from './context.js';

/**
 * Stage 1, read, when the raw body cannot be had: the answer for the reason `readRawBody`
 * gave. A body that is too large or cut short is the sender's side (nothing is reported); a
 * body a parser consumed first is the server's (reported to onError, answered 500 so it is
 * retried). Any other failure is rethrown, to be answered 500 `internal_error`.
 */
export function unreadableBody(context: PipelineContext, error: unknown): Answer {
  if (!(error instanceof WebhookReceiverError)) throw error;
  if (error.code === 'body_too_large' || error.code === 'body_incomplete') return { outcome: error.code, detail: error.message };
  if (error.code === 'body_already_consumed') {
    context.report(error, { outcome: 'body_already_consumed', afterReply: false });
    return { outcome: 'body_already_consumed', detail: error.message };
  }
  throw error;
}
