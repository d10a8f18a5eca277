// Guards that run before and after JSON.parse, so that a hostile body (huge, deeply nested,
// or carrying prototype keys) is turned into an error result instead of a crash or a
// polluted object further down the receiver.

/** Exact UTF-8 length of `text`, counted without encoding it. */
export function utf8ByteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // the pair is 2 UTF-16 units and 4 UTF-8 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * Whether the JSON text nests objects/arrays deeper than `maxDepth`, found with one linear
 * scan (brackets inside strings do not count). Malformed text is left to JSON.parse.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}

// Cheap test on the text first (as secure-json-parse does), so that the walk over the parsed
// value only happens for the rare body that may contain such a key, escaped or not.
const MAYBE_FORBIDDEN = /__proto__|constructor|prototype|\\u00[0-7]/;

/**
 * The JSON Pointer of the first `__proto__` key, or `constructor` key holding a `prototype`,
 * in the parsed value, or undefined. Such keys never come from the service and are the
 * vehicle of prototype-pollution attacks on code that merges the event into other objects.
 */
export function findForbiddenKey(text: string, value: unknown): string | undefined {
  return MAYBE_FORBIDDEN.test(text) ? findIn(value, '') : undefined;
}

function findIn(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const child: unknown = (value as Record<string, unknown>)[key];
    const childPath = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (key === '__proto__') return childPath;
    if (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype')) return childPath;
    const found = findIn(child, childPath);
    if (found !== undefined) return found;
  }
  return undefined;
}
