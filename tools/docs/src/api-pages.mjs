// The API reference as VitePress pages, from the OpenAPI document as bundled by @capi/specs
// (specs/dist/openapi.json): an overview (servers, authentication, downloads, operations by
// tag), one page per operation (its servers, parameters, request body, request samples, every
// response with every named example) and one page of the named schemas, so that an error body
// is described once and linked, not repeated under every operation.
import { anchorOf, assumptionBox, cell, fence, prose } from './markdown-text.mjs';
import { schemaMarkdown } from './schema-table.mjs';

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * Every operation of the spec, in the order of the spec's tags, then of its paths.
 * @param {any} spec
 * @returns {{ method: string, path: string, operation: any, tag: string, servers: any[] }[]}
 */
export function listOperations(spec) {
  const found = [];
  for (const [route, item] of Object.entries(spec.paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method];
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${route} has no operationId; every operation of specs/openapi.yaml needs one.`);
      found.push({ method, path: route, operation, tag: operation.tags?.[0] ?? 'Other', servers: operation.servers ?? item.servers ?? spec.servers ?? [] });
    }
  }
  const tagOrder = (spec.tags ?? []).map((tag) => tag.name);
  const rank = (tag) => (tagOrder.includes(tag) ? tagOrder.indexOf(tag) : tagOrder.length);
  return found.sort((a, b) => rank(a.tag) - rank(b.tag));
}

/**
 * A server's URL with its variables at their defaults (`{baseUrl}` -> the sandbox address).
 * @param {any} server
 * @returns {string}
 */
export function serverUrl(server) {
  return String(server.url).replace(/\{([^}]+)\}/g, (whole, name) => server.variables?.[name]?.default ?? whole);
}

/** Every named example of a media type (a lone `example` is named "example"). */
function namedExamples(media) {
  if (media?.examples) return Object.entries(media.examples).map(([name, example]) => ({ name, summary: example.summary, description: example.description, value: example.value }));
  if (media?.example !== undefined) return [{ name: 'example', summary: undefined, description: undefined, value: media.example }];
  return [];
}

function exampleText(value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function examplesMarkdown(media, mediaType, level) {
  return namedExamples(media)
    .map((example) => `${'#'.repeat(level)} Example: ${example.name}\n\n${example.summary ? `${prose(example.summary)}\n\n` : ''}${example.description ? `${prose(example.description)}\n\n` : ''}${fence(mediaType.includes('json') ? 'json' : 'text', exampleText(example.value))}\n`)
    .join('\n');
}

function resolveResponse(response, spec) {
  const ref = response?.$ref;
  return ref ? { ...spec.components.responses[ref.split('/').pop()], ...Object.fromEntries(Object.entries(response).filter(([key]) => key !== '$ref')) } : response;
}

function authOf(operation, spec) {
  const requirements = operation.security ?? spec.security ?? [];
  if (requirements.length === 0) return 'none';
  return requirements
    .flatMap((requirement) => Object.keys(requirement))
    .map((name) => {
      const scheme = spec.components?.securitySchemes?.[name];
      return scheme?.scheme === 'bearer' ? `\`Authorization: Bearer <token>\` (${name}, a ${scheme.bearerFormat ?? 'bearer'} token from [verifySiweSignature](./verifySiweSignature.md))` : name;
    })
    .join(', ');
}

/** The request samples: curl and fetch against the first server, with the first request example. */
function requestSamples({ method, path: route, operation, servers }, spec) {
  const base = serverUrl(servers[0] ?? { url: 'http://localhost:4010' });
  const media = Object.entries(operation.requestBody?.content ?? {})[0];
  const body = media ? namedExamples(media[1])[0]?.value : undefined;
  const bodyText = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const authenticated = authOf(operation, spec) !== 'none';
  const curl = [`curl -X ${method.toUpperCase()} '${base}${route}'`];
  if (authenticated) curl.push(`  -H "Authorization: Bearer $CAPI_TOKEN"`);
  if (media) curl.push(`  -H 'Content-Type: ${media[0]}'`);
  if (bodyText !== undefined) curl.push(`  --data '${bodyText.replace(/'/g, `'\\''`)}'`);
  const headers = [authenticated ? `    Authorization: \`Bearer \${token}\`,` : '', media ? `    'Content-Type': '${media[0]}',` : ''].filter(Boolean);
  const accept = Object.keys(resolveResponse(operation.responses?.['200'] ?? {}, spec)?.content ?? {})[0];
  const read = accept?.includes('json') ? 'await response.json()' : 'await response.text()';
  const fetchCode = [
    `const response = await fetch('${base}${route}', {`,
    `  method: '${method.toUpperCase()}',`,
    ...(headers.length ? ['  headers: {', ...headers, '  },'] : []),
    ...(bodyText !== undefined ? [`  body: JSON.stringify(${JSON.stringify(body, null, 2).replace(/\n/g, '\n  ')}),`] : []),
    '});',
    `if (!response.ok) throw new Error(\`${operation.operationId} failed: \${response.status} \${await response.text()}\`);`,
    `const result = ${read};`,
  ];
  return `::: code-group\n\n${fence('sh [curl]', curl.join(' \\\n'))}\n\n${fence('ts [fetch]', fetchCode.join('\n'))}\n\n:::\n`;
}

function serversTable(servers) {
  const rows = servers.map((server) => `| ${cell(server['x-environment'] ?? server.description ?? '')} | \`${serverUrl(server)}\` | \`${server.url}\`${Object.entries(server.variables ?? {}).map(([name, variable]) => `: ${cell(`\`${name}\`: ${variable.description ?? ''}`)}`).join('')} |`);
  return `| Server | URL | Template |\n| --- | --- | --- |\n${rows.join('\n')}\n`;
}

/**
 * One operation's page.
 * @param {ReturnType<typeof listOperations>[number]} entry
 * @param {any} spec
 * @returns {string}
 */
export function operationPage(entry, spec) {
  const { method, path: route, operation, servers } = entry;
  const context = { components: spec.components?.schemas ?? {}, linkTo: (name) => `./schemas.md#${anchorOf(name)}` };
  const ownServers = operation.servers ?? spec.paths[route].servers;
  const parameters = (operation.parameters ?? []).map((parameter) => `| \`${parameter.name}\`${parameter.required ? ' **required**' : ''} | ${parameter.in} | ${cell(parameter.description)} |`);
  const request = Object.entries(operation.requestBody?.content ?? {})
    .map(([mediaType, media]) => `Content type: \`${mediaType}\`${operation.requestBody.required ? ', required' : ''}\n\n${prose(operation.requestBody.description)}\n\n${schemaMarkdown(media.schema, context)}\n${examplesMarkdown(media, mediaType, 3)}`)
    .join('\n');
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, raw]) => {
      const response = resolveResponse(raw, spec);
      const isError = Number(status) >= 400;
      const content = Object.entries(response.content ?? {})
        .map(([mediaType, media]) => {
          // An error body is one schema for every error: linked, never repeated here.
          const shape = isError ? `Body: \`${mediaType}\`, ${context.linkTo && media.schema?.$ref ? `[${media.schema.$ref.split('/').pop()}](${context.linkTo(media.schema.$ref.split('/').pop())})` : 'see the schema'}.\n` : `Body: \`${mediaType}\`\n\n${schemaMarkdown(media.schema, context)}`;
          return `${shape}\n${examplesMarkdown(media, mediaType, 4)}`;
        })
        .join('\n');
      return `### ${status}\n\n${prose(response.description)}\n\n${assumptionBox(response)}\n${content}`;
    })
    .join('\n');
  return `---
title: ${operation.operationId}
---

# ${prose(operation.summary ?? operation.operationId)}

<p class="operation-line" data-operation-id="${operation.operationId}"><span class="method method-${method}">${method.toUpperCase()}</span> <code>${route}</code></p>

operationId: \`${operation.operationId}\` · authentication: ${authOf(operation, spec)}${operation['x-generation'] ? ` · infrastructure generation: ${operation['x-generation']}` : ''}

${prose(operation.description)}

${assumptionBox(operation)}
## Servers

${ownServers ? `This operation is **not** on the core API's \`{baseUrl}\`: it is served by its own host.\n\n` : ''}${serversTable(servers)}
${ownServers ? ownServers.map(assumptionBox).join('') : ''}
${parameters.length ? `## Parameters\n\n| Name | In | Description |\n| --- | --- | --- |\n${parameters.join('\n')}\n` : ''}
${request ? `## Request body\n\n${request}\n` : ''}
## Request samples

${requestSamples(entry, spec)}
## Responses

${responses}
`;
}

/**
 * The API overview page: servers, authentication, downloads, operations by tag.
 * @param {any} spec
 * @param {{ diagrams: Record<string, string> }} options image paths of the rendered diagrams
 * @returns {string}
 */
export function apiIndexPage(spec, { diagrams }) {
  const operations = listOperations(spec);
  const tags = [...new Set(operations.map((entry) => entry.tag))];
  const otherServers = operations.filter((entry) => entry.operation.servers ?? spec.paths[entry.path].servers);
  const sections = tags.map((tag) => {
    const description = spec.tags?.find((entry) => entry.name === tag)?.description;
    const rows = operations
      .filter((entry) => entry.tag === tag)
      .map((entry) => `| [\`${entry.operation.operationId}\`](./${entry.operation.operationId}.md) | ${entry.method.toUpperCase()} \`${entry.path}\` | ${cell(entry.operation.summary)} |`);
    const picture = tag === 'Onboarding' && diagrams.onboarding ? `\n![The onboarding steps: accept the terms, wait for the verification carry-over, KYC and source of funds (skipped for a migrated user), account, phone, card](${diagrams.onboarding})\n` : '';
    const signIn = tag === 'Authentication' && diagrams.signIn ? `\n![The sign-in sequence: nonce, SIWE message signed by the wallet, challenge, access token, renewal by signing in again](${diagrams.signIn})\n` : '';
    return `## ${tag}\n\n${prose(description)}\n${signIn}${picture}\n| Operation | Request | Summary |\n| --- | --- | --- |\n${rows.join('\n')}\n`;
  });
  return `---
title: API reference
---

# ${prose(spec.info?.title ?? 'API reference')}

Version ${spec.info?.version ?? ''}. Download the spec: [openapi.json](/openapi.json){target="_self" download="capi-openapi.json"} (OpenAPI ${spec.openapi}, bundled).

${prose(spec.info?.description)}

## Servers

Every operation is served from the core API's \`{baseUrl}\`, one per environment, except where its own page says otherwise.

${serversTable(spec.servers ?? [])}
${(spec.servers ?? []).map(assumptionBox).join('')}
${otherServers.length ? `Operations on another host: ${otherServers.map((entry) => `[\`${entry.operation.operationId}\`](./${entry.operation.operationId}.md) on \`${serverUrl((entry.operation.servers ?? spec.paths[entry.path].servers)[0])}\``).join(', ')}.\n` : ''}
## Authentication

${Object.entries(spec.components?.securitySchemes ?? {}).map(([name, scheme]) => `- \`${name}\` (${scheme.type}${scheme.scheme ? `, ${scheme.scheme}` : ''}): ${cell(scheme.description)}`).join('\n')}

${sections.join('\n')}
## Schemas

Every request and response body is described once on the [schema page](./schemas.md).
`;
}

/**
 * The page of every named schema, one section each (anchor: the schema's name, lower case).
 * @param {any} spec
 * @returns {string}
 */
export function schemasPage(spec) {
  const components = spec.components?.schemas ?? {};
  const context = { components, linkTo: (name) => `#${anchorOf(name)}` };
  const sections = Object.entries(components).map(([name, schema]) => `## ${name}\n\n${prose(schema.description)}\n\n${assumptionBox(schema)}\n${schemaMarkdown({ $ref: `#/components/schemas/${name}` }, context)}`);
  return `---
title: Schemas
---

# Schemas

Every named schema of the API, once. Operations link here rather than repeating a body.

${sections.join('\n')}`;
}
