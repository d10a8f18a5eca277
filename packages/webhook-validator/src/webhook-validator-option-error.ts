/**
 * Thrown when an option has an impossible value: a programming error, never bad input
 * (bad bodies always give a result, never an exception).
 *
 * @example
 * try { parseWebhookEvent(body, { maxBytes: -1 }); }
 * catch (error) { if (error instanceof WebhookValidatorOptionError) console.error(error.option, error.message); }
 */
export class WebhookValidatorOptionError extends TypeError {
  /** Machine-readable code of this failure family. */
  readonly code = 'invalid_option';
  /** The name of the offending option. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.name = 'WebhookValidatorOptionError';
    this.option = option;
  }
}

/** Throws unless `options` is an object (or undefined): `null`, `true` or a string is a programming error. */
export function assertOptionsObject(options: unknown): void {
  if (options === undefined || (typeof options === 'object' && options !== null && !Array.isArray(options))) return;
  const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
  throw new WebhookValidatorOptionError('options', `options must be an object such as { strict: true } or left out (got ${got})`);
}
