import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkGeneratedCode } from '../src/generated-code-check.mjs';
import { createFixtureRepo, type FixtureRepo } from './fixture-repo';

let repo: FixtureRepo;
beforeEach(() => {
  repo = createFixtureRepo();
  repo.write('packages/openapi-types/src/generated/schema.ts', '// generated from specs/openapi.yaml\nexport type A = string;\n');
  // A generator whose output the test chooses: the committed text, a changed type, or an extra file.
  repo.write(
    'gen.mjs',
    [
      "import { mkdirSync, writeFileSync } from 'node:fs';",
      "const outputs = { same: 'export type A = string;', changed: 'export type A = number;' };",
      "writeFileSync('packages/openapi-types/src/generated/schema.ts', `// generated from specs/openapi.yaml\\n${outputs[process.argv[2]] ?? outputs.same}\\n`);",
      "if (process.argv[2] === 'extra') { mkdirSync('packages/client/src/generated', { recursive: true }); writeFileSync('packages/client/src/generated/extra.ts', 'export {};\\n'); }",
    ].join('\n'),
  );
  repo.commit('base');
});
afterEach(() => repo.remove());

describe('passes when regenerating changes nothing', () => {
  it('accepts committed output equal to the generator output', async () => {
    const result = await checkGeneratedCode({ root: repo.root, genCommand: 'node gen.mjs same' });
    expect(result.ok).toBe(true);
  });
});

describe('fails when the committed generated code is stale', () => {
  it('lists the files that regenerating changed and says to run pnpm gen', async () => {
    const result = await checkGeneratedCode({ root: repo.root, genCommand: 'node gen.mjs changed' });
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('this gate has regenerated them in your tree (listed below); review and commit');
    expect(result.details.join('\n')).toContain('packages/openapi-types/src/generated/schema.ts');
  });

  it('notices a generated file that is new and not committed', async () => {
    const result = await checkGeneratedCode({ root: repo.root, genCommand: 'node gen.mjs extra' });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toContain('packages/client/src/generated/extra.ts');
  });
});

describe('fails when a generator fails', () => {
  it('reports the exit code and the generator output', async () => {
    const result = await checkGeneratedCode({ root: repo.root, genCommand: `node -e "console.error('schema User not found'); process.exit(3)"` });
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('exit 3');
    expect(result.details.join('\n')).toContain('schema User not found');
  });
});

describe('runs only the generators that exist', () => {
  it('filters turbo to the packages with a gen script', async () => {
    const { defaultGenCommand } = await import('../src/generated-code-check.mjs');
    repo.write('packages/openapi-types/package.json', { name: '@capi/openapi-types', version: '1.0.0', scripts: { gen: 'node scripts/gen.mjs' } });
    expect(defaultGenCommand(repo.root)).toBe('pnpm turbo run gen --output-logs=errors-only --filter=@capi/openapi-types');
  });
});
