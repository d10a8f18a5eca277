/**
 * Thrown when an option has an impossible value or a name the function does not take (a
 * misspelt `stict` would otherwise keep its default): a programming error, never bad input
 * (bad bodies always give a result, never an exception).
 *
 * @example
 * try { parseWebhookEvent(body, { maxBytes: -1 }); }
 * catch (error) { if (error instanceof WebhookValidatorOptionError) console.error(error.option, error.message); }
 */
export class WebhookValidatorOptionError extends TypeError {
  /** Machine-readable code of this failure family. */
  readonly code = 'invalid_option';
  /** The name of the offending option (`'options'` when they are not an object). */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.name = 'WebhookValidatorOptionError';
    this.option = option;
  }
}

/**
 * Throws unless `options` is an object (or undefined) whose names are all in `names`: `null`,
 * `true` or a string is a programming error, and so is a misspelt name (`stict`), which would
 * otherwise silently keep its default.
 */
export function assertOptions(options: unknown, names: readonly string[], fn: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
    throw new WebhookValidatorOptionError('options', `options must be an object such as { strict: true } or left out (got ${got})`);
  }
  for (const name in options) {
    if (!names.includes(name)) {
      throw new WebhookValidatorOptionError(name, `${fn} has no option ${JSON.stringify(name)}. Its options: ${names.join(', ')}.`);
    }
  }
}
