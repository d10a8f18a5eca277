/**
 * The longest delay `setTimeout` honours: a longer one (about 24.8 days) fires after 1 ms in
 * Node and browsers alike, so a huge timeout or wait would end at once instead of never.
 *
 * @example
 * setTimeout(done, Math.min(ms, MAX_TIMER_DELAY_MS));
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
