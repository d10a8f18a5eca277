// The API reference page, rendered from specs/openapi.yaml: every operation under its tag,
// anchored by its operationId (#operation/<operationId>), with parameters, request body,
// responses and the x-assumption decisions. Rendered here rather than by Redoc because the
// current Redoc routes each tag to its own absolute URL and loads its logo from a CDN,
// which an offline, relocatable site cannot have.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { escapeHtml } from './escape-html.mjs';
import { renderMarkdown } from './markdown.mjs';
import { renderAssumption, renderSchema } from './schema-view.mjs';

const run = promisify(execFile);
const redoclyBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../node_modules/.bin/redocly');
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * Bundles and dereferences an OpenAPI file (its $refs to specs/schemas/*.yaml included).
 * @param {string} file
 * @returns {Promise<any>}
 */
export async function loadOpenApi(file) {
  const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-openapi-'));
  try {
    const out = path.join(dir, 'openapi.json');
    await run(redoclyBin, ['bundle', file, '--dereferenced', '-o', out], { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }).catch((error) => {
      throw new Error(`Cannot read the OpenAPI spec ${file}: ${error.stderr || error.message}`);
    });
    return JSON.parse(readFileSync(out, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Every operation of the spec, in tag order then path order.
 * @param {any} spec
 * @returns {{ method: string, path: string, operation: any, tag: string, webhook: boolean }[]}
 */
export function listOperations(spec) {
  const found = [];
  for (const [source, webhook] of [[spec.paths ?? {}, false], [spec.webhooks ?? {}, true]]) {
    for (const [route, item] of Object.entries(source)) {
      for (const method of methods) {
        const operation = item?.[method];
        if (operation) found.push({ method, path: route, operation, tag: operation.tags?.[0] ?? 'Other', webhook });
      }
    }
  }
  return found;
}

function renderParameters(parameters = []) {
  if (parameters.length === 0) return '';
  const rows = parameters.map((parameter) => `<tr><td><code>${escapeHtml(parameter.name)}</code> <span class="badge">${escapeHtml(parameter.in)}${parameter.required ? ', required' : ''}</span></td><td>${renderMarkdown(parameter.description)}${renderSchema(parameter.schema)}</td></tr>`);
  return `<h4>Parameters</h4><table><tbody>${rows.join('')}</tbody></table>`;
}

function renderContent(content = {}) {
  return Object.entries(content)
    .map(([mediaType, media]) => {
      const example = media.example ?? Object.values(media.examples ?? {})[0]?.value;
      const exampleHtml = example === undefined ? '' : `<details><summary>Example</summary><pre><code>${escapeHtml(typeof example === 'string' ? example : JSON.stringify(example, null, 2))}</code></pre></details>`;
      return `<p class="badge">${escapeHtml(mediaType)}</p>${renderSchema(media.schema)}${exampleHtml}`;
    })
    .join('');
}

function renderOperation({ method, path: route, operation, webhook }, securitySchemes) {
  const id = operation.operationId ?? `${method}-${route}`;
  const security = operation.security?.length === 0 ? 'none' : (operation.security ?? []).flatMap((requirement) => Object.keys(requirement)).map((name) => `${name} (${securitySchemes[name]?.scheme ?? securitySchemes[name]?.type ?? 'see spec'})`).join(', ');
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => `<h5>${escapeHtml(status)} <span class="badge">${escapeHtml(response.description ?? '')}</span></h5>${renderAssumption(response)}${renderContent(response.content)}`)
    .join('');
  const body = operation.requestBody
    ? `<h4>Request body${operation.requestBody.required ? ' <span class="badge">required</span>' : ''}</h4>${renderMarkdown(operation.requestBody.description)}${renderContent(operation.requestBody.content)}`
    : '';
  return `<section class="operation" id="operation/${escapeHtml(id)}" data-operation-id="${escapeHtml(id)}">
<h3>${escapeHtml(operation.summary ?? id)}</h3>
<p><span class="method">${escapeHtml(method)}</span> <code>${escapeHtml(route)}</code>${webhook ? ' <span class="badge">webhook sent to you</span>' : ''} · operationId <span class="operation-id">${escapeHtml(id)}</span>${security ? ` · auth: ${escapeHtml(security)}` : ''}</p>
${renderMarkdown(operation.description)}${renderAssumption(operation)}
${renderParameters(operation.parameters)}${body}<h4>Responses</h4>${responses}
</section>`;
}

/**
 * The body of the API reference page.
 * @param {any} spec a dereferenced OpenAPI document
 * @returns {string}
 */
export function renderApiReference(spec) {
  const operations = listOperations(spec);
  const tags = [...(spec.tags ?? []).map((tag) => tag.name), ...operations.map((entry) => entry.tag)].filter((tag, index, all) => all.indexOf(tag) === index);
  const securitySchemes = spec.components?.securitySchemes ?? {};
  const servers = (spec.servers ?? []).map((server) => `<li><code>${escapeHtml(server.url)}</code>: ${renderMarkdown(server.description)}</li>`).join('');
  const toc = tags
    .map((tag) => `<li>${escapeHtml(tag)}<ul>${operations.filter((entry) => entry.tag === tag).map(({ operation, method, path: route }) => `<li><a href="#operation/${escapeHtml(operation.operationId)}"><span class="method">${escapeHtml(method)}</span> ${escapeHtml(route)}</a></li>`).join('')}</ul></li>`)
    .join('');
  const sections = tags
    .map((tag) => {
      const description = spec.tags?.find((entry) => entry.name === tag)?.description;
      return `<h2 id="tag/${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${renderMarkdown(description)}${operations.filter((entry) => entry.tag === tag).map((entry) => renderOperation(entry, securitySchemes)).join('\n')}`;
    })
    .join('\n');
  return `<h1>${escapeHtml(spec.info?.title ?? 'API reference')} <span class="badge">${escapeHtml(spec.info?.version ?? '')}</span></h1>
${renderMarkdown(spec.info?.description)}
<h2>Servers</h2><ul>${servers}</ul>
<h2>Operations</h2><ul>${toc}</ul>
${sections}`;
}
