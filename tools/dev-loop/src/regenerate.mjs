// The maintainer's loop in one process: bundle the specs and run every generator, with the
// generator modules (openapi-typescript, modelina, ajv, esbuild, @asyncapi/parser) imported
// once, so that a spec edit costs the generation itself and not seconds of imports and turbo
// task start-up. It calls the very functions the packages' `gen` scripts call, so what it
// writes is byte for byte what `pnpm build` writes.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository root (this file is tools/dev-loop/src/regenerate.mjs). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The packages whose `src/generated/` the loop writes, with the dist they are built into. */
export const generatedPackages = ['openapi-types', 'event-types', 'webhook-validator', 'sandbox'];

const load = (file) => import(pathToFileURL(join(repoRoot, file)).href);

/** Writes `text` to `file` unless it already holds exactly that; returns whether it wrote. */
function writeIfChanged(file, text) {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return false;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return true;
}

/**
 * Imports the bundler and the four generators once and returns `regenerate()`, which bundles
 * the specs of `specsDir` into `distDir` and writes each package's `src/generated/` under
 * `outputRoot` (files whose content is unchanged are not touched, so nothing downstream sees a
 * change that is not one).
 *
 * @param {{ specsDir?: string, distDir?: string, outputRoot?: string }} [options] defaults: this
 *   repository's `specs/`, `specs/dist/` and root; a test points them at scratch copies
 * @returns {Promise<() => Promise<{ changed: string[], seconds: number }>>} `changed`: the written
 *   files, relative to `outputRoot` (spec bundles relative to `distDir`'s parent)
 * @example
 * const regenerate = await createRegenerator();
 * const { changed, seconds } = await regenerate(); // after an edit of specs/schemas/User.yaml
 */
export async function createRegenerator({ specsDir = join(repoRoot, 'specs'), distDir = join(specsDir, 'dist'), outputRoot = repoRoot } = {}) {
  const [{ buildSpecOutputs }, { generateOpenapiTypes }, { generateEventTypes }, { generate: generateValidator }, { renderOpenapiContract }] = await Promise.all([
    load('specs/scripts/bundle.mjs'),
    load('packages/openapi-types/scripts/generate-openapi-types.mjs'),
    load('packages/event-types/scripts/generate-event-types.mjs'),
    load('packages/webhook-validator/scripts/generate.mjs'),
    load('packages/sandbox/scripts/embed-openapi.mjs'),
  ]);

  return async function regenerate() {
    const started = performance.now();
    const changed = [];
    const bundles = await buildSpecOutputs(specsDir);
    for (const [path, text] of bundles) if (writeIfChanged(join(distDir, path), text)) changed.push(relative(dirname(distDir), join(distDir, path)));
    // A schema file that was deleted leaves no standalone schema behind.
    for (const file of existsSync(join(distDir, 'schemas')) ? readdirSync(join(distDir, 'schemas')) : []) {
      if (!bundles.has(`schemas/${file}`)) rmSync(join(distDir, 'schemas', file));
    }
    const bundle = (name) => JSON.parse(/** @type {string} */ (bundles.get(name)));
    const inPackage = (pkg, dir, files) => Object.entries(files).map(([name, text]) => [join('packages', pkg, dir, name), text]);
    const generated = await Promise.all([
      generateOpenapiTypes(bundle('openapi.json')).then((files) => inPackage('openapi-types', 'src/generated', files)),
      generateEventTypes(bundle('asyncapi.json')).then((files) => inPackage('event-types', 'src/generated', files)),
      generateValidator({ schemasDir: join(distDir, 'schemas') }).then((files) => inPackage('webhook-validator', '', files)),
      inPackage('sandbox', 'src/generated', { 'openapi-contract.ts': renderOpenapiContract(bundle('openapi.dereferenced.json')).text }),
    ]);
    for (const [path, text] of generated.flat()) if (writeIfChanged(join(outputRoot, path), text)) changed.push(path);
    return { changed, seconds: (performance.now() - started) / 1000 };
  };
}
