import { InvalidArgumentError } from './errors.js';

/**
 * The service's maximum daily limit, in cents (10,000 USD), unless a higher one was agreed.
 *
 * @example
 * DEFAULT_MAX_DAILY_LIMIT_CENTS // 1000000
 */
export const DEFAULT_MAX_DAILY_LIMIT_CENTS = 1_000_000;

/**
 * The only currency the limit can be set in.
 *
 * @example
 * DAILY_LIMIT_CURRENCY // 'USD'
 */
export const DAILY_LIMIT_CURRENCY = 'USD';

/**
 * Throws an {@link InvalidArgumentError} unless `amount` is a whole number of cents in
 * 1..`maxCents` and `currency` is `USD`; the service would refuse anything else.
 *
 * @example
 * assertDailyLimitInput({ amount: 50_000, currency: 'USD' }, 1_000_000); // ok: 500 USD
 */
export function assertDailyLimitInput(input: { amount: unknown; currency: unknown }, maxCents: number): void {
  const { amount, currency } = input;
  if (typeof amount !== 'number' || !Number.isInteger(amount)) {
    throw new InvalidArgumentError(
      'amount',
      `amount must be a whole number of cents (500 USD is 50000), got ${typeof amount === 'string' ? JSON.stringify(amount) : String(amount)}.`,
      'amount_not_integer',
    );
  }
  if (amount <= 0 || amount > maxCents) {
    throw new InvalidArgumentError(
      'amount',
      `amount must be more than 0 and at most ${maxCents} cents (${formatUsd(maxCents)}), got ${amount}. A higher maximum must be agreed at onboarding and then set with the maxDailyLimitCents option.`,
      'amount_out_of_range',
    );
  }
  if (currency !== DAILY_LIMIT_CURRENCY) {
    throw new InvalidArgumentError('currency', `currency must be "USD", the only currency the daily limit accepts, got ${JSON.stringify(currency)}.`, 'currency_not_supported');
  }
}

function formatUsd(cents: number): string {
  return `${(cents / 100).toLocaleString('en-US')} USD`;
}
