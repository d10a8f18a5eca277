/**
 * A refused value as an error message shows it: strings quoted, so that `"100"` (say, from an
 * environment variable) does not read as if the number 100 had been refused.
 *
 * @example
 * describeValue('100') // '"100"'
 * describeValue(-1) // '-1'
 */
export function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
