import { findForbiddenKey, hasMoreOpeningBracketsThan, nestsDeeperThan, utf8ByteLength, valueNestsDeeperThan } from './body-limits.js';
import { invalid, type WebhookEventValidationResult } from './validation-result.js';
import { validateWith, type WebhookEventValidationOptions } from './validate-webhook-event.js';
import { assertOptions, WebhookValidatorOptionError } from './webhook-validator-option-error.js';

/**
 * Default `maxBytes` of `parseWebhookEvent`: 1 MiB, hundreds of times a user event with many cards.
 *
 * @example
 * parseWebhookEvent(rawBody, { maxBytes: DEFAULT_MAX_BYTES * 4 });
 */
export const DEFAULT_MAX_BYTES = 1_048_576;
/**
 * Default `maxDepth` of `parseWebhookEvent`: the user events nest 4 levels; 64 leaves room for new payloads.
 *
 * @example
 * parseWebhookEvent(rawBody, { maxDepth: DEFAULT_MAX_DEPTH * 2 });
 */
export const DEFAULT_MAX_DEPTH = 64;

/**
 * Options of `parseWebhookEvent`.
 *
 * @example
 * parseWebhookEvent(rawBody, { strict: true, maxBytes: 256 * 1024, maxDepth: 32 });
 */
export interface ParseWebhookEventOptions extends WebhookEventValidationOptions {
  /** Largest body accepted, in UTF-8 bytes (default 1 MiB). Larger bodies are an error result, not parsed. */
  maxBytes?: number;
  /** Deepest nesting of objects and arrays accepted (default 64). Deeper bodies are an error result, not parsed. */
  maxDepth?: number;
}

let utf8Decoder: TextDecoder | undefined;

/**
 * Parses a raw webhook body (the bytes or text exactly as received, after its signature was
 * verified) and validates it with `validateWebhookEvent`. Never throws on bad input: a body
 * that is too large, too deep, not UTF-8, not JSON, or carries `__proto__` keys is an error
 * result.
 *
 * @example
 * const result = parseWebhookEvent(await request.text());
 * if (!result.ok) {
 *   // Authentic but refused (schema drift): never 4xx; 500 so that the service retries.
 *   return new Response(null, { status: result.unknownEventType ? 204 : 500 });
 * }
 * handle(result.event);
 */
export function parseWebhookEvent(rawBody: string | Uint8Array, options?: ParseWebhookEventOptions): WebhookEventValidationResult {
  assertOptions(options, PARSE_OPTION_NAMES, 'parseWebhookEvent');
  const maxBytes = positiveIntegerOption(options, 'maxBytes', DEFAULT_MAX_BYTES);
  const maxDepth = positiveIntegerOption(options, 'maxDepth', DEFAULT_MAX_DEPTH);
  const text = typeof rawBody === 'string' ? checkedText(rawBody, maxBytes) : decodedText(rawBody, maxBytes);
  if (typeof text !== 'string') return text;
  // Almost every body has fewer brackets than maxDepth, and then nothing more is measured. Past
  // that, the depth is measured on the parsed value (V8's JSON.parse is iterative; an engine whose
  // parser recurses runs out of stack, a RangeError), and only a body JSON.parse refused is
  // measured on its text, so that a deep malformed body is still reported as too deep.
  const mayNestTooDeep = hasMoreOpeningBracketsThan(text, maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (mayNestTooDeep && (error instanceof RangeError || nestsDeeperThan(text, maxDepth))) return tooDeep(maxDepth);
    const reason = error instanceof Error ? error.message : String(error);
    return invalid('', 'json', `the body is not valid JSON (${reason}): pass the raw body exactly as received`);
  }
  if (mayNestTooDeep && valueNestsDeeperThan(value, maxDepth)) return tooDeep(maxDepth);
  const forbidden = findForbiddenKey(text, value);
  if (forbidden !== undefined) {
    return invalid(forbidden, 'forbiddenKey', `${forbidden} is a prototype key (__proto__, or constructor with a prototype) that no event carries: the body is rejected as a prototype-pollution attempt`);
  }
  return validateWith(value, options);
}

// Every name of the interface: the compiler refuses a list that misses or adds one.
const PARSE_OPTION_NAMES = Object.keys({ strict: true, maxBytes: true, maxDepth: true } satisfies { [Name in keyof Required<ParseWebhookEventOptions>]: true });

function checkedText(rawBody: string, maxBytes: number): string | WebhookEventValidationResult {
  // A UTF-16 unit is at least one UTF-8 byte, so a long string is rejected without counting.
  if (rawBody.length > maxBytes || (rawBody.length * 3 > maxBytes && utf8ByteLength(rawBody) > maxBytes)) return tooLarge(maxBytes);
  return rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody;
}

function decodedText(rawBody: unknown, maxBytes: number): string | WebhookEventValidationResult {
  if (!(rawBody instanceof Uint8Array)) {
    if (rawBody instanceof ArrayBuffer || ArrayBuffer.isView(rawBody)) {
      // Raw bytes already, only not in a Uint8Array (e.g. request.arrayBuffer()): say how to pass them.
      const got = rawBody instanceof ArrayBuffer ? 'an ArrayBuffer' : `a ${rawBody.constructor.name}`;
      return invalid('', 'rawBody', `parseWebhookEvent needs the raw body as a string or Uint8Array (got ${got}): wrap the bytes, e.g. parseWebhookEvent(new Uint8Array(await request.arrayBuffer()))`);
    }
    const got = rawBody === null ? 'null' : typeof rawBody === 'object' ? 'an already-parsed object' : typeof rawBody;
    return invalid('', 'rawBody', `parseWebhookEvent needs the raw body as a string or Uint8Array (got ${got}): read the body unparsed (e.g. request.text() or express.raw()), or call validateWebhookEvent on a parsed value`);
  }
  if (rawBody.byteLength > maxBytes) return tooLarge(maxBytes);
  try {
    utf8Decoder ??= new TextDecoder('utf-8', { fatal: true });
    return utf8Decoder.decode(rawBody);
  } catch {
    return invalid('', 'encoding', 'the body is not valid UTF-8: webhook bodies are UTF-8 JSON');
  }
}

function tooDeep(maxDepth: number): WebhookEventValidationResult {
  return invalid('', 'maxDepth', `the body nests objects and arrays deeper than ${maxDepth} levels: rejected before validation (raise maxDepth if such bodies are expected)`);
}

function tooLarge(maxBytes: number): WebhookEventValidationResult {
  return invalid('', 'maxBytes', `the body is larger than ${maxBytes} bytes: rejected unparsed (raise maxBytes if such bodies are expected)`);
}

function positiveIntegerOption(options: ParseWebhookEventOptions | undefined, name: 'maxBytes' | 'maxDepth', fallback: number): number {
  const value: unknown = options?.[name];
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw new WebhookValidatorOptionError(name, `options.${name} must be a positive integer (got ${typeof value === 'number' ? String(value) : typeof value})`);
}
