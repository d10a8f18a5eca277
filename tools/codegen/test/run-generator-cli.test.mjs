import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GenerationError, runGeneratorCli } from '../index.mjs';
import { temporaryDirectory } from '../testing.mjs';

class ExampleGenerationError extends GenerationError {}

/** A repository with packages/example and specs/dist/example.json holding `spec`. */
function exampleRepository(/** @type {unknown} */ spec = { title: 'Example' }) {
  const root = temporaryDirectory(join(tmpdir(), 'codegen-kit-'));
  const packageDir = join(root, 'packages/example');
  mkdirSync(packageDir, { recursive: true });
  mkdirSync(join(root, 'specs/dist'), { recursive: true });
  writeFileSync(join(root, 'specs/dist/example.json'), JSON.stringify(spec));
  return { root, packageDir };
}

/** Runs the CLI and returns its exit code and what it printed on stderr. */
async function run(/** @type {Partial<Parameters<typeof runGeneratorCli>[0]>} */ options) {
  const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    const code = await runGeneratorCli({
      packageDir: '', packageName: '@capi/example', bundlePath: 'specs/dist/example.json',
      loadGenerator: async () => async (doc) => ({ 'example.ts': `// ${doc.title}\n` }),
      args: [], ...options,
    });
    return { code, stderr: stderr.mock.calls.map((call) => call.join(' ')).join('\n') };
  } finally {
    stderr.mockRestore();
  }
}

describe('gen writes what the spec generates into src/generated', () => {
  it('writes every file the generator returns and exits 0', async () => {
    const { packageDir } = exampleRepository();
    const result = await run({ packageDir });
    expect(result).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(join(packageDir, 'src/generated/example.ts'), 'utf8')).toBe('// Example\n');
  });

  it('reads another bundle with --spec', async () => {
    const { root, packageDir } = exampleRepository();
    writeFileSync(join(root, 'other.json'), JSON.stringify({ title: 'Other' }));
    expect((await run({ packageDir, args: ['--spec', join(root, 'other.json')] })).code).toBe(0);
    expect(readFileSync(join(packageDir, 'src/generated/example.ts'), 'utf8')).toBe('// Other\n');
  });
});

describe('gen --check fails when the files on disk are out of date with the spec', () => {
  it('exits 0 and writes nothing when the files are up to date', async () => {
    const { packageDir } = exampleRepository();
    await run({ packageDir });
    expect(await run({ packageDir, args: ['--check'] })).toEqual({ code: 0, stderr: '' });
  });

  it('names each stale or missing file and the command that regenerates it', async () => {
    const { packageDir } = exampleRepository();
    const result = await run({ packageDir, args: ['--check'] });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`Out of date with the spec: ${join(packageDir, 'src/generated/example.ts')}. Run pnpm gen at the repository root and commit the result.`);
  });
});

describe('gen explains a bundled spec that is missing or not JSON', () => {
  it('reports SPEC_NOT_FOUND with the command that builds the specs', async () => {
    const { packageDir } = exampleRepository();
    const result = await run({ packageDir, args: ['--spec', join(packageDir, 'missing.json')] });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`example gen [SPEC_NOT_FOUND]: Cannot read ${join(packageDir, 'missing.json')}; build the specs first: pnpm --filter @capi/specs build (turbo does it before gen).`);
  });

  it('reports SPEC_NOT_JSON naming the bundle to pass instead of the YAML source', async () => {
    const { root, packageDir } = exampleRepository();
    writeFileSync(join(root, 'example.yaml'), 'openapi: 3.1.0\n');
    const result = await run({ packageDir, args: ['--spec', join(root, 'example.yaml')] });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^example gen \[SPEC_NOT_JSON\]: .*example\.yaml is not JSON \(.+\); pass the bundled spec \(specs\/dist\/example\.json\), not the YAML source\.$/s);
  });

  it('does not load the generator when there is no spec to give it', async () => {
    const { packageDir } = exampleRepository();
    const loadGenerator = vi.fn(async () => async () => ({}));
    await run({ packageDir, loadGenerator, args: ['--spec', join(packageDir, 'missing.json')] });
    expect(loadGenerator).not.toHaveBeenCalled();
  });
});

describe('gen reports the generator\'s own GenerationError and rethrows anything else', () => {
  it('prints a subclass\'s code and message and exits 1', async () => {
    const { packageDir } = exampleRepository();
    const loadGenerator = async () => async () => { throw new ExampleGenerationError('NO_TITLE', 'Give the schema a title.'); };
    expect(await run({ packageDir, loadGenerator })).toEqual({ code: 1, stderr: 'example gen [NO_TITLE]: Give the schema a title.' });
  });

  it('rethrows an error that is not a GenerationError (a bug of the generator)', async () => {
    const { packageDir } = exampleRepository();
    const loadGenerator = async () => async () => { throw new TypeError('boom'); };
    await expect(run({ packageDir, loadGenerator })).rejects.toThrowError(TypeError);
  });
});

describe('gen rejects unknown arguments with its usage', () => {
  it('reports INVALID_ARGUMENTS for an unknown option', async () => {
    const { packageDir } = exampleRepository();
    const result = await run({ packageDir, args: ['--chek'] });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^example gen \[INVALID_ARGUMENTS\]: .*'--chek'.*; usage: node scripts\/gen\.mjs \[--spec <bundled spec \.json>\] \[--check\]\.$/s);
  });
});

describe('GenerationError carries a code and the name of its subclass', () => {
  it('is an Error with code, message and the subclass name', () => {
    const error = new ExampleGenerationError('NO_TITLE', 'Give the schema a title.');
    expect(error).toBeInstanceOf(GenerationError);
    expect(error).toBeInstanceOf(Error);
    expect({ name: error.name, code: error.code, message: error.message }).toEqual({ name: 'ExampleGenerationError', code: 'NO_TITLE', message: 'Give the schema a title.' });
  });
});
