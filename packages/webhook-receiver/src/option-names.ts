import { WebhookReceiverError } from './errors.js';

/**
 * Throws `invalid_options` for a name in `options` that `factory` does not take, naming the
 * nearest one it does: JavaScript has no type check, and a misspelt option (`minRetryDelay`
 * for `minRetryDelayMs`) would otherwise silently keep its default.
 *
 * @example
 * assertOptionNames('createMemoryDedupeStore', options, OPTION_NAMES);
 */
export function assertOptionNames(factory: string, options: object, names: readonly string[]): void {
  for (const name of Object.keys(options)) {
    if (names.includes(name)) continue;
    const near = names.find((known) => editDistance(name.toLowerCase(), known.toLowerCase()) <= 2);
    throw new WebhookReceiverError('invalid_options',
      `${factory} has no option ${JSON.stringify(name)}${near === undefined ? '.' : `; did you mean ${near}?`} Its options: ${names.join(', ')}.`);
  }
}

/**
 * The names of an options interface, as an object whose type lists every one of them: the
 * compiler refuses a list that misses a name the interface has.
 *
 * @example
 * const NAMES = optionNames<MemoryDeadLetterStoreOptions>({ maxEntries: true });
 */
export function optionNames<Options>(names: { readonly [Name in keyof Required<Options>]: true }): readonly string[] {
  return Object.keys(names);
}

/** Levenshtein distance, for the "did you mean" of a misspelt option (short strings only). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
