// The option checks every entry point shares, so that each misuse reads the same everywhere.

/** Rejects a call made without its one options object, naming the fields it takes. */
export function requireOptionsObject(options: unknown, fields: string): void {
  if (typeof options !== 'object' || !options) throw new TypeError(`Pass one options object: { ${fields} }.`);
}

/** An optional number >= 0 (`fallback` when absent), or a TypeError naming the option; its name carries the unit. */
export function nonNegativeOption(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && value >= 0) return value;
  throw new TypeError(`${name} must be a number >= 0; got ${String(value)}.`);
}
