#!/usr/bin/env node
// Writes src/generated/ from specs/dist/asyncapi.json (run by `pnpm gen` / turbo `gen`).
// --spec <path> reads another bundle; --check writes nothing and fails when the files on
// disk differ from what the spec generates (for the review workflow).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGeneratorCli } from '@capi/codegen-kit';

process.exitCode = await runGeneratorCli({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/event-types',
  bundlePath: 'specs/dist/asyncapi.json',
  // Loaded only once there is a spec: modelina takes seconds to import.
  loadGenerator: async () => (await import('./generate-event-types.mjs')).generateEventTypes,
});
