import { abortableSleep } from './abortable-sleep.js';
import { describeValue } from './describe-value.js';
import { ApiError, ApiErrorWithRetryAfter, ConnectionError, InvalidArgumentError, RateLimitError, ServerError, TimeoutError } from './errors.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { assertSignalOption } from './signal-option.js';
import { MAX_TIMER_DELAY_MS } from './timer-delay.js';
import { renewalErrors, sessionOf, type TokenManager } from './token-manager.js';
import type { RequestOptions } from './transport.js';

/**
 * The options every polling wait of the client takes.
 *
 * @example
 * const options: PollOptions = { timeoutMs: 60_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 };
 */
export interface PollOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
}

/**
 * Fills a wait's options from its defaults and checks them (InvalidArgumentError otherwise).
 *
 * @example
 * const { timeoutMs, signal } = readPollOptions(options, { timeoutMs: 30_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 });
 */
export function readPollOptions(options: PollOptions, defaults: Required<Omit<PollOptions, 'signal'>>) {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', `A wait's options must be an object such as { timeoutMs, signal }, or left out; got ${describeValue(options)}.`, 'invalid_option');
  }
  const { timeoutMs = defaults.timeoutMs, pollIntervalMs = defaults.pollIntervalMs, maxPollIntervalMs = defaults.maxPollIntervalMs } = options;
  assertMilliseconds(timeoutMs, 'timeoutMs', { allowInfinity: true });
  assertMilliseconds(pollIntervalMs, 'pollIntervalMs');
  assertMilliseconds(maxPollIntervalMs, 'maxPollIntervalMs');
  assertSignalOption(options.signal, 'signal');
  return { timeoutMs, pollIntervalMs, maxPollIntervalMs, signal: options.signal ?? undefined };
}

/**
 * Waits before a wait's next poll: `intervalMs`, or, when that would land after `deadline` (a
 * `Date.now()` time), until the deadline and no longer, for one last poll there. Never returns
 * before that time (a timer may fire a millisecond early by `Date.now()`), so a poll made once
 * the deadline is reached is made after the whole `timeoutMs`.
 *
 * @example
 * await sleepBeforeNextPoll(interval, deadline, signal, abort);
 */
export async function sleepBeforeNextPoll(intervalMs: number, deadline: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  const until = Math.min(Date.now() + intervalMs, deadline);
  for (let left = until - Date.now(); left > 0; left = until - Date.now()) await abortableSleep(left, signal, onAbort);
}

/**
 * A failure a wait polls through instead of ending with it: a `ServerError` (5xx), a
 * `RateLimitError` (429), an `ApiError` 408, a `ConnectionError`, or a `TimeoutError`
 * `request_timeout` (one request's own timeout, not a wait's).
 *
 * @example
 * const failure: TransientPollError = new ConnectionError('Could not reach the service.', { code: 'connection_failed' });
 */
export type TransientPollError = ApiError | ConnectionError | TimeoutError;

/**
 * Whether a poll's error is one {@link pollUntil} polls through ({@link TransientPollError}).
 *
 * @example
 * isTransientPollError(serverError) // true; isTransientPollError(authenticationError) // false
 */
export function isTransientPollError(error: unknown): error is TransientPollError {
  return (
    error instanceof ServerError ||
    error instanceof RateLimitError ||
    (error instanceof ApiError && error.status === 408) ||
    error instanceof ConnectionError ||
    (error instanceof TimeoutError && error.code === 'request_timeout')
  );
}

/**
 * Why a wait's last poll had no answer, in a few words for its timeout message: the last failed
 * poll's status and code (`HTTP 503 server_error`) or that it got no response, and its code;
 * `no answer to the last poll` without a `failure`.
 *
 * @example
 * `could not be read (${describePollFailure(failure)})` // 'could not be read (the last failed poll got HTTP 503 server_error)'
 */
export function describePollFailure(failure: TransientPollError | undefined): string {
  if (failure === undefined) return 'no answer to the last poll';
  return `the last failed poll got ${
    failure instanceof ApiError
      ? `HTTP ${failure.status} ${failure.code}`
      : failure instanceof TimeoutError
        ? `no complete response within ${failure.timeoutMs} ms: ${failure.code}`
        : `no response: ${failure.code}`
  }`;
}

/**
 * What {@link pollUntil} polls for, and the errors it ends with.
 *
 * @example
 * const wait: PollWait<DailyLimit> = { poll: (options) => getDailyLimit(context, options), done: (limit) => limit.syncStatus === 'synced', aborted, timedOut };
 */
export interface PollWait<T> {
  /**
   * One poll, sent with `options`: a signal that ends it (its retries included) at the deadline
   * or on the caller's signal; for the last poll, made once the deadline has come, the caller's
   * signal and `retries: 0` (one attempt, within the client's request timeout).
   */
  poll: (options: RequestOptions) => Promise<T>;
  /** Whether the wait is over with `value` (it may also throw, to end the wait with an error). */
  done: (value: T) => boolean;
  /** The error when the caller's signal aborts (an `AbortError`). */
  aborted: () => Error;
  /**
   * The error at the deadline (`timeoutMs`): `last` is what the last poll read, `undefined` when
   * it had no answer; `failure` is the transient error of the last poll that failed when no poll
   * has answered since (the poll at the deadline, or the one before a poll the deadline stopped),
   * else `undefined`. Give it as the error's `cause`.
   */
  timedOut: (last: T | undefined, timeoutMs: number, failure: TransientPollError | undefined) => Error;
  /**
   * The session the wait was begun in (see {@link sessionWatch}): once `clear()` or new tokens
   * end it, the wait stops with `overtaken()`, before its next poll and on the answer of a poll
   * in flight. Absent: the wait outlives sessions.
   */
  session?: SessionWatch | undefined;
}

/** Whether a wait's session is still the current one, and the error to stop with once it is not. */
export interface SessionWatch {
  readonly current: () => boolean;
  readonly overtaken: () => Promise<Error>;
}

/**
 * The session `tokenManager` is in now, for a wait named `what` to watch; `undefined` for an
 * object that is not a TokenManager of this copy of the package (it has no sessions to watch).
 */
export function sessionWatch(tokenManager: unknown, what: string): SessionWatch | undefined {
  if (typeof tokenManager !== 'object' || tokenManager === null) return undefined;
  const manager = tokenManager as TokenManager;
  const session = sessionOf(manager);
  if (session === undefined) return undefined;
  return { current: () => sessionOf(manager) === session, overtaken: async () => (await renewalErrors()).waitOvertaken(what) };
}

/**
 * The polling wait of `waitForLimitSync` and `waitForOnboardingStatus`: polls until `done`,
 * waiting `pollIntervalMs` and then half as long again each time (at most `maxPollIntervalMs`).
 * The whole wait, polls included, is bounded by `timeoutMs`: a poll still in flight or being
 * retried at the deadline is stopped (then `timedOut(undefined)`); when the next wait would run
 * past it, it waits only until then and polls one last time, one attempt (so it never gives up
 * before `timeoutMs`): `timedOut(last)` when that poll is not `done`, `timedOut(undefined)` when
 * it has no answer. A poll that fails with a transient error ({@link isTransientPollError}: 5xx,
 * 408, 429, no connection, a request's own timeout), its retries used up, does not end the wait: it
 * polls on, on the same schedule, and at least the error's `retryAfterMs` later when it has one
 * (never past the deadline), and at the deadline `timedOut` gets that error as `failure`. Any
 * other error (401, 404, 409, an unusable answer, an error `done` throws, ...) ends the wait at
 * once. The caller's `signal` ends it with `aborted()`.
 *
 * @example
 * return pollUntil(options, { timeoutMs: 30_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 }, { poll, done, aborted, timedOut });
 */
export async function pollUntil<T>(options: PollOptions, defaults: Required<Omit<PollOptions, 'signal'>>, wait: PollWait<T>): Promise<T> {
  const { timeoutMs, pollIntervalMs, maxPollIntervalMs, signal } = readPollOptions(options, defaults);
  const deadline = Date.now() + timeoutMs;
  // Ends a poll in flight, its retries included, at the deadline, as well as on the caller's
  // signal: a poll's retries would otherwise run past timeoutMs. Armed again until the deadline
  // when it lies beyond what one timer can hold.
  const polls = new AbortController();
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  const armDeadline = () => {
    const left = deadline - Date.now();
    if (left > 0) deadlineTimer = setTimeout(armDeadline, Math.min(left, MAX_TIMER_DELAY_MS));
    else polls.abort();
  };
  if (Number.isFinite(timeoutMs)) armDeadline();
  const forwardAbort = () => polls.abort();
  signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    let interval = pollIntervalMs;
    // The transient error of the last poll that failed, until a poll answers.
    let failure: TransientPollError | undefined;
    for (;;) {
      if (signal?.aborted) throw wait.aborted();
      // A wait for one user must not poll for the next: without a token the poll's 401 would ask
      // the next user (or nobody, after a sign-out) to sign in, and its answer would be theirs.
      if (wait.session !== undefined && !wait.session.current()) throw await wait.session.overtaken();
      // Once the deadline has come, one last poll: one attempt, with the client's request timeout
      // (the deadline has ended `polls`), so that "not yet after timeoutMs" is true.
      const last = Date.now() >= deadline;
      let value: T | undefined;
      let sleepMs = interval;
      try {
        value = await wait.poll(last ? { signal, retries: 0 } : { signal: polls.signal });
        failure = undefined;
      } catch (error) {
        if (signal?.aborted) throw wait.aborted();
        if (wait.session !== undefined && !wait.session.current()) throw await wait.session.overtaken();
        // The deadline ended the poll in flight (its retries included).
        if (!last && polls.signal.aborted) throw wait.timedOut(undefined, timeoutMs, failure);
        // A refusal (401, 404, 409, ...) or an unusable answer: polling again cannot help.
        if (!isTransientPollError(error)) throw error;
        // The service's outage or rate limit (its retries used up): poll on until the deadline,
        // no sooner than its Retry-After (sleepBeforeNextPoll never waits past the deadline).
        failure = error;
        sleepMs = Math.max(interval, (error instanceof ApiErrorWithRetryAfter && error.retryAfterMs) || 0);
      }
      // A poll sent in the session that ended meanwhile: its answer is no longer the current user's.
      if (wait.session !== undefined && !wait.session.current()) throw await wait.session.overtaken();
      if (failure === undefined && wait.done(value as T)) return value as T;
      if (last) throw wait.timedOut(value, timeoutMs, failure);
      await sleepBeforeNextPoll(sleepMs, deadline, signal, wait.aborted);
      interval = Math.min(maxPollIntervalMs, Math.round(interval * 1.5));
    }
  } finally {
    clearTimeout(deadlineTimer);
    signal?.removeEventListener('abort', forwardAbort);
  }
}
