import type { Delivery, DeliveryAttempt } from '../webhooks/delivery-scheduler.js';
import { RETRY_DELAYS_MS } from '../webhooks/delivery-scheduler.js';
import { describeAttemptAnswer, receiverAnswer } from '../webhooks/receiver-answer.js';

/**
 * One line of the sandbox's activity, given to the `onLog` option: a request it answered, or
 * one attempt to deliver a webhook. `message` is the line `capi-sandbox serve` prints; the
 * other fields are the same facts for a program.
 *
 * @example
 * ```ts
 * await startSandbox({ onLog: (entry: SandboxLogEntry) => console.log(entry.time, entry.message) });
 * ```
 */
export type SandboxLogEntry = RequestLogEntry | DeliveryAttemptLogEntry;

/**
 * A request the sandbox answered (either listener), e.g. `GET /user/onboarding 200 3 ms`.
 *
 * @example
 * ```ts
 * const failed = (entry: RequestLogEntry) => entry.status !== null && entry.status >= 500;
 * ```
 */
export interface RequestLogEntry {
  kind: 'request';
  /** When the answer was finished (ISO 8601). */
  time: string;
  method: string;
  /** The path without the query string (at most 200 characters). */
  path: string;
  /** The status answered; `null` when the client closed the connection before the answer. */
  status: number | null;
  durationMs: number;
  message: string;
}

/**
 * One attempt to deliver a webhook, e.g.
 * `webhook user.created -> http://localhost:3000/webhooks attempt 1 (12 ms): HTTP 200 processed`.
 *
 * @example
 * ```ts
 * const skipped = (entry: DeliveryAttemptLogEntry) => entry.receiverCode === 'duplicate';
 * ```
 */
export interface DeliveryAttemptLogEntry {
  kind: 'delivery-attempt';
  /** When the attempt ended (ISO 8601). */
  time: string;
  deliveryId: string;
  eventType: string;
  url: string;
  /** 1 for the first POST, 2 to 4 for the retries. */
  attempt: number;
  /** The receiver's HTTP status, `null` when it did not answer. */
  status: number | null;
  outcome: DeliveryAttempt['outcome'];
  /** The `code` of a `{code, message}` answer (what @capi/webhook-receiver sends): `processed`, `duplicate`, `handler_failed`, ... */
  receiverCode?: string;
  /** Why there was no answer (`timed-out`, `network-error`). */
  error?: string;
  durationMs: number;
  /** When the next attempt is due; `null` when the delivery succeeded or was given up. */
  nextAttemptAt: string | null;
  message: string;
}

/** How much of a path goes into one line. */
const MAX_PATH_CHARS = 200;

/** The log entry of one answered request. */
export function requestLogEntry(method: string, path: string, status: number | null, durationMs: number): RequestLogEntry {
  const shownPath = path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}…` : path;
  const ms = Math.round(durationMs);
  return {
    kind: 'request',
    time: new Date().toISOString(),
    method,
    path: shownPath,
    status,
    durationMs: ms,
    message: `${method} ${shownPath} ${status ?? 'closed before the answer'} ${ms} ms`,
  };
}

/** The log entry of the latest attempt of `delivery`, once its state says what comes next. */
export function deliveryAttemptLogEntry(delivery: Delivery, attempt: DeliveryAttempt): DeliveryAttemptLogEntry {
  const durationMs = Math.max(0, Date.parse(attempt.finishedAt) - Date.parse(attempt.startedAt));
  const answer = receiverAnswer(attempt.responseBody);
  const next =
    delivery.state === 'retrying'
      ? `; attempt ${attempt.attempt + 1} of ${RETRY_DELAYS_MS.length + 1} at ${delivery.nextAttemptAt}`
      : delivery.state === 'failed'
        ? '; given up'
        : '';
  return {
    kind: 'delivery-attempt',
    time: attempt.finishedAt,
    deliveryId: delivery.id,
    eventType: delivery.eventType,
    url: delivery.url,
    attempt: attempt.attempt,
    status: attempt.status,
    outcome: attempt.outcome,
    ...(answer !== undefined ? { receiverCode: answer.code } : {}),
    ...(attempt.error !== undefined ? { error: attempt.error } : {}),
    durationMs,
    nextAttemptAt: delivery.nextAttemptAt,
    message: `webhook ${delivery.eventType}${delivery.copyOf === undefined ? '' : ' (duplicate)'} -> ${delivery.url} attempt ${attempt.attempt} (${durationMs} ms): ${describeAttemptAnswer(attempt)}${next}`,
  };
}
