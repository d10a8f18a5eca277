// The specs are read by several consumers: the bundle in specs/dist (which the generators and
// the sandbox read), the generated types, the precompiled validator and the sandbox. This test
// holds each of them against the reference readers, `@asyncapi/parser` for the events and the
// spec source (`specs/openapi.yaml`, `specs/schemas/*.yaml`) for operations and schemas, so
// that a reader that drifts (a missed operation, a stale event list) fails here by name.
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
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** operationIds of an OpenAPI document's `paths` (the API) or `webhooks` (what the service sends). */
function operationIds(document: any, section: 'paths' | 'webhooks' = 'paths'): string[] {
  return sorted(
    Object.values(document[section] ?? {}).flatMap((item: any) => methods.map((method) => item?.[method]?.operationId).filter((id): id is string => typeof id === 'string')),
  );
}

let asyncapiEvents: string[];
beforeAll(async () => {
  const { document, diagnostics } = await fromFile(new Parser(), path.join(specsDir, 'asyncapi.yaml')).parse();
  if (!document) throw new Error(`@asyncapi/parser cannot read specs/asyncapi.yaml: ${diagnostics.map((d) => d.message).join('; ')}`);
  asyncapiEvents = sorted(
    document
      .messages()
      .all()
      .map((message) => {
        const eventType = message.payload()?.properties()?.eventType;
        return (eventType?.const() ?? eventType?.enum()?.[0]) as string;
      }),
  );
}, 60_000);

describe('every reader sees the same webhook events as @asyncapi/parser', () => {
  it('the parser finds events', () => {
    expect(asyncapiEvents.length).toBeGreaterThan(0);
  });

  it('@capi/event-types (WEBHOOK_EVENT_TYPES)', () => {
    expect(sorted(WEBHOOK_EVENT_TYPES)).toEqual(asyncapiEvents);
  });

  it('@capi/webhook-validator (one precompiled schema per event)', () => {
    expect(sorted(Object.keys(webhookEventSchemaIds))).toEqual(asyncapiEvents);
  });

  it('@capi/sandbox (the events it can send)', () => {
    expect(sorted(SANDBOX_EVENT_TYPES)).toEqual(asyncapiEvents);
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
    const bundle = JSON.parse(readFileSync(path.join(specsDir, 'dist/openapi.json'), 'utf8'));
    expect(operationIds(bundle)).toEqual(source);
    expect(operationIds(bundle, 'webhooks')).toEqual(webhooks);
  });

  it('@capi/openapi-types (the generated `operations` interface: paths and webhooks)', () => {
    const generated = readFileSync(path.join(packageDir('@capi/openapi-types'), 'src/generated/openapi.ts'), 'utf8');
    const block = generated.slice(generated.indexOf('export interface operations {'));
    const names = [...block.slice(0, block.indexOf('\n}')).matchAll(/^ {4}([A-Za-z_$][\w$]*): \{$/gm)].map((match) => match[1]);
    expect(sorted(names)).toEqual(sorted([...source, ...webhooks]));
  });

  it('@capi/sandbox (the embedded contract it validates requests with)', () => {
    const contract = readFileSync(path.join(packageDir('@capi/sandbox'), 'src/generated/openapi-contract.ts'), 'utf8');
    expect(sorted([...contract.matchAll(/"operationId": "([^"]+)"/g)].map((match) => match[1]))).toEqual(source);
  });
});

describe('every reader sees the same schemas as specs/schemas', () => {
  const titles = sorted(readdirSync(path.join(specsDir, 'schemas')).filter((file) => /\.ya?ml$/.test(file)).map((file) => parseYaml(readFileSync(path.join(specsDir, 'schemas', file), 'utf8')).title));

  it('the bundle writes one schema per source schema (specs/dist/schemas)', () => {
    const bundled = readdirSync(path.join(specsDir, 'dist/schemas')).filter((file) => file.endsWith('.json'));
    expect(sorted(bundled.map((file) => JSON.parse(readFileSync(path.join(specsDir, 'dist/schemas', file), 'utf8')).title))).toEqual(titles);
  });

  it('@capi/webhook-validator compiles only schemas of the spec, and each event schema is there', () => {
    const compiled = Object.values(validatorSchemas).map((schema: any) => String(schema.$id).split('/').pop()!.replace(/\.json$/, ''));
    for (const name of compiled) expect(titles).toContain(name);
    for (const id of Object.values(webhookEventSchemaIds)) expect(Object.values(validatorSchemas).map((schema: any) => schema.$id)).toContain(id);
  });
});
