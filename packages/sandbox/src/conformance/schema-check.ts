import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under ESM its default export is the function itself or `{ default }`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

let sharedAjv: Ajv2020 | undefined;

/** One Ajv instance for every spec schema the sandbox checks against (compiled once, at start). */
function ajv(): Ajv2020 {
  // strict: false because spec schemas carry OpenAPI and x- keywords (example, x-assumption).
  sharedAjv ??= (() => {
    const instance = new Ajv2020({ strict: false, allErrors: true });
    addFormats(instance);
    return instance;
  })();
  return sharedAjv;
}

/** The outcome of checking a value against a spec schema; `problems` are readable sentences. */
export type SchemaCheckResult = { ok: true } | { ok: false; problems: string[] };

/** A compiled check of values against one JSON Schema of the spec. */
export class SchemaCheck {
  readonly #validate: ValidateFunction;

  constructor(schema: unknown, readonly subject = 'body') {
    this.#validate = ajv().compile(schema as object);
  }

  check(value: unknown): SchemaCheckResult {
    if (this.#validate(value)) return { ok: true };
    return { ok: false, problems: (this.#validate.errors ?? []).map((error) => describeProblem(this.subject, error)) };
  }
}

function describeProblem(subject: string, error: ErrorObject): string {
  const where = subject + error.instancePath.replaceAll('/', '.');
  switch (error.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown property "${String(error.params.additionalProperty)}"`;
    case 'enum':
      return `${where} must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${where} must be ${JSON.stringify(error.params.allowedValue)}`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}
