import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// The tests read the bundled spec themselves (not the sandbox's embedded copy), so a drift
// between what the sandbox answers and what the spec says fails here.
const specsDir = dirname(createRequire(import.meta.url).resolve('@capi/specs/package.json'));
/**
 * The bundled specs: `specs/dist`, or the folder `CAPI_SPECS_DIST` names (the test of
 * check:pr's sandbox gate points it at a spec with an operation and an event the sandbox lacks).
 * Only that test sets it: exported in a shell, it would point every sandbox suite run with
 * vitest there (`pnpm test` runs turbo, which does not pass it on).
 */
export const specsDist = process.env.CAPI_SPECS_DIST ?? join(specsDir, 'dist');
export const openApi = JSON.parse(readFileSync(join(specsDist, 'openapi.json'), 'utf8'));

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...openApi, $id: 'openapi.json' });

interface OperationLocation {
  method: string;
  path: string;
  operation: { operationId: string; responses: Record<string, unknown> };
}

export const operationsById = new Map<string, OperationLocation>();
for (const [path, item] of Object.entries(openApi.paths as Record<string, Record<string, OperationLocation['operation']>>)) {
  for (const [method, operation] of Object.entries(item)) {
    if (operation && typeof operation === 'object' && 'operationId' in operation) {
      operationsById.set(operation.operationId, { method: method.toUpperCase(), path, operation });
    }
  }
}

function resolveResponse(response: unknown): { content?: Record<string, { schema?: unknown }> } {
  const ref = (response as { $ref?: string }).$ref;
  if (!ref) return response as { content?: Record<string, { schema?: unknown }> };
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((node, part) => node[part], openApi);
}

const validators = new Map<string, ValidateFunction>();

/**
 * Throws unless `status` is a documented response of the operation and `body` matches its
 * schema (for JSON responses) or is a string (text/plain).
 */
export function assertResponseMatchesSpec(operationId: string, status: number, contentType: string | null, body: unknown): void {
  const location = operationsById.get(operationId);
  if (!location) throw new Error(`${operationId} is not an operation of the spec`);
  const rawResponse = location.operation.responses[String(status)];
  if (!rawResponse) throw new Error(`${operationId} answered ${status}, which the spec does not document (documented: ${Object.keys(location.operation.responses).join(', ')})`);
  const response = resolveResponse(rawResponse);
  const [mediaType, media] = Object.entries(response.content ?? {})[0] ?? [];
  if (!mediaType) return;
  if (!contentType?.startsWith(mediaType)) throw new Error(`${operationId} ${status}: content-type ${contentType}, the spec says ${mediaType}`);
  const key = `${operationId} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const pointer = `openapi.json#/paths/${location.path.replaceAll('~', '~0').replaceAll('/', '~1')}/${location.method.toLowerCase()}/responses/${status}`;
    const schemaRef = (rawResponse as { $ref?: string }).$ref
      ? `openapi.json${(rawResponse as { $ref: string }).$ref}/content/${mediaType.replaceAll('/', '~1')}/schema`
      : `${pointer}/content/${mediaType.replaceAll('/', '~1')}/schema`;
    validate = ajv.compile({ $ref: schemaRef });
    validators.set(key, validate);
  }
  if (media?.schema !== undefined && !validate(body)) {
    throw new Error(`${operationId} ${status} body does not match the spec: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(body)}`);
  }
}
