import { describeValue } from './describe-value.js';
import { InvalidArgumentError } from './errors.js';

/**
 * How failed requests are retried.
 *
 * @example
 * createPartnerClient({ baseUrl, retries: { count: 3, baseDelayMs: 250, maxDelayMs: 4_000, maxRetryAfterMs: 30_000 } });
 */
export interface RetryPolicy {
  /** Retries after the first attempt, for idempotent requests (GET, HEAD, OPTIONS). Default 2. */
  count: number;
  /** First backoff delay; it doubles on each retry, with jitter. Default 500 ms. */
  baseDelayMs: number;
  /** Upper bound of a backoff delay. Default 8 000 ms. */
  maxDelayMs: number;
  /**
   * The longest `Retry-After` the client waits out by itself. A longer one ends the retries
   * and the `RateLimitError`/`ServerError` carries it. Default 60 000 ms.
   */
  maxRetryAfterMs: number;
}

/**
 * The `retries` option: a count, or a partial {@link RetryPolicy}.
 *
 * @example
 * const retries: RetriesOption = { count: 3 };
 */
export type RetriesOption = number | Partial<RetryPolicy>;

const DEFAULT_RETRY_POLICY: RetryPolicy = { count: 2, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Reads the `retries` option into a full policy, rejecting nonsense values.
 *
 * @example
 * resolveRetryPolicy(3) // { count: 3, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60000 }
 */
export function resolveRetryPolicy(option: RetriesOption | undefined): RetryPolicy {
  // Spreading anything else (a string from an environment variable, an array) would silently
  // keep the defaults.
  if (option !== undefined && typeof option !== 'number' && (typeof option !== 'object' || option === null || Array.isArray(option))) {
    throw new InvalidArgumentError(
      'retries',
      `retries must be a number of retries or { count, baseDelayMs, maxDelayMs, maxRetryAfterMs }, got ${Array.isArray(option) ? JSON.stringify(option) : describeValue(option)}`,
      'invalid_option',
    );
  }
  const policy = typeof option === 'number' ? { ...DEFAULT_RETRY_POLICY, count: option } : { ...DEFAULT_RETRY_POLICY, ...option };
  assertRetryCount(policy.count, 'retries');
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    if (typeof policy[key] !== 'number' || !(policy[key] >= 0)) {
      throw new InvalidArgumentError(`retries.${key}`, `retries.${key} must be a number of milliseconds >= 0, got ${describeValue(policy[key])}`, 'invalid_option');
    }
  }
  return policy;
}

/**
 * Throws unless `count` is a whole number of retries >= 0.
 *
 * @example
 * assertRetryCount(2, 'retries');
 */
export function assertRetryCount(count: unknown, argument: string): asserts count is number {
  // Number.isInteger is false for anything but a number.
  if (!Number.isInteger(count) || (count as number) < 0) {
    throw new InvalidArgumentError(argument, `${argument} must be a whole number of retries >= 0, got ${describeValue(count)}`, 'invalid_option');
  }
}

/**
 * The delay before retry number `retry` (0 for the first): exponential, capped, with "equal
 * jitter" (between half and all of the exponential value) so that clients do not retry in step.
 *
 * @example
 * backoffDelay(0, policy) // between 250 and 500 with the default policy
 */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(exponential / 2 + (exponential / 2) * random());
}

/**
 * Whether a response status is worth retrying (408, 429, 500, 502, 503, 504).
 *
 * @example
 * isRetryableStatus(503) // true
 */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * Whether a method is retried by default. PUT and POST are retried only when the caller asks.
 *
 * @example
 * isRetriedByDefault('PUT') // false
 */
export function isRetriedByDefault(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method.toUpperCase());
}
