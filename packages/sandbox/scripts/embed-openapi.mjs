#!/usr/bin/env node
// Embeds what the sandbox needs of the bundled OpenAPI spec (specs/dist/openapi.json) into
// src/generated/openapi-contract.ts: every operation with its request and response schemas,
// `$ref`s inlined, so the sandbox validates requests without reading the spec at run time.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const specsDir = dirname(createRequire(import.meta.url).resolve('@capi/specs/package.json'));
// SANDBOX_OPENAPI_JSON points at another bundle (e.g. while the specs package is being changed).
const specPath = process.env.SANDBOX_OPENAPI_JSON ?? join(specsDir, 'dist', 'openapi.json');
if (!existsSync(specPath)) {
  console.error(`embed-openapi: ${specPath} does not exist; run \`pnpm --filter @capi/specs build\` first.`);
  process.exit(1);
}
const spec = JSON.parse(readFileSync(specPath, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function pointer(document, ref) {
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node, part) => (node === undefined ? undefined : node[part]), document);
}

function resolveRef(ref) {
  if (ref.startsWith('#/')) return pointer(spec, ref);
  // A reference to another schema file (./SyncStatus.yaml, User.json) names a component.
  const name = ref.split('/').pop().replace(/\.(ya?ml|json)(#.*)?$/, '');
  const fromComponents = spec.components?.schemas?.[name];
  if (fromComponents) return fromComponents;
  const file = join(specsDir, 'dist', 'schemas', `${name}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  return undefined;
}

const DROPPED = new Set(['$id', '$schema', 'example', 'examples', 'x-assumption']);

function inline(node, trail = []) {
  if (Array.isArray(node)) return node.map((item) => inline(item, trail));
  if (node === null || typeof node !== 'object') return node;
  let result = {};
  if (typeof node.$ref === 'string') {
    if (trail.includes(node.$ref)) throw new Error(`embed-openapi: recursive $ref ${node.$ref} cannot be inlined`);
    const target = resolveRef(node.$ref);
    if (target === undefined) throw new Error(`embed-openapi: cannot resolve $ref ${node.$ref}`);
    result = inline(target, [...trail, node.$ref]);
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' || DROPPED.has(key)) continue;
    result[key] = inline(value, trail);
  }
  return result;
}

function bearerRequired(operation) {
  const security = operation.security ?? spec.security ?? [];
  return security.some((requirement) => Object.keys(requirement).length > 0);
}

const operations = [];
for (const [path, rawPathItem] of Object.entries(spec.paths ?? {})) {
  const pathItem = inline(rawPathItem);
  for (const method of METHODS) {
    const operation = pathItem[method];
    if (!operation) continue;
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
      requiresBearer: bearerRequired(operation),
      ...(operation.requestBody?.content?.['application/json']?.schema
        ? { requestBodySchema: operation.requestBody.content['application/json'].schema }
        : {}),
      responses,
    });
  }
}

const userSchema = inline(spec.components?.schemas?.User ?? resolveRef('User.json'));
if (!userSchema || userSchema.type !== 'object') throw new Error('embed-openapi: the spec has no User schema');

const header = `// Generated from specs/dist/openapi.json (${spec.info?.title} ${spec.info?.version}) by scripts/embed-openapi.mjs.
// Do not edit: \`pnpm --filter @capi/sandbox gen\` (run by turbo before build) regenerates it.
`;
const body = `import type { OperationContract } from '../conformance/operation-contract.js';

/** Every operation of the OpenAPI spec, with its request and response schemas inlined. */
export const operations: readonly OperationContract[] = ${JSON.stringify(operations, null, 2)};

/** The spec's User schema, inlined: every user the sandbox holds or sends is checked against it. */
export const userSchema: unknown = ${JSON.stringify(userSchema, null, 2)};
`;
mkdirSync(join(here, '..', 'src', 'generated'), { recursive: true });
writeFileSync(join(here, '..', 'src', 'generated', 'openapi-contract.ts'), header + body);
console.log(`embed-openapi: ${operations.length} operations embedded`);
