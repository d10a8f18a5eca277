#!/usr/bin/env node
// `pnpm gen`: writes src/generated/ from the spec. `--check` writes nothing and exits 1 when
// the committed files are out of date with the spec (for review workflows).
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { generate, packageDir } from './generate.mjs';

let check;
try {
  // Strict: a mistyped `--check` must not regenerate the files and exit 0.
  check = parseArgs({ options: { check: { type: 'boolean', default: false } } }).values.check;
} catch (error) {
  console.error(`webhook-validator gen [INVALID_ARGUMENTS]: ${error instanceof Error ? error.message : error}; usage: node scripts/gen.mjs [--check].`);
  process.exit(1);
}
const files = await generate();
let stale = 0;
for (const [path, content] of Object.entries(files)) {
  const target = join(packageDir, path);
  const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
  if (current === content) continue;
  if (check) {
    console.error(`${path} is out of date with the spec: run \`pnpm gen\` at the repository root and commit it`);
    stale++;
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${path}`);
  }
}
if (stale > 0) process.exitCode = 1;
