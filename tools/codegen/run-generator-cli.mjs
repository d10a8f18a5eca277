import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GenerationError } from './generation-error.mjs';

/**
 * @typedef {(doc: any) => Promise<Record<string, string>>} Generate
 *   turns a bundled spec into the files of `src/generated/` (file name -> content)
 */

/**
 * The `gen` script of a generated package: reads the bundled spec (`--spec <path>` reads
 * another one), then writes `src/generated/`, or with `--check` writes nothing and fails
 * when the files on disk differ from what the spec generates (for the review workflow).
 * A `GenerationError` (of any subclass) is printed as `<name> gen [CODE]: message`; any
 * other error is a bug of the generator and is rethrown.
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package (two levels below the repository root)
 * @param {string} options.packageName e.g. `@capi/openapi-types`, named in the messages
 * @param {string} options.bundlePath repository-relative path of the default bundled spec, e.g. `specs/dist/openapi.json`
 * @param {() => Promise<Generate>} options.loadGenerator imported only once a spec was read: generators take seconds to import
 * @param {string[]} [options.args] command-line arguments, `process.argv.slice(2)` by default
 * @returns {Promise<number>} the exit code: 0, or 1 with the reason on stderr
 * @example
 * process.exitCode = await runGeneratorCli({
 *   packageDir, packageName: '@capi/openapi-types', bundlePath: 'specs/dist/openapi.json',
 *   loadGenerator: async () => (await import('./generate-openapi-types.mjs')).generateOpenapiTypes,
 * });
 */
export async function runGeneratorCli({ packageDir, packageName, bundlePath, loadGenerator, args = process.argv.slice(2) }) {
  const shortName = packageName.slice(packageName.indexOf('/') + 1);
  try {
    let values;
    try {
      ({ values } = parseArgs({ args, options: { spec: { type: 'string' }, check: { type: 'boolean', default: false } } }));
    } catch (error) {
      throw new GenerationError('INVALID_ARGUMENTS',
        `${error instanceof Error ? error.message : error}; usage: node scripts/gen.mjs [--spec <bundled spec .json>] [--check].`);
    }
    const specFile = resolve(values.spec ?? resolve(packageDir, '../..', bundlePath));
    const doc = readBundledSpec(specFile, bundlePath);
    const generate = await loadGenerator();
    const files = await generate(doc);
    const stale = writeOrCompare(resolve(packageDir, 'src/generated'), files, values.check === true);
    if (stale.length > 0) {
      console.error(`Out of date with the spec: ${stale.join(', ')}. Run pnpm gen at the repository root and commit the result.`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (!(error instanceof GenerationError)) throw error;
    console.error(`${shortName} gen [${error.code}]: ${error.message}`);
    return 1;
  }
}

/**
 * @param {string} specFile absolute path that was asked for
 * @param {string} bundlePath repository-relative default, named in the advice
 * @returns {unknown} the parsed document
 */
function readBundledSpec(specFile, bundlePath) {
  let text;
  try { text = readFileSync(specFile, 'utf8'); } catch {
    throw new GenerationError('SPEC_NOT_FOUND',
      `Cannot read ${specFile}; build the specs first: pnpm --filter @capi/specs build (turbo does it before gen).`);
  }
  try { return JSON.parse(text); } catch (error) {
    throw new GenerationError('SPEC_NOT_JSON',
      `${specFile} is not JSON (${error instanceof Error ? error.message : error}); pass the bundled spec (${bundlePath}), not the YAML source.`);
  }
}

/**
 * Writes each file into `outDir`, or with `check` only lists the ones whose content on disk
 * differs (a missing file counts as stale).
 *
 * @param {string} outDir
 * @param {Record<string, string>} files
 * @param {boolean} check
 * @returns {string[]} absolute paths of the stale files (always empty when writing)
 */
function writeOrCompare(outDir, files, check) {
  const stale = [];
  for (const [name, content] of Object.entries(files)) {
    const file = resolve(outDir, name);
    if (check) {
      let current = null;
      try { current = readFileSync(file, 'utf8'); } catch { /* missing counts as stale */ }
      if (current !== content) stale.push(file);
    } else {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(file, content);
    }
  }
  return stale;
}
