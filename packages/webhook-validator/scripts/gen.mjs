#!/usr/bin/env node
// `pnpm gen`: writes src/generated/ from the spec. `--check` writes nothing and exits 1 when
// the committed files are out of date with the spec (for review workflows).
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generate, packageDir } from './generate.mjs';

const check = process.argv.includes('--check');
const files = await generate();
let stale = 0;
for (const [path, content] of Object.entries(files)) {
  const target = join(packageDir, path);
  const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
  if (current === content) continue;
  if (check) {
    console.error(`${path} is out of date with the spec: run \`pnpm --filter @capi/webhook-validator gen\` and commit it`);
    stale++;
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${path}`);
  }
}
if (stale > 0) process.exitCode = 1;
