#!/usr/bin/env node
// Embeds what the sandbox needs of the OpenAPI spec into src/generated/openapi-contract.ts:
// every operation with its request and response schemas, whole, so the sandbox validates
// requests without reading the spec at run time. It reads specs/dist/openapi.dereferenced.json,
// in which @capi/specs' bundler (Redocly) has already replaced every `$ref` by its target: this
// script resolves nothing itself.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const specsDir = dirname(createRequire(import.meta.url).resolve('@capi/specs/package.json'));
/** The dereferenced bundle that @capi/specs builds. */
export const defaultSpecPath = join(specsDir, 'dist', 'openapi.dereferenced.json');
/** Where the contract is written. */
export const contractPath = join(here, '..', 'src', 'generated', 'openapi-contract.ts');

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
// Documentation only: the sandbox validates with the rest.
const DROPPED = new Set(['$id', '$schema', 'example', 'examples', 'x-assumption']);

function withoutDocumentation(node) {
  if (Array.isArray(node)) return node.map(withoutDocumentation);
  if (node === null || typeof node !== 'object') return node;
  const result = {};
  for (const [key, value] of Object.entries(node)) if (!DROPPED.has(key)) result[key] = withoutDocumentation(value);
  return result;
}

function bearerRequired(operation, spec) {
  const security = operation.security ?? spec.security ?? [];
  return security.some((requirement) => Object.keys(requirement).length > 0);
}

/**
 * The text of `src/generated/openapi-contract.ts` for a dereferenced OpenAPI document.
 * @param {any} spec `specs/dist/openapi.dereferenced.json`, parsed
 * @returns {{ text: string, operationCount: number }}
 * @example
 * const { text } = renderOpenapiContract(JSON.parse(readFileSync(defaultSpecPath, 'utf8')));
 */
export function renderOpenapiContract(spec) {
  const operations = [];
  for (const [path, rawPathItem] of Object.entries(spec.paths ?? {})) {
    const pathItem = withoutDocumentation(rawPathItem);
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      if (JSON.stringify(operation).includes('"$ref"')) throw new Error(`embed-openapi: ${method.toUpperCase()} ${path} still has a $ref; read the dereferenced bundle (${defaultSpecPath})`);
      const servers = operation.servers ?? pathItem.servers;
      const responses = {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const [contentType, media] = Object.entries(response.content ?? {})[0] ?? [];
        responses[status] = contentType ? { contentType, schema: media.schema } : {};
      }
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        base: servers && servers.length > 0 ? 'webhooks' : 'core',
        generation: operation['x-generation'] ?? 'both',
        requiresBearer: bearerRequired(operation, spec),
        ...(operation.requestBody?.content?.['application/json']?.schema
          ? { requestBodySchema: operation.requestBody.content['application/json'].schema }
          : {}),
        responses,
      });
    }
  }

  const userSchema = withoutDocumentation(spec.components?.schemas?.User);
  if (!userSchema || userSchema.type !== 'object') throw new Error('embed-openapi: the spec has no User schema');

  const header = `// Generated from specs/dist/openapi.dereferenced.json (${spec.info?.title} ${spec.info?.version}) by scripts/embed-openapi.mjs.
// Do not edit: \`pnpm gen\` at the repository root (it bundles the specs first; pnpm build runs it too) regenerates it.
`;
  const body = `import type { OperationContract } from '../conformance/operation-contract.js';

/** Every operation of the OpenAPI spec, with its request and response schemas inlined. */
export const operations: readonly OperationContract[] = ${JSON.stringify(operations, null, 2)};

/** The spec's User schema, inlined: every user the sandbox holds or sends is checked against it. */
export const userSchema: unknown = ${JSON.stringify(userSchema, null, 2)};
`;
  return { text: header + body, operationCount: operations.length };
}

// `node scripts/embed-openapi.mjs`; SANDBOX_OPENAPI_JSON points at another dereferenced bundle.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const specPath = process.env.SANDBOX_OPENAPI_JSON ?? defaultSpecPath;
  if (!existsSync(specPath)) {
    console.error(`embed-openapi: ${specPath} does not exist; run \`pnpm --filter @capi/specs build\` first.`);
    process.exit(1);
  }
  const { text, operationCount } = renderOpenapiContract(JSON.parse(readFileSync(specPath, 'utf8')));
  mkdirSync(dirname(contractPath), { recursive: true });
  writeFileSync(contractPath, text);
  console.log(`embed-openapi: ${operationCount} operations embedded`);
}
