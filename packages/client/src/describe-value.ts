/**
 * A refused value as an error message shows it: strings quoted, so that `"100"` (say, from an
 * environment variable) does not read as if the number 100 had been refused.
 *
 * @example
 * describeValue('100') // '"100"'
 * describeValue(-1) // '-1'
 * describeValue({}) // 'another object'
 */
export function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : value !== null && typeof value === 'object' ? 'another object' : String(value);
}

/**
 * The start of an unusable answer body for an error message: its JSON, cut at `maxLength`.
 * A body nested too deeply to stringify (a hostile service) is named as such instead of
 * throwing a RangeError in place of the error being built.
 *
 * @example
 * previewBody({ amount: '5' }) // '{"amount":"5"}'
 */
export function previewBody(value: unknown, maxLength = 120): string {
  try {
    return String(JSON.stringify(value)?.slice(0, maxLength));
  } catch {
    return 'a JSON value nested too deeply to show';
  }
}
