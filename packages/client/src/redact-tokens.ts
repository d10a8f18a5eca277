// Access and refresh tokens are bearer credentials: anyone who reads one from a log can act as
// the user. Everything this package puts into an error message or an error's JSON goes
// through here first, so that a service echoing a token back cannot leak it either.

// A JWT is found inside a run of base64url characters and dots: split at the dots, any segment
// holding "eyJ" (from there on) followed by two more segments is one. This catches a JWT after
// "-" ("x-eyJ...") or a percent escape ("Bearer%20eyJ...") and stays linear: the former regex
// started only where a run started (`\b` at every "eyJ" after "-" was quadratic: minutes for a
// megabyte of "eyJ-eyJ-..."); here each character is looked at a bounded number of times.
const RUN_PATTERN = /[\w.-]+/g;
// Skips a credential already redacted (messages pass through here twice: the error body, then
// the error's message built from it, and "Bearer [redacted token]" must survive unchanged) and
// an obvious placeholder, as in a hint such as 'send "Authorization: Bearer <token>"': a name in
// <...>, {...}, {{...}} or ${...}, an upper-case name such as ACCESS_TOKEN (parts of at most 12
// letters, no digits) or the word "token". No credential looks like that; and the tokens the
// process holds are redacted before this, whatever they look like. (Case-insensitive "Bearer"
// spelled out, so that the placeholders' case counts.)
const BEARER_PATTERN = /\b([Bb][Ee][Aa][Rr][Ee][Rr](?:\s+|%(?:25)?20|\+))(?!(?:<?\[redacted token\]>?|<[A-Za-z_ -]{1,40}>|\$?\{\{?[A-Za-z_ -]{1,40}\}\}?|[A-Z]{2,12}(?:_[A-Z]{2,12}){0,3}|token)(?:[\s"',;.)]|$))[^\s"',;]+/g;
const REDACTED = '[redacted token]';
const MAX_DEPTH = 32;
const TOO_DEEP = '[nested too deep]';

// The token strings clients in this process hold (access and refresh tokens, the latest few),
// each with the forms it may be echoed in: raw, percent-encoded once or twice, base64 and
// base64url, and a JWT's payload and signature alone (forms shorter than 16 are not secret).
const held = new Map<string, string[]>();
let heldForms: string[] = [];

/**
 * Redacts `token` from every error built from now on, in any of its usual encodings; called by
 * the TokenManager for each token it is given. The latest 16 tokens are kept.
 *
 * @example
 * holdToken(refreshToken);
 */
export function holdToken(token: string | undefined): void {
  if (!token) return;
  held.delete(token);
  const once = encodeURIComponent(token);
  let base64 = '';
  try {
    base64 = btoa(token);
  } catch {
    // Not Latin-1: no base64 form to look for.
  }
  const base64url = base64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  held.set(token, [token, once, encodeURIComponent(once), base64, base64url, ...token.split('.').slice(1)].filter((form) => form.length > 15));
  if (held.size > 16) held.delete(held.keys().next().value!);
  // Longest first across all tokens, so that a part (two tokens of one second may share their
  // payload) never breaks up a whole.
  heldForms = [...held.values()].flat().sort((one, other) => other.length - one.length);
}

/**
 * Replaces the tokens this process holds (see {@link holdToken}) and anything that looks like
 * a JWT or a bearer credential in `text`.
 *
 * @example
 * redactTokens('Bearer eyJhbGciOi.eyJzdWIi.sig expired') // 'Bearer [redacted token] expired'
 */
export function redactTokens(text: string): string {
  for (const form of heldForms) text = text.split(form).join(REDACTED);
  return text.replace(RUN_PATTERN, redactJwts).replace(BEARER_PATTERN, `$1${REDACTED}`);
}

function redactJwts(run: string): string {
  if (!run.includes('eyJ')) return run;
  const segments = run.split('.');
  const kept: string[] = [];
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index]!;
    const start = index + 2 < segments.length && segments[index + 1] ? segment.indexOf('eyJ') : -1;
    if (start < 0) {
      kept.push(segment);
    } else {
      kept.push(segment.slice(0, start) + REDACTED);
      index += 2;
    }
  }
  return kept.join('.');
}

/**
 * Returns a copy of a parsed JSON value with every string, object keys included, passed through {@link redactTokens};
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
  // Own keys only, defined rather than assigned (Object.fromEntries): a body such as
  // {"__proto__": ...} must not change the copy's prototype. Keys too: a body such as
  // {"errors": {"<the token>": "invalid"}} names the token as a key. Only keys longer than 15
  // characters can hold a credential; two redacted alike are numbered rather than merged.
  const entries: Array<[string, unknown]> = [];
  const keys = new Set<string>();
  for (const [key, item] of Object.entries(value)) {
    let safe = key.length > 15 ? redactTokens(key) : key;
    for (let count = 2; keys.has(safe); count++) safe = `${redactTokens(key)} #${count}`;
    keys.add(safe);
    entries.push([safe, redactTokensDeep(item, depth + 1)]);
  }
  return Object.fromEntries(entries);
}
