/**
 * The service's maximum daily limit, in cents (10,000 USD), unless another (higher or lower) was agreed at onboarding.
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
 * Whether `amount` is a whole number of cents in 1..`maxCents` and `currency` is `USD`; the
 * service would refuse anything else. When not, `dailyLimitInputError` (limit-errors.ts, a
 * lazily loaded chunk) says which and how.
 *
 * @example
 * isDailyLimitInput({ amount: 50_000, currency: 'USD' }, 1_000_000) // true: 500 USD
 */
export function isDailyLimitInput(input: { amount: unknown; currency: unknown }, maxCents: number): boolean {
  const { amount } = input;
  // Number.isInteger is false for anything but a number.
  return Number.isInteger(amount) && (amount as number) > 0 && (amount as number) <= maxCents && input.currency === DAILY_LIMIT_CURRENCY;
}
