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
 * Whether the JSON text nests objects/arrays deeper than `maxDepth` (brackets inside strings
 * do not count), measured on the text. Malformed text is left to JSON.parse. A linear walk in
 * JavaScript over every string of the body: `parseWebhookEvent` only runs it on a body that
 * JSON.parse refused, and measures a parsed one with {@link valueNestsDeeperThan}.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  return hasMoreOpeningBracketsThan(text, maxDepth) && nestingExceeds(text, maxDepth);
}

/**
 * Fast path: the nesting depth is at most the number of `{` and `[` in the text, and a
 * webhook event has a dozen or so, so counting them with the native indexOf (stopping at
 * `maxDepth`) settles almost every body without looking at each character.
 */
export function hasMoreOpeningBracketsThan(text: string, maxDepth: number): boolean {
  let count = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > maxDepth) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > maxDepth) return true;
  return false;
}

/**
 * Whether a parsed JSON value nests objects/arrays deeper than `maxDepth`. It visits the objects
 * and arrays only, never the characters of the strings, and allocates nothing: on a 1 MB body
 * with thousands of cards, about 0.2 ms, against about 2 ms for a walk of the text. The walk
 * recurses at most `maxDepth` calls deep (it stops one level past it), so up to
 * {@link RECURSIVE_DEPTH_LIMIT}; a larger `maxDepth` is measured with an explicit stack, so that
 * a deep value cannot overflow the call stack.
 */
export function valueNestsDeeperThan(root: unknown, maxDepth: number): boolean {
  if (typeof root !== 'object' || root === null) return false;
  return maxDepth <= RECURSIVE_DEPTH_LIMIT ? nestsBelow(root, maxDepth) : valueNestsDeeperThanIteratively(root, maxDepth);
}

/** Deepest `maxDepth` measured by recursion: far below any engine's call-stack limit. */
const RECURSIVE_DEPTH_LIMIT = 1_000;

/** Whether `node` holds objects or arrays more than `levelsLeft` levels below itself, counting itself. */
function nestsBelow(node: object, levelsLeft: number): boolean {
  if (levelsLeft === 0) return true;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (typeof child === 'object' && child !== null && nestsBelow(child, levelsLeft - 1)) return true;
    }
    return false;
  }
  // JSON.parse makes plain objects, so for-in sees their own keys only (an own "__proto__" key included).
  for (const key in node) {
    const child: unknown = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && nestsBelow(child, levelsLeft - 1)) return true;
  }
  return false;
}

function valueNestsDeeperThanIteratively(root: object, maxDepth: number): boolean {
  const pending: object[] = [root];
  const depths: number[] = [1];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** The exact depth, in one linear scan that jumps over string contents with indexOf. */
function nestingExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      i = closingQuoteIndex(text, i);
      if (i === -1) return false; // unterminated string: JSON.parse reports it
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}

/** Index of the quote that closes the string opened at `openingQuote`, or -1. */
function closingQuoteIndex(text: string, openingQuote: number): number {
  for (let quote = text.indexOf('"', openingQuote + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    // The quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/**
 * The JSON Pointer of the first `__proto__` key, or `constructor` key holding a `prototype`,
 * in the parsed value, or undefined. Such keys never come from the service and are the
 * vehicle of prototype-pollution attacks on code that merges the event into other objects.
 */
export function findForbiddenKey(text: string, value: unknown): string | undefined {
  return mayContainForbiddenKey(text) ? findIn(value) : undefined;
}

/**
 * Cheap test on the text first (as secure-json-parse does), so that the walk over the parsed
 * value only happens for the rare body that may contain such a key. A `constructor` key only
 * matters with a `prototype` key inside it, so `prototype` is the word to look for; either
 * word may also be spelled with escaped ASCII characters (`\u0000` to `\u007f`).
 */
function mayContainForbiddenKey(text: string): boolean {
  if (text.includes('__proto__') || text.includes('prototype')) return true;
  for (let i = text.indexOf('\\u00'); i !== -1; i = text.indexOf('\\u00', i + 1)) {
    const digit = text.charCodeAt(i + 4);
    if (digit >= 0x30 && digit <= 0x37) return true;
  }
  return false;
}

/** Depth-first, in key order, with an explicit stack: a deep body cannot overflow the call stack. */
function findIn(root: unknown): string | undefined {
  const pending: PendingProperty[] = [];
  pushChildren(pending, root, '');
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { key, value, path } = next;
    if (key === '__proto__') return path;
    if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) return path;
    pushChildren(pending, value, path);
  }
  return undefined;
}

interface PendingProperty {
  key: string;
  value: unknown;
  /** JSON Pointer of the property. */
  path: string;
}

function pushChildren(pending: PendingProperty[], value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null) return;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    pending.push({ key, value: (value as Record<string, unknown>)[key], path: `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}` });
  }
}
