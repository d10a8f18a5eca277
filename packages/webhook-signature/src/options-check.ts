// The option checks every entry point shares, so that each misuse reads the same everywhere.

/** Rejects a call made without its one options object, naming the fields it takes. */
export function requireOptionsObject(options: unknown, fields: string): void {
  if (typeof options !== 'object' || !options) throw new TypeError(`Pass one options object: { ${fields} }.`);
}

/**
 * An optional number >= 0, or > 0 when zero would make no sense (`fallback` when absent), or a
 * TypeError naming the option; its name carries the unit. A string is quoted in the message,
 * so that "300" reads as the string it was.
 */
export function numberOption(value: unknown, fallback: number, name: string, zeroAllowed = true): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && (zeroAllowed ? value >= 0 : value > 0)) return value;
  throw new TypeError(`${name} must be a number ${zeroAllowed ? '>=' : '>'} 0; got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}.`);
}
