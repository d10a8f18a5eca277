import { abortableSleep } from './abortable-sleep.js';
import { describeValue } from './describe-value.js';
import { InvalidArgumentError, TimeoutError } from './errors.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { assertSignalOption } from './signal-option.js';
import { MAX_TIMER_DELAY_MS } from './timer-delay.js';
import type { RequestOptions } from './transport.js';

/**
 * The options every polling wait of the client takes.
 *
 * @example
 * const options: PollOptions = { timeoutMs: 60_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 };
 */
export interface PollOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
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
  /** The error at the deadline (`timeoutMs`): `last` is what the last poll read, `undefined` when it had no answer. */
  timedOut: (last: T | undefined, timeoutMs: number) => Error;
}

/**
 * The polling wait of `waitForLimitSync` and `waitForOnboardingStatus`: polls until `done`,
 * waiting `pollIntervalMs` and then half as long again each time (at most `maxPollIntervalMs`).
 * The whole wait, polls included, is bounded by `timeoutMs`: a poll still in flight or being
 * retried at the deadline is stopped (then `timedOut(undefined)`); when the next wait would run
 * past it, it waits only until then and polls one last time, one attempt (so it never gives up
 * before `timeoutMs`): `timedOut(last)` when that poll is not `done`, `timedOut(undefined)` when
 * it times out. The caller's `signal` ends it with `aborted()`.
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
    for (;;) {
      if (signal?.aborted) throw wait.aborted();
      // Once the deadline has come, one last poll: one attempt, with the client's request timeout
      // (the deadline has ended `polls`), so that "not yet after timeoutMs" is true.
      const last = Date.now() >= deadline;
      let value: T;
      try {
        value = await wait.poll(last ? { signal, retries: 0 } : { signal: polls.signal });
      } catch (error) {
        if (signal?.aborted) throw wait.aborted();
        // The deadline ended the poll, or the last poll's one attempt ran out of time.
        if ((!last && polls.signal.aborted) || (last && error instanceof TimeoutError)) throw wait.timedOut(undefined, timeoutMs);
        throw error;
      }
      if (wait.done(value)) return value;
      if (last) throw wait.timedOut(value, timeoutMs);
      await sleepBeforeNextPoll(interval, deadline, signal, wait.aborted);
      interval = Math.min(maxPollIntervalMs, Math.round(interval * 1.5));
    }
  } finally {
    clearTimeout(deadlineTimer);
    signal?.removeEventListener('abort', forwardAbort);
  }
}
