// Access and refresh tokens are bearer credentials: anyone who reads one from a log can act as
// the user. Everything this package puts into an error message or an error's JSON goes
// through here first, so that a service echoing a token back cannot leak it either.

// A JWT starts where a run of base64url characters starts, never inside one: with `\b`, every
// "eyJ" after a "-" was a start, and a body of "eyJ-eyJ-..." took quadratic time (minutes for
// a megabyte of a hostile error body). Here each character is scanned a bounded number of times.
const JWT_PATTERN = /(^|[^A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
// Skips a credential already redacted: messages pass through here twice (the error body, then
// the error's message built from it), and "Bearer [redacted token]" must survive unchanged.
const BEARER_PATTERN = /\b(Bearer\s+)(?!\[redacted token\](?:[\s"',;]|$))[^\s"',;]+/gi;
const REDACTED = '[redacted token]';
const MAX_DEPTH = 32;
const TOO_DEEP = '[nested too deep]';

/**
 * Replaces anything that looks like a JWT or a bearer credential in `text`.
 *
 * @example
 * redactTokens('Bearer eyJhbGciOi.eyJzdWIi.sig expired') // 'Bearer [redacted token] expired'
 */
export function redactTokens(text: string): string {
  return text.replace(JWT_PATTERN, `$1${REDACTED}`).replace(BEARER_PATTERN, `$1${REDACTED}`);
}

/**
 * Returns a copy of a parsed JSON value with every string passed through {@link redactTokens};
 * objects and arrays nested more than 32 levels deep are replaced by `"[nested too deep]"`.
 *
 * @example
 * redactTokensDeep({ error: 'bad token eyJa.eyJb.c' }) // { error: 'bad token [redacted token]' }
 */
export function redactTokensDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactTokens(value);
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any error body the service sends: replaced, so that no string below stays
  // unredacted and the error's body can still be logged as JSON.
  if (depth >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => redactTokensDeep(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // Own keys only: a body such as {"__proto__": ...} must not change the copy's prototype.
    Object.defineProperty(copy, key, { value: redactTokensDeep(item, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
