#!/usr/bin/env node
// `pnpm bench`: runs every package's bench/index.mjs one after another (never in parallel:
// they would compete for the two cores) and prints one table of all the figures.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable } from './index.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const only = process.argv.slice(2);
const packages = readdirSync(join(root, 'packages'))
  .map((dir) => join(root, 'packages', dir))
  .filter((dir) => existsSync(join(dir, 'bench', 'index.mjs')))
  .filter((dir) => only.length === 0 || only.some((name) => dir.endsWith(name)));

const rows = [];
for (const dir of packages) {
  const name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
  console.log(`\n== ${name}`);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['bench/index.mjs'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('BENCH ')) rows.push({ package: name, ...JSON.parse(line.slice(6)) });
        else console.log(line);
      }
    });
    child.on('close', resolve);
  });
  if (code !== 0) {
    console.error(`bench of ${name} failed with exit code ${code}`);
    process.exitCode = 1;
  }
}
console.log('\n' + formatTable(rows));
