import { getDailyLimit, type DailyLimit, type DailyLimitContext, type WaitForLimitSyncOptions } from './daily-limit.js';
import { AbortError, TimeoutError } from './errors.js';
import { readPollOptions, sleepBeforeNextPoll } from './poll-options.js';
import { MAX_TIMER_DELAY_MS } from './timer-delay.js';

// A chunk of its own, loaded on the first waitForLimitSync, to keep the main entry in budget.

/**
 * Polls the limit, waiting longer each time, until its `syncStatus` is `synced`. A status other
 * than `pending` or `synced` ends the wait at once with the `UnexpectedResponseError`
 * (`unexpected_limit_body`) of `getDailyLimit`, which names it.
 *
 * @example
 * await setDailyLimit(context, { amount: 50_000 });
 * const limit = await waitForLimitSync(context, { timeoutMs: 60_000 });
 */
export async function waitForLimitSync(context: DailyLimitContext, options: WaitForLimitSyncOptions = {}): Promise<DailyLimit> {
  const { timeoutMs, pollIntervalMs, maxPollIntervalMs, signal } = readPollOptions(options, { timeoutMs: 30_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 });
  const deadline = Date.now() + timeoutMs;
  const abort = () => new AbortError('waitForLimitSync was cancelled by the caller\'s AbortSignal.', { code: 'aborted' });
  const giveUp = (reason = 'was still pending') =>
    new TimeoutError(
      `The daily limit ${reason} after ${timeoutMs} ms. The change is applied downstream asynchronously: wait longer (timeoutMs) or check again later.`,
      { code: 'limit_sync_timeout', timeoutMs },
    );
  // Ends a poll in flight, its retries included, at the deadline, as well as on the caller's
  // signal: a poll's retries would otherwise run past timeoutMs.
  const polls = new AbortController();
  const deadlineTimer = Number.isFinite(timeoutMs) ? setTimeout(() => polls.abort(), Math.min(timeoutMs, MAX_TIMER_DELAY_MS)) : undefined;
  const forwardAbort = () => polls.abort();
  signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    let interval = pollIntervalMs;
    for (;;) {
      if (signal?.aborted) throw abort();
      // Once the deadline has come, one last poll: one attempt, with the client's request timeout
      // (the deadline has ended `polls`), so that "still pending after timeoutMs" is true.
      const remaining = deadline - Date.now();
      const last = remaining <= 0;
      let limit: DailyLimit;
      try {
        limit = await getDailyLimit(context, last
          ? { signal, timeoutMs: context.requestTimeoutMs, retries: 0 }
          : { signal: polls.signal, timeoutMs: Math.min(context.requestTimeoutMs, remaining) });
      } catch (error) {
        if (signal?.aborted) throw abort();
        // The deadline ended the poll (its timer), or the poll's own timeout, set to what was left, ran out.
        if ((!last && polls.signal.aborted) || (error instanceof TimeoutError && Date.now() >= deadline)) throw giveUp('could not be read (no answer to the last poll)');
        throw error;
      }
      if (limit.syncStatus === 'synced') return limit;
      if (last) throw giveUp();
      await sleepBeforeNextPoll(interval, deadline, signal, abort);
      interval = Math.min(maxPollIntervalMs, Math.round(interval * 1.5));
    }
  } finally {
    if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
    signal?.removeEventListener('abort', forwardAbort);
  }
}

