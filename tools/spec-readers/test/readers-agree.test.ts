// Every consumer of the specs reads the bundles that @capi/specs writes into specs/dist (Redocly's
// bundler; the event list through @asyncapi/parser). This test holds what each consumer's
// output exposes (the generated types, the precompiled validator, the sandbox, the docs site)
// against references read independently: @asyncapi/parser on specs/asyncapi.yaml and on the
// bundle for the events, the YAML sources for operations and schemas. A consumer that drifts
// (a missed operation, a stale event list, a schema the docs do not show) fails here by name.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';
import { WEBHOOK_EVENT_TYPES } from '@capi/event-types';
import { SANDBOX_EVENT_TYPES } from '@capi/sandbox';
import { schemas as validatorSchemas, webhookEventSchemaIds } from '@capi/webhook-validator/schemas';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const specsDir = path.dirname(require.resolve('@capi/specs/package.json'));
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const docsDist = path.join(packageDir('@capi/docs'), 'dist');
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
// What these read from a build says so when it fails: `pnpm dev` rebuilds neither.
const BUILT = 'read from the built docs site or the sandbox dist/: after a spec change, run pnpm build first (pnpm dev rebuilds neither)';
const bundled = { openapi: readJson(path.join(specsDir, 'dist/openapi.json')), asyncapi: readJson(path.join(specsDir, 'dist/asyncapi.json')) };

/** operationIds of an OpenAPI document's `paths` (the API) or `webhooks` (what the service sends). */
function operationIds(document: any, section: 'paths' | 'webhooks' = 'paths'): string[] {
  return sorted(
    Object.values(document[section] ?? {}).flatMap((item: any) => methods.map((method) => item?.[method]?.operationId).filter((id): id is string => typeof id === 'string')),
  );
}

/** The page names (without `.html`) of a directory of the built docs site, without its index. */
function docsPages(dir: string, except: string[] = []): string[] {
  return sorted(readdirSync(path.join(docsDist, dir)).filter((file) => file.endsWith('.html')).map((file) => file.slice(0, -'.html'.length)).filter((name) => name !== 'index' && !except.includes(name)));
}

/** Names of the `export type|interface X` declarations of a generated file. */
function exportedTypeNames(file: string): string[] {
  return sorted([...readFileSync(file, 'utf8').matchAll(/^export (?:type|interface) ([A-Za-z_$][\w$]*)/gm)].map((match) => match[1]!));
}

/** The event types of a document as @asyncapi/parser reads it: the `eventType` constant of each message's payload. */
function parsedEventTypes(document: any): string[] {
  return sorted(
    document
      .messages()
      .all()
      .map((message: any) => {
        const eventType = message.payload()?.properties()?.eventType;
        return (eventType?.const() ?? eventType?.enum()?.[0]) as string;
      }),
  );
}

let sourceEvents: string[];
let bundleEvents: string[];
beforeAll(async () => {
  const parser = new Parser();
  const source = await fromFile(parser, path.join(specsDir, 'asyncapi.yaml')).parse();
  if (!source.document) throw new Error(`@asyncapi/parser cannot read specs/asyncapi.yaml: ${source.diagnostics.map((d) => d.message).join('; ')}`);
  const bundle = await parser.parse(structuredClone(bundled.asyncapi));
  if (!bundle.document) throw new Error(`@asyncapi/parser cannot read specs/dist/asyncapi.json: ${bundle.diagnostics.map((d) => d.message).join('; ')}`);
  sourceEvents = parsedEventTypes(source.document);
  bundleEvents = parsedEventTypes(bundle.document);
}, 120_000);

describe('every reader sees the same webhook events as @asyncapi/parser', () => {
  it('the parser finds events in specs/asyncapi.yaml, and the same ones in the bundle specs/dist/asyncapi.json', () => {
    expect(sourceEvents.length).toBeGreaterThan(0);
    expect(bundleEvents).toEqual(sourceEvents);
  });

  it('@capi/event-types (WEBHOOK_EVENT_TYPES)', () => {
    expect(sorted(WEBHOOK_EVENT_TYPES)).toEqual(sourceEvents);
  });

  it('@capi/webhook-validator (one precompiled schema per event)', () => {
    expect(sorted(Object.keys(webhookEventSchemaIds))).toEqual(sourceEvents);
  });

  it('@capi/sandbox (the events it can send)', () => {
    expect(sorted(SANDBOX_EVENT_TYPES), BUILT).toEqual(sourceEvents);
  });

  it('the docs site (one page per event type under /events/)', () => {
    expect(docsPages('events'), BUILT).toEqual(sourceEvents);
  });
});

describe('every reader sees the same operations as specs/openapi.yaml', () => {
  const spec = parseYaml(readFileSync(path.join(specsDir, 'openapi.yaml'), 'utf8'));
  const source = operationIds(spec);
  const webhooks = operationIds(spec, 'webhooks');

  it('the spec has operations', () => {
    expect(source.length).toBeGreaterThan(0);
  });

  it('the bundle (specs/dist/openapi.json), paths and webhooks', () => {
    expect(operationIds(bundled.openapi)).toEqual(source);
    expect(operationIds(bundled.openapi, 'webhooks')).toEqual(webhooks);
  });

  it('the dereferenced bundle (specs/dist/openapi.dereferenced.json)', () => {
    expect(operationIds(readJson(path.join(specsDir, 'dist/openapi.dereferenced.json')))).toEqual(source);
  });

  it('@capi/openapi-types (the generated `operations` interface: paths and webhooks)', () => {
    const generated = readFileSync(path.join(packageDir('@capi/openapi-types'), 'src/generated/openapi.ts'), 'utf8');
    const block = generated.slice(generated.indexOf('export interface operations {'));
    const names = [...block.slice(0, block.indexOf('\n}')).matchAll(/^ {4}([A-Za-z_$][\w$]*): \{$/gm)].map((match) => match[1]!);
    expect(sorted(names)).toEqual(sorted([...source, ...webhooks]));
  });

  it('@capi/sandbox (the embedded contract it validates requests with)', () => {
    const contract = readFileSync(path.join(packageDir('@capi/sandbox'), 'src/generated/openapi-contract.ts'), 'utf8');
    expect(sorted([...contract.matchAll(/"operationId": "([^"]+)"/g)].map((match) => match[1]!))).toEqual(source);
  });

  it('the docs site (one page per operationId under /api/)', () => {
    expect(docsPages('api', ['schemas']), BUILT).toEqual(source);
  });
});

describe('every reader sees the same schemas as specs/schemas', () => {
  const titles = sorted(readdirSync(path.join(specsDir, 'schemas')).filter((file) => /\.ya?ml$/.test(file)).map((file) => parseYaml(readFileSync(path.join(specsDir, 'schemas', file), 'utf8')).title));
  const openapiSchemas = sorted(Object.keys(bundled.openapi.components.schemas));
  const asyncapiSchemas = sorted(Object.keys(bundled.asyncapi.components.schemas));

  it('the bundle writes one schema per source schema (specs/dist/schemas), and each bundled document names only those', () => {
    const standalone = readdirSync(path.join(specsDir, 'dist/schemas')).filter((file) => file.endsWith('.json'));
    expect(sorted(standalone.map((file) => readJson(path.join(specsDir, 'dist/schemas', file)).title))).toEqual(titles);
    for (const name of [...openapiSchemas, ...asyncapiSchemas]) expect(titles).toContain(name);
  });

  it('@capi/openapi-types exports one type per schema of the OpenAPI bundle', () => {
    expect(exportedTypeNames(path.join(packageDir('@capi/openapi-types'), 'src/generated/schema-aliases.ts'))).toEqual(openapiSchemas);
  });

  it('@capi/event-types exports one model per schema of the AsyncAPI bundle', () => {
    expect(exportedTypeNames(path.join(packageDir('@capi/event-types'), 'src/generated/models.ts'))).toEqual(asyncapiSchemas);
  });

  it('@capi/webhook-validator compiles only schemas of the spec, and each event schema is there', () => {
    const compiled = Object.values(validatorSchemas).map((schema: any) => String(schema.$id).split('/').pop()!.replace(/\.json$/, ''));
    for (const name of compiled) expect(titles).toContain(name);
    for (const id of Object.values(webhookEventSchemaIds)) expect(Object.values(validatorSchemas).map((schema: any) => schema.$id)).toContain(id);
  });

  it('the docs site (one section per schema of the OpenAPI bundle on /api/schemas)', () => {
    const page = readFileSync(path.join(docsDist, 'api/schemas.html'), 'utf8');
    expect(sorted([...page.matchAll(/<h2 id="[^"]+" tabindex="-1">([A-Za-z0-9]+) <a class="header-anchor"/g)].map((match) => match[1]!)), BUILT).toEqual(openapiSchemas);
  });

  it('the docs site offers the bundles themselves for download, byte for byte', () => {
    for (const file of ['openapi.json', 'asyncapi.json']) expect(readFileSync(path.join(docsDist, file), 'utf8'), `${file}, ${BUILT}`).toBe(readFileSync(path.join(specsDir, 'dist', file), 'utf8'));
  });
});
