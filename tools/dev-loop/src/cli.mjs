#!/usr/bin/env node
// `pnpm dev`: watches the spec sources (specs/openapi.yaml, specs/asyncapi.yaml, specs/schemas/)
// and, on each change, bundles them and regenerates the generated code of @capi/openapi-types,
// @capi/event-types, @capi/webhook-validator and @capi/sandbox in this one warm process, then
// rebuilds the dist of the packages whose generated code changed (their `tsup`).
//   --no-build  regenerate only; leave dist/ to `pnpm build`
// It does not lint: `pnpm lint:specs` (and CI) do. Stop it with Ctrl-C.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRegenerator, generatedPackages, repoRoot } from './regenerate.mjs';

const { values } = parseArgs({ options: { 'no-build': { type: 'boolean', default: false } } });
const rebuildDist = !values['no-build'];
const specsDir = join(repoRoot, 'specs');

/** Runs each package's own build (tsup), two at a time: the machine has few cores. */
async function buildPackages(packages) {
  const queue = [...packages];
  const failed = [];
  const worker = async () => {
    for (let pkg = queue.shift(); pkg; pkg = queue.shift()) {
      const dir = join(repoRoot, 'packages', pkg);
      const code = await new Promise((resolve) => {
        spawn(join(dir, 'node_modules', '.bin', 'tsup'), [], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] }).on('close', resolve);
      });
      if (code !== 0) failed.push(pkg);
    }
  };
  await Promise.all([worker(), worker()]);
  return failed;
}

const regenerate = await createRegenerator({ specsDir });
let running = false;
let pending = false;

async function run(reason) {
  if (running) {
    pending = true;
    return;
  }
  running = true;
  try {
    const { changed, seconds } = await regenerate();
    const packages = generatedPackages.filter((pkg) => changed.some((file) => file.startsWith(`packages/${pkg}/`)));
    console.log(`dev: ${reason}: generated code current in ${seconds.toFixed(2)} s (${changed.length === 0 ? 'nothing changed' : `${changed.length} files changed: ${changed.join(', ')}`})`);
    if (rebuildDist && packages.length > 0) {
      const started = performance.now();
      const failed = await buildPackages(packages);
      if (failed.length > 0) console.error(`dev: the build of ${failed.join(', ')} failed (see above)`);
      else console.log(`dev: dist rebuilt in ${((performance.now() - started) / 1000).toFixed(2)} s (${packages.map((pkg) => `@capi/${pkg}`).join(', ')})`);
    }
  } catch (error) {
    // A half-edited spec is normal while typing: say why, keep watching.
    console.error(`dev: ${reason}: not regenerated: ${error instanceof Error ? error.message : error}`);
  } finally {
    running = false;
    if (pending) {
      pending = false;
      await run('changed again');
    }
  }
}

await run('start');
let timer;
const onChange = (file) => {
  clearTimeout(timer);
  // Editors write in several steps; one regeneration per burst.
  timer = setTimeout(() => run(`${file ?? 'specs'} changed`), 50);
};
// Directories, not files: an editor that saves by replacing the file would end a file watch.
watch(specsDir, (_event, file) => {
  if (file === 'openapi.yaml' || file === 'asyncapi.yaml') onChange(file);
});
watch(join(specsDir, 'schemas'), (_event, file) => {
  if (file?.endsWith('.yaml')) onChange(`schemas/${file}`);
});
console.log(`dev: watching specs/openapi.yaml, specs/asyncapi.yaml and specs/schemas/ (Ctrl-C stops)`);
