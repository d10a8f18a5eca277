import { abortableSleep } from './abortable-sleep.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { assertSignalOption } from './signal-option.js';

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
