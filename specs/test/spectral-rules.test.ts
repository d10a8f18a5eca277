// Each of the project's Spectral rules (specs/.spectral.yaml, spectral/schema-rules.yaml)
// catches a seeded violation, at the file and line where it is written.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lintWithSpectral, loadSpectralRuleset } from '../scripts/lib/lint-spectral.mjs';
import { specsDir } from './support/scratch-specs';

let specRuleset: unknown;
let schemaRuleset: unknown;
let dir: string;

beforeAll(async () => {
  specRuleset = await loadSpectralRuleset(join(specsDir, '.spectral.yaml'));
  schemaRuleset = await loadSpectralRuleset(join(specsDir, 'spectral', 'schema-rules.yaml'));
  dir = mkdtempSync(join(tmpdir(), 'capi-spectral-rules-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `text` to `name` in the scratch dir, lints it, and returns the problems of `rule`. */
async function problemsOf(rule: string, name: string, text: string, ruleset = specRuleset) {
  writeFileSync(join(dir, name), text);
  const problems = await lintWithSpectral(dir, ruleset, [join(dir, name)]);
  return problems.filter((problem: { rule: string }) => problem.rule === rule);
}

/** 1-based line of the first line of `text` that contains `marker`. */
function lineOf(text: string, marker: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(marker));
  if (index < 0) throw new Error(`marker ${marker} not in text`);
  return index + 1;
}

const openApi = (paths: string, extra = '') => `openapi: 3.1.0
info:
  title: Seeded
  version: 1.0.0
${extra}paths:
${paths}components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
`;

describe('capi-operation-id: every operation has a camelCase operationId', () => {
  it('reports an operation without operationId at the operation', async () => {
    const text = openApi(`  /things:
    get: # seeded
      responses:
        "200":
          description: OK
`);
    const problems = await problemsOf('capi-operation-id', 'no-operation-id.yaml', text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'error', file: 'no-operation-id.yaml', line: lineOf(text, '# seeded') });
    expect(problems[0].message).toContain('add a unique camelCase `operationId`');
  });

  it('reports an operationId that is not camelCase, at the operationId', async () => {
    const text = openApi(`  /things:
    get:
      operationId: get_things
      responses:
        "200":
          description: OK
`);
    const problems = await problemsOf('capi-operation-id', 'snake-operation-id.yaml', text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: lineOf(text, 'operationId: get_things') });
    expect(problems[0].message).toContain('"get_things" is not camelCase');
  });

  it('checks webhooks too', async () => {
    const text = openApi('', `webhooks:
  thing.created:
    post: # seeded
      responses:
        "200":
          description: OK
`).replace('paths:\n', 'paths: {}\n');
    const problems = await problemsOf('capi-operation-id', 'webhook-operation-id.yaml', text);
    expect(problems.map((problem: { line: number }) => problem.line)).toEqual([lineOf(text, '# seeded')]);
  });
});

describe('capi-authenticated-operation-documents-401: every authenticated operation documents 401', () => {
  it('reports a bearer operation without a 401 response, at its responses', async () => {
    const text = openApi(`  /things:
    get:
      operationId: getThings
      security:
        - bearerAuth: []
      responses: # seeded
        "200":
          description: OK
`);
    const problems = await problemsOf('capi-authenticated-operation-documents-401', 'no-401.yaml', text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'error', line: lineOf(text, '# seeded') });
    expect(problems[0].message).toContain('documents no 401 response');
  });

  it('applies the document-level security to operations that do not override it', async () => {
    const text = openApi(`  /things:
    get:
      operationId: getThings
      responses: # seeded
        "200":
          description: OK
`, `security:
  - bearerAuth: []
`);
    const problems = await problemsOf('capi-authenticated-operation-documents-401', 'inherited-security.yaml', text);
    expect(problems.map((problem: { line: number }) => problem.line)).toEqual([lineOf(text, '# seeded')]);
  });

  it('does not report an operation that opts out with `security: []`, nor one that documents 401', async () => {
    const text = openApi(`  /public:
    get:
      operationId: getPublic
      security: []
      responses:
        "200":
          description: OK
  /private:
    get:
      operationId: getPrivate
      responses:
        "200":
          description: OK
        "401":
          description: Sign in again
`, `security:
  - bearerAuth: []
`);
    expect(await problemsOf('capi-authenticated-operation-documents-401', 'documented.yaml', text)).toEqual([]);
  });
});

describe('capi-operation-generation: every path operation names its generation', () => {
  it('reports an operation without x-generation and one with an unknown value, and accepts older/newer/both', async () => {
    const text = openApi(`  /missing:
    get:
      operationId: getMissing
      security: []
      responses:
        "200":
          description: OK
  /bogus:
    get:
      operationId: getBogus
      x-generation: oldest
      security: []
      responses:
        "200":
          description: OK
  /fine:
    get:
      operationId: getFine
      x-generation: newer
      security: []
      responses:
        "200":
          description: OK
`);
    const missing = await problemsOf('capi-operation-generation-present', 'generation.yaml', text);
    expect(missing).toHaveLength(1);
    expect(missing[0].message).toContain('/missing');
    const bogus = await problemsOf('capi-operation-generation', 'generation.yaml', text);
    expect(bogus).toHaveLength(1);
    expect(bogus[0].message).toContain('/bogus');
  });
});

describe('capi-camel-case-properties: every property name is camelCase', () => {
  it('reports a snake_case property at its name, with a suggested name', async () => {
    const text = `title: Seeded
type: object
properties:
  card_token:
    type: string
    description: Seeded.
`;
    const problems = await problemsOf('capi-camel-case-properties', 'Seeded.yaml', text, schemaRuleset);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'error', file: 'Seeded.yaml', line: lineOf(text, 'card_token:') });
    expect(problems[0].message).toContain('"cardToken"');
  });

  it('finds properties nested in items, anyOf and inline schemas of a spec', async () => {
    const text = openApi(`  /things:
    get:
      operationId: getThings
      responses:
        "200":
          description: OK
          content:
            application/json:
              schema:
                type: array
                items:
                  anyOf:
                    - type: object
                      properties:
                        Bad-Name:
                          type: string
                          description: Seeded.
`);
    const problems = await problemsOf('capi-camel-case-properties', 'nested.yaml', text);
    expect(problems.map((problem: { line: number }) => problem.line)).toEqual([lineOf(text, 'Bad-Name:')]);
  });

  it('exempts schemas marked `x-http-headers: true`', async () => {
    const text = `title: Headers
type: object
x-http-headers: true
properties:
  X-Webhook-Timestamp:
    type: string
    description: Seeded.
`;
    expect(await problemsOf('capi-camel-case-properties', 'Headers.yaml', text, schemaRuleset)).toEqual([]);
  });
});

describe('capi-property-description: every property is described', () => {
  it('reports a property without description, and one with a blank description', async () => {
    const text = `title: Seeded
type: object
properties:
  amount:
    type: integer
  currency:
    type: string
    description: "  "
  ok:
    type: boolean
    description: Described.
`;
    const problems = await problemsOf('capi-property-description', 'Undescribed.yaml', text, schemaRuleset);
    expect(problems.map((problem: { line: number }) => problem.line)).toEqual([lineOf(text, 'amount:'), lineOf(text, 'currency:')]);
    expect(problems[0].message).toContain('Property "amount" has no description');
  });

  it('does not treat example data named "properties" as a schema', async () => {
    const text = `title: Seeded
type: object
examples:
  - properties:
      not_a_schema: 1
`;
    expect(await problemsOf('capi-property-description', 'ExampleData.yaml', text, schemaRuleset)).toEqual([]);
  });
});

describe('capi-assumption-well-formed: every x-assumption is { decision, reason, source? }', () => {
  it.each([
    ['a plain string', 'x-assumption: we guessed', 'must be an object'],
    ['a missing reason', 'x-assumption:\n  decision: Guessed.', 'non-empty string `reason`'],
    ['a decision that is not a string', 'x-assumption:\n  decision: 42\n  reason: Because.', 'non-empty string `decision`'],
    ['an empty source', 'x-assumption:\n  decision: Guessed.\n  reason: Because.\n  source: ""', '`x-assumption.source` must be a non-empty string'],
    ['an unknown field', 'x-assumption:\n  decision: Guessed.\n  reason: Because.\n  why: typo', 'unknown field "why"'],
  ])('reports %s', async (_case, assumption, message) => {
    const text = `title: Seeded
type: string
${assumption}
`;
    const problems = await problemsOf('capi-assumption-well-formed', 'Assumption.yaml', text, schemaRuleset);
    expect(problems).toHaveLength(1);
    expect(problems[0].severity).toBe('error');
    expect(problems[0].message).toContain(message);
    expect(problems[0].line).toBeGreaterThanOrEqual(lineOf(text, 'x-assumption'));
  });

  it('accepts a well-formed assumption anywhere in a spec, with or without source', async () => {
    const text = openApi(`  /things:
    get:
      operationId: getThings
      x-assumption:
        decision: Guessed.
        reason: Because.
      responses:
        "200":
          description: OK
          x-assumption:
            decision: Guessed.
            reason: Because.
            source: service-facts.md
`);
    expect(await problemsOf('capi-assumption-well-formed', 'assumptions.yaml', text)).toEqual([]);
  });
});

describe('the built-in rulesets spectral:oas and spectral:asyncapi apply alongside the project rules', () => {
  it('spectral:oas reports an OpenAPI document without info.contact', async () => {
    const text = openApi(`  /things:
    get:
      operationId: getThings
      responses:
        "200":
          description: OK
`);
    expect(await problemsOf('info-contact', 'no-contact.yaml', text)).toHaveLength(1);
  });

  it('spectral:asyncapi reports an AsyncAPI 3 document without info.contact', async () => {
    const text = `asyncapi: 3.0.0
info:
  title: Seeded
  version: 1.0.0
  description: Seeded.
channels: {}
operations: {}
`;
    expect(await problemsOf('asyncapi-info-contact', 'no-contact-asyncapi.yaml', text)).toHaveLength(1);
  });
});
