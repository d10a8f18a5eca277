import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { checkSpecLint } from '../src/spec-lint-check.mjs';

const specsDir = path.join(repoRoot, 'specs');
let copy: string;

beforeAll(() => {
  // The spec sources and lint rules, copied: the seeded fault never touches specs/.
  copy = mkdtempSync(path.join(tmpdir(), 'capi-spec-lint-'));
  for (const entry of ['openapi.yaml', 'asyncapi.yaml', 'schemas', 'spectral', '.spectral.yaml', 'redocly.yaml']) {
    cpSync(path.join(specsDir, entry), path.join(copy, entry), { recursive: true });
  }
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('fails the spec lint gate on a spec that breaks the project rules', () => {
  it('reports an operation without an operationId, with the file', async () => {
    const openapi = readFileSync(path.join(copy, 'openapi.yaml'), 'utf8');
    expect(openapi).toContain('operationId: getNonce');
    writeFileSync(path.join(copy, 'openapi.yaml'), openapi.replace(/^\s*operationId: getNonce\n/m, '\n'));
    const result = await checkSpecLint({ root: repoRoot, command: `node ${JSON.stringify(path.join(specsDir, 'scripts/lint.mjs'))} ${JSON.stringify(copy)}` });
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('pnpm lint:specs');
    const report = result.details.join('\n');
    expect(report).toContain('openapi.yaml');
    expect(report).toMatch(/operationId|operation-operationId/);
  }, 180_000);
});
