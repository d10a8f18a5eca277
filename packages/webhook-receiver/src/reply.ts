import type { ReceiverReply } from './delivery-source.js';
import { RECEIVER_OUTCOMES, type ReceiverOutcome } from './status-table.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
// 405 must name the allowed method (RFC 9110); 413 closes the connection so that the unread
// rest of an oversized body is not waited for.
const EXTRA_HEADERS: Partial<Record<ReceiverOutcome, Record<string, string>>> = {
  method_not_allowed: { ...JSON_HEADERS, allow: 'POST' },
  body_too_large: { ...JSON_HEADERS, connection: 'close' },
};

const cachedReplies = new Map<ReceiverOutcome, ReceiverReply>();

/**
 * The reply of an outcome: its status from the table and a JSON body `{ code, message }`
 * (the ErrorBody shape). `detail` replaces the table's message when there is something more
 * precise to say (which schema rule failed, what the body parser did).
 */
export function replyFor(outcome: ReceiverOutcome, detail?: string): ReceiverReply {
  if (detail === undefined) {
    const cached = cachedReplies.get(outcome);
    if (cached !== undefined) return cached;
  }
  const { status, message } = RECEIVER_OUTCOMES[outcome];
  const reply: ReceiverReply = {
    status,
    headers: EXTRA_HEADERS[outcome] ?? JSON_HEADERS,
    body: JSON.stringify({ code: outcome, message: detail ?? message }),
  };
  if (detail === undefined) cachedReplies.set(outcome, reply);
  return reply;
}
