import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { generateEventTypes } from '../scripts/generate-event-types.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh temporary directory, removed when the current test finishes. */
function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(prefix);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const bundledSpec = resolve(packageDir, '../../specs/dist/asyncapi.json');
const readSpec = () => JSON.parse(readFileSync(bundledSpec, 'utf8'));
const runGen = (...args: string[]) => spawnSync(process.execPath, [join(packageDir, 'scripts/gen.mjs'), ...args], { cwd: packageDir, encoding: 'utf8' });

// One generation shared by the tests below: modelina takes seconds per run.
let spec: any;
let specBefore: string;
let generated: Awaited<ReturnType<typeof generateEventTypes>>;
beforeAll(async () => {
  spec = readSpec();
  specBefore = JSON.stringify(spec);
  generated = await generateEventTypes(spec);
});

describe('the committed src/generated files are what the spec generates', () => {
  // The generated files are their own snapshots: `vitest -u` or `pnpm gen` updates them,
  // and a spec change without regenerated files fails here and in the review workflow.
  it('models.ts and events.ts match a fresh generation from specs/dist/asyncapi.json', async () => {
    const files = generated;
    await expect(files['models.ts']).toMatchFileSnapshot('../src/generated/models.ts');
    await expect(files['events.ts']).toMatchFileSnapshot('../src/generated/events.ts');
  });

  it('names the source spec at the top of every generated file', async () => {
    for (const name of ['models.ts', 'events.ts']) {
      const text = readFileSync(join(packageDir, 'src/generated', name), 'utf8');
      expect(text.split('\n').slice(0, 3).join('\n')).toMatch(/generated\. Do not edit[\s\S]*Source: specs\/asyncapi\.yaml \(info\.version \S+\), read from specs\/dist\/asyncapi\.json/);
    }
  });
});

describe('generation is deterministic', () => {
  it('two runs from the same spec are byte-identical', async () => {
    const second = await generateEventTypes(readSpec());
    expect(second).toStrictEqual(generated);
  });

  it('gen --check, run as its own process, finds the files on disk up to date', () => {
    const result = runGen('--check');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('does not modify the spec document it is given', () => {
    expect(JSON.stringify(spec)).toBe(specBefore);
  });
});

describe('the generated files type-check on their own (tsc --noEmit)', () => {
  it('passes the strictest compiler settings as plain Node ESM', () => {
    // A throw-away tsconfig so that nothing but the generated files (and no @types) is in scope.
    const project = join(temporaryDirectory(join(tmpdir(), 'event-types-tsc-')), 'tsconfig.json');
    writeFileSync(project, JSON.stringify({
      compilerOptions: {
        noEmit: true, strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true, isolatedModules: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', types: [],
      },
      files: ['models.ts', 'events.ts'].map((name) => join(packageDir, 'src/generated', name)),
    }));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '--project', project], { cwd: packageDir, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('gen explains what to do when the bundled spec is missing or not JSON', () => {
  it('exits 1 naming the missing bundle and the command that builds it', () => {
    const result = runGen('--spec', join(tmpdir(), 'no-such-dir', 'asyncapi.json'), '--check');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('[SPEC_NOT_FOUND]');
    expect(result.stderr).toContain('pnpm --filter @capi/specs build');
  });

  it('exits 1 with a clear message for a file that is not JSON', () => {
    const file = join(temporaryDirectory(join(tmpdir(), 'event-types-')), 'asyncapi.json');
    writeFileSync(file, 'asyncapi: 3.0.0\n');
    const result = runGen('--spec', file, '--check');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('[SPEC_NOT_JSON]');
  });
});
