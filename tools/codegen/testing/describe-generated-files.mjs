import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runTsc } from './run-tsc.mjs';
import { temporaryDirectory } from './temporary-directory.mjs';

const escapeRegExp = (/** @type {string} */ text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The specification of a generated package's `src/generated/`: the committed files are what
 * the spec generates (file snapshots), each names its source spec, generation is
 * deterministic (in-process and through `gen --check` in a process), the spec document is
 * not modified, the files type-check on their own, and `gen` explains a missing or non-JSON
 * bundle.
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package
 * @param {string} options.packageName e.g. `@capi/event-types`
 * @param {{ specPath: string, bundlePath: string }} options.specSource repository-relative paths of the spec and its bundle
 * @param {(doc: any) => Promise<Record<string, string>>} options.generate the package's generator
 * @param {string[]} options.fileNames the files it writes into `src/generated/`, in order
 * @param {string} options.yamlSource a line of the YAML source, to prove `gen` refuses it
 * @example
 * describeGeneratedFiles({
 *   packageDir, packageName: '@capi/event-types', specSource: SPEC_SOURCE, generate: generateEventTypes,
 *   fileNames: ['models.ts', 'events.ts'], yamlSource: 'asyncapi: 3.0.0\n',
 * });
 */
export function describeGeneratedFiles({ packageDir, packageName, specSource, generate, fileNames, yamlSource }) {
  const shortName = packageName.slice(packageName.indexOf('/') + 1);
  const bundledSpec = join(packageDir, '../..', specSource.bundlePath);
  const readSpec = () => JSON.parse(readFileSync(bundledSpec, 'utf8'));
  const runGen = (/** @type {string[]} */ ...args) => spawnSync(process.execPath, [join(packageDir, 'scripts/gen.mjs'), ...args], { cwd: packageDir, encoding: 'utf8' });

  // One generation shared by the tests below: the generators take seconds per run.
  /** @type {any} */ let spec;
  /** @type {string} */ let specBefore;
  /** @type {Record<string, string>} */ let generated;
  beforeAll(async () => {
    spec = readSpec();
    specBefore = JSON.stringify(spec);
    generated = await generate(spec);
  });

  describe('the committed src/generated files are what the spec generates', () => {
    // The generated files are their own snapshots: `vitest -u` or `pnpm gen` updates them,
    // and a spec change without regenerated files fails here and in the review workflow.
    it(`${fileNames.join(' and ')} match a fresh generation from ${specSource.bundlePath}`, async () => {
      for (const name of fileNames) {
        await expect(generated[name]).toMatchFileSnapshot(join(packageDir, 'src/generated', name));
      }
    });

    it('names the source spec at the top of every generated file', () => {
      const source = new RegExp(`generated\\. Do not edit[\\s\\S]*Source: ${escapeRegExp(specSource.specPath)} \\(info\\.version \\S+\\), read from ${escapeRegExp(specSource.bundlePath)}`);
      for (const name of fileNames) {
        const text = readFileSync(join(packageDir, 'src/generated', name), 'utf8');
        expect(text.split('\n').slice(0, 3).join('\n')).toMatch(source);
      }
    });
  });

  describe('generation is deterministic', () => {
    it('two runs from the same spec are byte-identical', async () => {
      const second = await generate(readSpec());
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
      const project = join(temporaryDirectory(join(tmpdir(), `${shortName}-tsc-`)), 'tsconfig.json');
      writeFileSync(project, JSON.stringify({
        compilerOptions: {
          noEmit: true, strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
          verbatimModuleSyntax: true, isolatedModules: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', types: [],
        },
        files: fileNames.map((name) => join(packageDir, 'src/generated', name)),
      }));
      const result = runTsc(project, packageDir);
      expect(result.output).toBe('');
      expect(result.status).toBe(0);
    });
  });

  describe('gen explains what to do when the bundled spec is missing or not JSON', () => {
    it('exits 1 naming the missing bundle and the command that builds it', () => {
      const result = runGen('--spec', join(tmpdir(), 'no-such-dir', basename(specSource.bundlePath)), '--check');
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('[SPEC_NOT_FOUND]');
      expect(result.stderr).toContain('pnpm --filter @capi/specs build');
    });

    it('exits 1 with a clear message for a file that is not JSON', () => {
      const file = join(temporaryDirectory(join(tmpdir(), `${shortName}-`)), basename(specSource.bundlePath));
      writeFileSync(file, yamlSource);
      const result = runGen('--spec', file, '--check');
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('[SPEC_NOT_JSON]');
    });
  });
}
