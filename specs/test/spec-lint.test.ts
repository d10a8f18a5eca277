// `pnpm lint:specs`: on main both specs parse and every tool reports zero errors and zero
// warnings; a broken spec fails the run with the file and line of each problem.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildSpecOutputs } from '../scripts/bundle.mjs';
import { lintSpecs } from '../scripts/lint.mjs';
import { lintExamples } from '../scripts/lib/lint-examples.mjs';
import { createScratchSpecs, specsDir, type ScratchSpecs } from './support/scratch-specs';

interface LintProblem {
  tool: string;
  rule: string;
  severity: string;
  file: string;
  line: number;
  message: string;
}

// Both specs and their bundles parse: @asyncapi/parser and Redocly are among the tools.
describe('the specs on main pass every lint with zero errors and zero warnings', () => {
  let problems: LintProblem[];

  beforeAll(async () => {
    problems = await lintSpecs(specsDir);
  }, 120_000);

  it.each(['spectral', 'redocly', 'asyncapi-parser', 'examples', 'bundle'])('%s reports nothing', (tool) => {
    expect(problems.filter((problem) => problem.tool === tool)).toEqual([]);
  });
});

describe('every example is valid against its schema and none is missing', () => {
  let scratch: ScratchSpecs;
  afterEach(() => scratch.remove());

  const examplesOf = async (dir: string) => {
    const outputs: Map<string, string> = await buildSpecOutputs(dir);
    const standaloneSchemas = new Map([...outputs].filter(([file]) => file.startsWith('schemas/')).map(([file, text]) => [file.slice(8, -5), JSON.parse(text)]));
    return lintExamples(dir, { openapi: JSON.parse(outputs.get('openapi.json')!), asyncapi: JSON.parse(outputs.get('asyncapi.json')!), standaloneSchemas }) as LintProblem[];
  };

  it('reports a schema example that breaks its schema, at the example', async () => {
    scratch = createScratchSpecs();
    const line = scratch.edit('schemas/KycStatus.yaml', 'examples:\n  - approved', 'examples:\n  - approvedd');
    const problems = await examplesOf(scratch.dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: 'example-valid', file: 'schemas/KycStatus.yaml', line: line + 1 });
    expect(problems[0].message).toContain('must be equal to one of the allowed values');
  });

  it('reports a request example that breaks a limit of section 8, in openapi.yaml', async () => {
    scratch = createScratchSpecs();
    const line = scratch.edit('openapi.yaml', '                  amount: 250000\n                  currency: USD\n      responses:', '                  amount: 2500000\n                  currency: USD\n      responses:');
    const problems = await examplesOf(scratch.dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: 'example-valid', file: 'openapi.yaml' });
    expect(problems[0].line).toBe(line - 1);
    expect(problems[0].message).toContain('/amount must be <= 1000000');
  });

  it('reports a message example whose signature header is not base64 of 64 bytes, in asyncapi.yaml', async () => {
    scratch = createScratchSpecs();
    const line = scratch.edit('asyncapi.yaml', 'X-Webhook-Timestamp: "1795776000"\n            X-Webhook-Signature: +EcT', 'X-Webhook-Timestamp: "1795776000"\n            X-Webhook-Signature: !!str +EcT==');
    const problems = await examplesOf(scratch.dir);
    expect(problems.map((problem) => [problem.file, problem.rule])).toEqual([['asyncapi.yaml', 'example-valid']]);
    expect(problems[0].line).toBe(line - 1);
    expect(problems[0].message).toContain('/X-Webhook-Signature must match pattern');
  });

  it('reports a response without an example', async () => {
    scratch = createScratchSpecs();
    scratch.edit('openapi.yaml', `              examples:
                key:
                  summary: A PEM (SPKI) Ed25519 key
                  value:
                    success: true
                    publicKey: |
                      -----BEGIN PUBLIC KEY-----
                      MCowBQYDK2VwAyEAAeBZbNKJ2eiK+TY34oxEAAfjbtVozGhk8MoPKDp4aqQ=
                      -----END PUBLIC KEY-----
`, '');
    const problems = await examplesOf(scratch.dir);
    expect(problems.map((problem) => [problem.file, problem.rule])).toEqual([['openapi.yaml', 'example-present']]);
    expect(problems[0].message).toContain('the 200 response has no example');
  });
});
