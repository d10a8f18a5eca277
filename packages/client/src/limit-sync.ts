import { getDailyLimit, type DailyLimit, type DailyLimitContext, type WaitForLimitSyncOptions } from './daily-limit.js';
import { describeValue } from './describe-value.js';
import { AbortError, InvalidArgumentError, LimitSupersededError, TimeoutError } from './errors.js';
import { describePollFailure, pollUntil, sessionWatch } from './poll-options.js';

// A chunk of its own, loaded on the first waitForLimitSync, to keep the main entry in budget.

/**
 * Polls the limit, waiting longer each time, until its `syncStatus` is `synced` (with `amount`:
 * until that amount is the one synced). A status other than `pending` or `synced` ends the wait
 * at once with the `UnexpectedResponseError` (`unexpected_limit_body`) of `getDailyLimit`, which
 * names it; with `amount`, another amount synced ends it with `LimitSupersededError`. A poll
 * that fails for a while (5xx, 408, 429, no connection, a request's own timeout), its retries used up,
 * does not end the wait: it polls on until `timeoutMs`, whose `TimeoutError` then has the last
 * such error as `cause`; any other error (401, 404, ...) ends it at once. With `amount`, the
 * timeout's message says that the change was accepted and is applied downstream.
 *
 * @example
 * const { amount } = await setDailyLimit(context, { amount: 50_000 });
 * const limit = await waitForLimitSync(context, { amount, timeoutMs: 60_000 });
 */
export async function waitForLimitSync(context: DailyLimitContext, options: WaitForLimitSyncOptions = {}): Promise<DailyLimit> {
  // waitForLimitSync(25000): a timeout given as a number.
  if (typeof options === 'number') {
    throw new InvalidArgumentError('options', `waitForLimitSync's options must be an object such as { timeoutMs, signal }, or left out: to wait up to ${options} ms, pass { timeoutMs: ${options} }, and add amount (what setDailyLimit answered) to wait for your own change: { amount, timeoutMs: ${options} }; got ${options}.`, 'invalid_option');
  }
  const expected = options?.amount;
  if (expected !== undefined && !Number.isInteger(expected)) {
    throw new InvalidArgumentError('amount', `amount must be the whole number of cents this caller set (what setDailyLimit answered), or left out to wait for any change; got ${expected !== null && typeof expected === 'object' ? `a ${Object.prototype.toString.call(expected).slice(8, -1)} object` : describeValue(expected)}.`, 'invalid_option');
  }
  return pollUntil(options, { timeoutMs: 30_000, pollIntervalMs: 500, maxPollIntervalMs: 5_000 }, {
    session: sessionWatch(context.tokenManager, 'waitForLimitSync'),
    poll: (callOptions) => getDailyLimit(context, callOptions),
    done: (limit) => {
      if (limit.syncStatus !== 'synced') return false;
      if (expected === undefined || limit.amount === expected) return true;
      const superseded = new LimitSupersededError(
        `The daily limit synced is ${limit.amount} cents, not the ${expected} cents this wait was for: another change (another tab, process or device of the user) replaced it after yours. The limit in force is ${limit.amount} cents (error.limit): show that, and set ${expected} again only if the user still wants it.`,
        { code: 'limit_superseded' },
      );
      throw Object.assign(superseded, { limit });
    },
    aborted: () => new AbortError('waitForLimitSync was cancelled by the caller\'s AbortSignal.', { code: 'aborted' }),
    timedOut: (limit, timeoutMs, failure) => {
      const reason =
        limit === undefined
          ? `could not be read (${describePollFailure(failure)})`
          : expected !== undefined && limit.amount !== expected
            ? `was ${limit.amount} cents, not the ${expected} cents this wait was for, and still pending (another tab, process or device of the user changed it after yours)`
            : 'was still pending';
      // amount is what setDailyLimit answered: the service accepted that change.
      return new TimeoutError(
        expected === undefined
          ? `The daily limit ${reason} after ${timeoutMs} ms. The change is applied downstream asynchronously: wait longer (timeoutMs) or check again later.`
          : `Your change to ${expected} cents was accepted (setDailyLimit answered) and is applied downstream asynchronously, but the daily limit ${reason} after ${timeoutMs} ms: wait longer (timeoutMs) or check again later with getDailyLimit().`,
        { code: 'limit_sync_timeout', timeoutMs, cause: failure },
      );
    },
  });
}
