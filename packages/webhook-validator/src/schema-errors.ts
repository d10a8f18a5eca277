// Turns ajv's errors into WebhookEventValidationError: a path that points at the offending
// property (also for a missing or an unknown one), and a message a person can act on.
import type { GeneratedValidationError } from './generated/validators.js';
import type { WebhookEventValidationError } from './validation-result.js';

export function toValidationErrors(errors: readonly GeneratedValidationError[], event: unknown): WebhookEventValidationError[] {
  return mergeAlternatives(errors.map((error) => toValidationError(error, event)), errors, event);
}

function toValidationError(error: GeneratedValidationError, event: unknown): WebhookEventValidationError {
  const { keyword, params } = error;
  const property = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  const path = typeof property === 'string' ? `${error.instancePath}/${escapePointerToken(property)}` : error.instancePath;
  return { path, keyword, message: `${label(path)} ${describeFailure(keyword, params, path, event)}` };
}

function describeFailure(keyword: string, params: Record<string, unknown>, path: string, event: unknown): string {
  switch (keyword) {
    case 'required':
      return 'is missing: the schema of this event requires it (fields without a value are sent as null, not left out)';
    case 'type':
      return `must be ${listOf(params.type)} (got ${jsonTypeOf(valueAt(event, path))})`;
    case 'enum':
      return `must be one of: ${listOf(params.allowedValues, ', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a property of this schema: strict validation rejects unknown properties (validate without `strict` to accept the fields the service adds)';
    case 'pattern':
      return `must match the pattern ${String(params.pattern)}`;
    case 'minLength':
      return `must be at least ${String(params.limit)} characters long`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters long`;
    case 'minItems':
      return `must have at least ${String(params.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(params.comparison)} ${String(params.limit)}`;
    case 'oneOf':
    case 'anyOf':
      return `must match ${keyword === 'oneOf' ? 'exactly one' : 'at least one'} of the schemas allowed here`;
    default:
      return `fails the "${keyword}" rule of the event's schema`;
  }
}

// A nullable object is written `anyOf: [{$ref}, {type: null}]` (or oneOf); a wrong value
// there fails both branches and the anyOf. One "must be object or null" says the same more plainly, and
// when the value is an object, the errors inside it are the useful ones.
function mergeAlternatives(
  errors: WebhookEventValidationError[],
  raw: readonly GeneratedValidationError[],
  event: unknown,
): WebhookEventValidationError[] {
  const alternativePaths = new Set(errors.filter(isAlternative).map((error) => error.path));
  if (alternativePaths.size === 0) return errors;
  const kept = errors.filter((error) => !(alternativePaths.has(error.path) && (error.keyword === 'type' || isAlternative(error))));
  for (const path of alternativePaths) {
    if (kept.some((error) => error.path.startsWith(`${path}/`))) continue;
    const allowed = raw.filter((error, index) => errors[index]?.path === path && error.keyword === 'type').map((error) => listOf(error.params.type));
    if (allowed.length > 0) {
      kept.push({ path, keyword: 'type', message: `${label(path)} must be ${allowed.join(' or ')} (got ${jsonTypeOf(valueAt(event, path))})` });
    } else {
      kept.push(...errors.filter((error) => error.path === path && isAlternative(error)));
    }
  }
  return kept;
}

function isAlternative(error: WebhookEventValidationError): boolean {
  return error.keyword === 'oneOf' || error.keyword === 'anyOf';
}

function label(path: string): string {
  return path === '' ? 'the event' : path;
}

function listOf(value: unknown, separator = ' or '): string {
  return Array.isArray(value) ? value.map(String).join(separator) : String(value);
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const token of pointer.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[unescapePointerToken(token)];
  }
  return value;
}

function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapePointerToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}
