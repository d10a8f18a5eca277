// `pnpm --filter @capi/specs build`: the bundled outputs are self-contained, named by the
// schemas' titles, loadable by a validator, and byte-identical from one run to the next.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSpecOutputs } from '../scripts/bundle.mjs';
import { createSchemaValidator } from '../scripts/lib/lint-examples.mjs';
import { createScratchSpecs, specsDir, type ScratchSpecs } from './support/scratch-specs';
import { readSpecOutputs } from './support/spec-outputs';

const { openapi, asyncapi, schemas } = await readSpecOutputs();

function allRefs(node: unknown, refs: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => allRefs(item, refs));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') refs.push(value);
      else allRefs(value, refs);
    }
  }
  return refs;
}

describe('the bundle is deterministic', () => {
  it('two runs of the build write byte-identical files', () => {
    const [first, second] = [1, 2].map(() => mkdtempSync(join(tmpdir(), 'capi-specs-bundle-')));
    try {
      for (const out of [first, second]) {
        const run = spawnSync(process.execPath, [join(specsDir, 'scripts', 'bundle.mjs'), '--out', out], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
      }
      const files = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(dir.length)).sort();
      expect(files(first)).toEqual(files(second));
      expect(files(first)).toContain('/schemas/User.json');
      for (const file of files(first)) expect(readFileSync(join(second, file)).equals(readFileSync(join(first, file))), file).toBe(true);
    } finally {
      rmSync(first, { recursive: true, force: true });
      rmSync(second, { recursive: true, force: true });
    }
  });
});

describe('the bundled specs are self-contained, with component schemas named by title', () => {
  it.each([
    ['openapi.json', openapi],
    ['asyncapi.json', asyncapi],
  ])('%s has only internal refs, each resolving', (_file, document) => {
    const refs = allRefs(document);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true);
      const target = ref.slice(2).split('/').reduce((node: any, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
      expect(target, ref).toBeDefined();
    }
  });

  it.each([
    ['openapi.json', openapi],
    ['asyncapi.json', asyncapi],
  ])('%s names each component schema by its title', (_file, document) => {
    for (const [name, schema] of Object.entries(document.components.schemas) as Array<[string, any]>) {
      expect(schema.title).toBe(name);
      expect(schema.$schema).toBeUndefined();
    }
  });

  it('the OpenAPI bundle has every schema the generated types alias (User, Card, ErrorBody ...)', () => {
    expect(Object.keys(openapi.components.schemas)).toEqual(expect.arrayContaining(['User', 'Card', 'AccountLimit', 'ErrorBody', 'SetAccountLimitRequest', 'AccessToken', 'WebhookPublicKey', 'KycStatus', 'SyncStatus', 'OnboardingStatus']));
  });
});

describe('dist/schemas: one JSON Schema per title, each with its $id, loadable together', () => {
  it('every schema has `$id` https://schemas.capi.dev/v1/<Title>.json and draft 2020-12', () => {
    for (const [title, schema] of schemas) {
      expect(schema.$id).toBe(`https://schemas.capi.dev/v1/${title}.json`);
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.title).toBe(title);
    }
  });

  it("every $ref points at a sibling's $id", () => {
    const ids = new Set([...schemas.values()].map((schema) => schema.$id));
    for (const schema of schemas.values()) {
      for (const ref of allRefs(schema)) expect(ids.has(ref.split('#')[0]), `${schema.title}: ${ref}`).toBe(true);
    }
  });

  it('a validator loads them all and compiles each (strict, with the x- vocabulary)', () => {
    const ajv = createSchemaValidator([...schemas.values()]);
    for (const schema of schemas.values()) expect(ajv.getSchema(schema.$id), schema.title).toBeTypeOf('function');
    const validateUser = ajv.getSchema('https://schemas.capi.dev/v1/User.json')!;
    expect(validateUser(schemas.get('User')!.examples[0])).toBe(true);
    expect(validateUser({ ...schemas.get('User')!.examples[0], kycStatus: 'unknown' })).toBe(false);
  });

  it('a plain ajv without the x- vocabulary loads them with strict mode off', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const schema of schemas.values()) ajv.addSchema(schema);
    expect(ajv.getSchema('https://schemas.capi.dev/v1/WebhookEvent.json')!({ eventType: 'card.transaction.created', data: {} })).toBe(true);
  });
});

describe('the build rejects a malformed schema source with a message that says what to fix', () => {
  let scratch: ScratchSpecs;
  afterEach(() => scratch.remove());

  it('a title that differs from the file name', async () => {
    scratch = createScratchSpecs();
    scratch.edit('schemas/Card.yaml', 'title: Card\n', 'title: PaymentCard\n');
    await expect(buildSpecOutputs(scratch.dir)).rejects.toThrow(/schemas\/Card\.yaml: title is "PaymentCard" but must equal the file name "Card"/);
  });

  it('a $ref to a schema file that does not exist', async () => {
    scratch = createScratchSpecs();
    scratch.edit('openapi.yaml', '$ref: ./schemas/Nonce.yaml', '$ref: ./schemas/Nounce.yaml');
    await expect(buildSpecOutputs(scratch.dir)).rejects.toThrow(/openapi\.yaml: .*schemas\/Nounce\.yaml/);
  });

  it('a schema file that is not YAML', async () => {
    scratch = createScratchSpecs();
    scratch.write('schemas/Broken.yaml', 'title: Broken\n  type: : object\n');
    await expect(buildSpecOutputs(scratch.dir)).rejects.toThrow(/schemas\/Broken\.yaml/);
  });
});
