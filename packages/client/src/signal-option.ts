import { describeValue } from './describe-value.js';
import { InvalidArgumentError } from './errors.js';

/**
 * Throws unless `value` is an AbortSignal (or absent: `undefined` or `null`, as fetch accepts).
 * Checked by shape, so that a signal from another realm (an iframe, a test DOM) is accepted.
 *
 * @example
 * assertSignalOption(options.signal, 'signal');
 */
export function assertSignalOption(value: unknown, argument: string): asserts value is AbortSignal | null | undefined {
  if (value === undefined || value === null) return;
  const signal = value as Partial<AbortSignal>;
  if (typeof value !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function') {
    throw new InvalidArgumentError(
      argument,
      `${argument} must be an AbortSignal (such as controller.signal), got ${describeValue(value)}.`,
      'invalid_option',
    );
  }
}
