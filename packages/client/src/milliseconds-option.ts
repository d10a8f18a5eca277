import { describeValue } from './describe-value.js';
import { InvalidArgumentError } from './errors.js';

/**
 * Throws unless `value` is a duration in milliseconds: a number > 0 (`Infinity` allowed when
 * `allowInfinity`), or >= 0 when `allowZero`.
 *
 * @example
 * assertMilliseconds(30_000, 'timeoutMs');
 */
export function assertMilliseconds(value: unknown, argument: string, { allowZero = false, allowInfinity = false } = {}): asserts value is number {
  // NaN fails either comparison.
  const valid =
    typeof value === 'number' &&
    (allowZero ? value >= 0 : value > 0) &&
    (allowInfinity || Number.isFinite(value));
  if (!valid) {
    throw new InvalidArgumentError(
      argument,
      `${argument} must be a number of milliseconds ${allowZero ? '>= 0' : '> 0'}${allowInfinity ? ' (or Infinity for none)' : ''}, got ${describeValue(value)}.`,
      'invalid_option',
    );
  }
}
