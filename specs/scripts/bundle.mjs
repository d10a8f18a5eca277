// `pnpm --filter @capi/specs build`: writes the bundled specs that every consumer reads (the
// generators, the validator, the sandbox, the docs), bundled by Redocly (lib/bundle-specs.mjs).
//   dist/openapi.json         OpenAPI 3.1, every schema under components/schemas by title
//   dist/asyncapi.json        AsyncAPI 3.0, self-contained the same way
//   dist/openapi.dereferenced.json  openapi.json with every $ref replaced by its target
//   dist/schemas/<Title>.json each schema with its $id, refs pointing to the siblings' $ids
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpecs } from './lib/bundle-specs.mjs';

const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds every output in memory (Redocly's bundler); resolves to a Map relative path -> file text. */
export function buildSpecOutputs(dir = specsDir) {
  return bundleSpecs(dir);
}

/** Writes the outputs to `outDir`, replacing what was there. */
export function writeSpecOutputs(outDir, outputs) {
  rmSync(outDir, { recursive: true, force: true });
  for (const [path, text] of outputs) {
    const file = join(outDir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

// `node scripts/bundle.mjs [--out <dir>]`: the default output is specs/dist.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const outFlag = process.argv.indexOf('--out');
    const outDir = outFlag > 0 ? process.argv[outFlag + 1] : join(specsDir, 'dist');
    if (!outDir) throw new Error('--out needs a directory');
    const outputs = await buildSpecOutputs();
    writeSpecOutputs(outDir, outputs);
    console.log(`specs: wrote ${outputs.size} files to ${outDir}`);
  } catch (error) {
    console.error(`specs: bundle failed: ${error.message}`);
    process.exitCode = 1;
  }
}
