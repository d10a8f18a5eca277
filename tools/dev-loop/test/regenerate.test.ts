// `pnpm dev` regenerates in one warm process with the packages' own generator functions: what
// it writes must be what `pnpm build` writes, a spec edit must reach every generated package,
// and a run without an edit must touch nothing. Run on a scratch copy of the specs, written into
// a scratch tree, so the repository is never modified by the test.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegenerator, repoRoot } from '../src/regenerate.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'capi-dev-loop-'));
const specsDir = join(scratch, 'specs');
const outputRoot = join(scratch, 'out');
for (const source of ['openapi.yaml', 'asyncapi.yaml', 'schemas']) cpSync(join(repoRoot, 'specs', source), join(specsDir, source), { recursive: true });

// The validator's header names the directory its schemas were read from.
const scratchSchemas = relative(repoRoot, join(specsDir, 'dist', 'schemas'));
const committed = [
  'packages/openapi-types/src/generated/openapi.ts',
  'packages/openapi-types/src/generated/schema-aliases.ts',
  'packages/event-types/src/generated/models.ts',
  'packages/event-types/src/generated/events.ts',
  'packages/webhook-validator/src/generated/schemas.ts',
  'packages/webhook-validator/src/generated/validators.js',
  'packages/webhook-validator/src/generated/validators.d.ts',
];
const read = (file: string) => readFileSync(file, 'utf8').replaceAll(scratchSchemas, 'specs/dist/schemas');

let regenerate: Awaited<ReturnType<typeof createRegenerator>>;
let first: { changed: string[]; seconds: number };
beforeAll(async () => {
  regenerate = await createRegenerator({ specsDir, outputRoot });
  first = await regenerate();
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('writes what pnpm build writes', () => {
  it.each(committed)('%s equals the committed file', (file) => {
    expect(first.changed).toContain(file);
    expect(read(join(outputRoot, file))).toBe(readFileSync(join(repoRoot, file), 'utf8'));
  });

  it("the sandbox's embedded contract and the bundles, byte for byte as their own scripts write them", () => {
    for (const file of ['openapi.json', 'asyncapi.json', 'openapi.dereferenced.json', 'schemas/User.json']) {
      expect(readFileSync(join(specsDir, 'dist', file), 'utf8'), file).toBe(readFileSync(join(repoRoot, 'specs/dist', file), 'utf8'));
    }
    const sandboxContract = 'packages/sandbox/src/generated/openapi-contract.ts';
    expect(first.changed).toContain(sandboxContract);
    if (existsSync(join(repoRoot, sandboxContract))) expect(read(join(outputRoot, sandboxContract))).toBe(readFileSync(join(repoRoot, sandboxContract), 'utf8'));
  });
});

describe('a run without a spec change touches nothing', () => {
  it('reports no changed file', async () => {
    expect((await regenerate()).changed).toEqual([]);
  });
});

describe('a one-line description edit reaches the types, the validator and the sandbox', () => {
  it('rewrites exactly the files that carry the description, each with the new text', async () => {
    const file = join(specsDir, 'schemas/User.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('    description: Unique user identifier.\n', '    description: Unique user identifier, edited by the loop test.\n'));
    const { changed, seconds } = await regenerate();
    expect(seconds).toBeGreaterThan(0);
    const generated = [
      'packages/openapi-types/src/generated/openapi.ts',
      'packages/event-types/src/generated/models.ts',
      'packages/webhook-validator/src/generated/schemas.ts',
      'packages/sandbox/src/generated/openapi-contract.ts',
    ];
    expect(changed.filter((path) => path.startsWith('packages/')).sort()).toEqual(generated.sort());
    for (const path of generated) expect(readFileSync(join(outputRoot, path), 'utf8'), path).toContain('Unique user identifier, edited by the loop test.');
    expect(changed).toContain('dist/schemas/User.json');
  });

  it('a spec the bundler refuses fails the run with the reason, and the next good save recovers', async () => {
    const file = join(specsDir, 'schemas/User.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('title: User\n', 'title: Person\n'));
    await expect(regenerate()).rejects.toThrow(/schemas\/User\.yaml: title is "Person" but must equal the file name "User"/);
    writeFileSync(file, text);
    expect((await regenerate()).changed).toEqual([]);
  });
});
