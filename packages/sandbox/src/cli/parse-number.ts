import { CliUsageError } from './cli-usage-error.js';

/** Reads a numeric flag value, refusing anything that is not a plain finite number. */
export function parseNumberFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number)) throw new CliUsageError(`--${flag} must be a number; got "${value}".`);
  return number;
}
