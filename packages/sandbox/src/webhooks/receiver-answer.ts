/**
 * What a receiver said in its answer body, in a word a person can act on.
 *
 * A receiver built on @capi/webhook-receiver answers `{code, message}` (`processed`,
 * `duplicate`, `handler_failed`, ...): a `200 duplicate` succeeded as a delivery, yet no
 * handler ran, which "HTTP 200 succeeded" alone would hide. Any other answer is described by
 * the delivery's outcome, with its body (if any) shown apart.
 *
 * @example
 * ```ts
 * receiverAnswer('{"code":"duplicate","message":"not dispatched again"}'); // { code: 'duplicate', message: 'not dispatched again' }
 * receiverAnswer('OK'); // undefined
 * ```
 */
export function receiverAnswer(responseBody: string | undefined): { code: string; message?: string } | undefined {
  if (responseBody === undefined || !responseBody.trimStart().startsWith('{')) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(responseBody);
  } catch {
    return undefined;
  }
  const { code, message } = body as { code?: unknown; message?: unknown };
  // Only a short machine-readable word counts as a code; anything else is just a body.
  if (typeof code !== 'string' || !/^[A-Za-z][\w.-]{0,63}$/.test(code)) return undefined;
  return typeof message === 'string' ? { code, message } : { code };
}

/** How much of a receiver's answer goes into one line. */
const MAX_DETAIL_CHARS = 200;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_DETAIL_CHARS ? `${flat.slice(0, MAX_DETAIL_CHARS)}…` : flat;
}

/**
 * One attempt's answer on one line, as the CLI prints it: `HTTP 200 processed`,
 * `HTTP 200 duplicate (… not dispatched again.)`, `HTTP 500 handler_failed: A handler failed…`,
 * `HTTP 502 failed: Bad Gateway`, `HTTP 204 succeeded`, `timed-out (no complete answer …)`.
 * A 2xx other than `processed` carries the receiver's message, since it says why no handler
 * ran; a failure carries what the receiver said, since that is what a partner debugs.
 */
export function describeAttemptAnswer(attempt: { status: number | null; outcome: string; responseBody?: string; error?: string }): string {
  if (attempt.status === null) return `${attempt.outcome} (${attempt.error})`;
  const answer = receiverAnswer(attempt.responseBody);
  if (attempt.outcome === 'succeeded') {
    const explains = answer !== undefined && answer.code !== 'processed' && answer.message !== undefined;
    return `HTTP ${attempt.status} ${answer?.code ?? 'succeeded'}${explains ? ` (${oneLine(answer.message!)})` : ''}`;
  }
  const detail = oneLine(answer?.message ?? attempt.responseBody ?? '');
  return `HTTP ${attempt.status} ${answer?.code ?? 'failed'}${detail !== '' ? `: ${detail}` : ''}`;
}
