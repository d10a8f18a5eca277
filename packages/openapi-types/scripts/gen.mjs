#!/usr/bin/env node
// Writes src/generated/ from specs/dist/openapi.json (run by `pnpm gen` / turbo `gen`).
// --spec <path> reads another bundle; --check writes nothing and fails when the files on
// disk differ from what the spec generates (for the review workflow).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OpenapiTypesGenerationError } from './generation-error.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { spec: { type: 'string' }, check: { type: 'boolean', default: false } } });
const specFile = resolve(values.spec ?? resolve(packageDir, '../../specs/dist/openapi.json'));
const outDir = resolve(packageDir, 'src/generated');

try {
  let text;
  try { text = readFileSync(specFile, 'utf8'); } catch {
    throw new OpenapiTypesGenerationError('SPEC_NOT_FOUND',
      `Cannot read ${specFile}; build the specs first: pnpm --filter @capi/specs build (turbo does it before gen).`);
  }
  let doc;
  try { doc = JSON.parse(text); } catch (error) {
    throw new OpenapiTypesGenerationError('SPEC_NOT_JSON',
      `${specFile} is not JSON (${error instanceof Error ? error.message : error}); pass the bundled spec (specs/dist/openapi.json), not the YAML source.`);
  }
  // Loaded only once there is a spec: openapi-typescript takes seconds to import.
  const { generateOpenapiTypes } = await import('./generate-openapi-types.mjs');
  const files = await generateOpenapiTypes(doc);
  const stale = [];
  for (const [name, content] of Object.entries(files)) {
    const file = resolve(outDir, name);
    if (values.check) {
      let current = null;
      try { current = readFileSync(file, 'utf8'); } catch { /* missing counts as stale */ }
      if (current !== content) stale.push(file);
    } else {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(file, content);
    }
  }
  if (stale.length > 0) {
    console.error(`Out of date with the spec: ${stale.join(', ')}. Run pnpm --filter @capi/openapi-types gen and commit the result.`);
    process.exit(1);
  }
} catch (error) {
  if (!(error instanceof OpenapiTypesGenerationError)) throw error;
  console.error(`openapi-types gen [${error.code}]: ${error.message}`);
  process.exit(1);
}
