#!/usr/bin/env node
// `pnpm bench:loop`: the maintainer's loop, measured. Makes a one-line edit of a description in
// specs/schemas/User.yaml (a unique marker appended to it), measures the time until the
// generated types (@capi/openapi-types, @capi/event-types) and the validator
// (@capi/webhook-validator) all contain the marker, and restores the file, each way:
//   watch   `pnpm dev` already running (warm), from the save to the generated files
//   turbo   `turbo run build` of the four generated packages after the save (warm cache)
//   cold    the same turbo build with the cache bypassed (`--force`), no edit
// and prints the figures in seconds with the ratio of each to the cold build. The file is
// restored however the run ends (also on Ctrl-C), and the generated code with it.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatTable } from '../../bench/index.mjs';
import { repoRoot } from './regenerate.mjs';

const schemaFile = join(repoRoot, 'specs/schemas/User.yaml');
const editedLine = '    description: Unique user identifier.';
const watchedFiles = [
  'packages/openapi-types/src/generated/openapi.ts',
  'packages/event-types/src/generated/models.ts',
  'packages/webhook-validator/src/generated/schemas.ts',
].map((file) => join(repoRoot, file));
const turboFilters = ['@capi/openapi-types', '@capi/event-types', '@capi/webhook-validator', '@capi/sandbox'].map((name) => `--filter=${name}`);
const turbo = join(repoRoot, 'node_modules', '.bin', 'turbo');

const original = readFileSync(schemaFile, 'utf8');
if (!original.includes(`${editedLine}\n`)) throw new Error(`bench:loop: ${schemaFile} no longer has the line "${editedLine.trim()}"; update the bench`);
const restore = () => writeFileSync(schemaFile, original);
process.on('SIGINT', () => {
  restore();
  process.exit(130);
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since) => (performance.now() - since) / 1000;
const allContain = (text) => watchedFiles.every((file) => readFileSync(file, 'utf8').includes(text));
const noneContains = (text) => watchedFiles.every((file) => !readFileSync(file, 'utf8').includes(text));

/** Saves the one-line edit; returns its marker. */
function edit(way) {
  const marker = `bench-loop ${way} ${process.pid}-${Date.now()}`;
  writeFileSync(schemaFile, original.replace(`${editedLine}\n`, `${editedLine.slice(0, -1)} (${marker}).\n`));
  return marker;
}

/** Polls until `done()` or the time limit; returns the seconds it took from `since`. */
async function until(done, since, what, limitSeconds = 600) {
  while (!done()) {
    if (seconds(since) > limitSeconds) throw new Error(`bench:loop: ${what} not reached after ${limitSeconds} s`);
    await sleep(25);
  }
  return seconds(since);
}

/** Runs a command to its end; returns its exit code. */
function run(command, args) {
  return new Promise((resolve) => {
    spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] }).on('close', resolve);
  });
}

async function turboBuild(extra = []) {
  const code = await run(turbo, ['run', 'build', ...turboFilters, '--output-logs=errors-only', ...extra]);
  if (code !== 0) throw new Error(`bench:loop: turbo run build ${extra.join(' ')} failed with exit code ${code}`);
}

/** `pnpm dev` (regenerate only) started and warm; resolves once it watches. */
async function startWatcher() {
  const child = spawn(process.execPath, [join(repoRoot, 'tools/dev-loop/src/cli.mjs'), '--no-build'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  const started = performance.now();
  await until(() => output.includes('dev: watching'), started, 'the watcher start', 300);
  return child;
}

const rows = [];
try {
  // cold: every task of the four packages and what they depend on, from nothing.
  let started = performance.now();
  await turboBuild(['--force']);
  const cold = seconds(started);
  console.log(`cold turbo build: ${cold.toFixed(2)} s`);

  // turbo: save, then build as `pnpm build` would (lint no longer in the way).
  let marker = edit('turbo');
  started = performance.now();
  let generatedAt;
  const polling = until(() => allContain(marker), started, 'turbo: generated code').then((at) => { generatedAt = at; });
  await turboBuild();
  const turboTotal = seconds(started);
  await polling;
  restore();
  await turboBuild();
  console.log(`turbo after the edit: generated code current in ${generatedAt.toFixed(2)} s, build done in ${turboTotal.toFixed(2)} s`);

  // watch: the same edit with `pnpm dev` running.
  const watcher = await startWatcher();
  try {
    marker = edit('watch');
    started = performance.now();
    const watched = await until(() => allContain(marker), started, 'watch: generated code');
    console.log(`pnpm dev after the edit: generated code current in ${watched.toFixed(2)} s`);
    restore();
    await until(() => noneContains(marker), performance.now(), 'watch: generated code restored');
    rows.push(
      { name: 'cold: turbo build --force of the 4 generated packages', value: cold, unit: 's' },
      { name: 'turbo build after a one-line spec edit, until the generated code is current', value: generatedAt, unit: 's', baseline: 'cold', ratio: generatedAt / cold, goal: '< 10 s', met: generatedAt < 10 },
      { name: 'turbo build after a one-line spec edit, to the end (dist built)', value: turboTotal, unit: 's', baseline: 'cold', ratio: turboTotal / cold },
      { name: 'pnpm dev after a one-line spec edit, until the generated code is current', value: watched, unit: 's', baseline: 'cold', ratio: watched / cold, goal: '< 10 s', met: watched < 10 },
    );
  } finally {
    watcher.kill('SIGTERM');
  }
} finally {
  restore();
}
// The generated code as committed (and dist as built) again: a cache hit after the restore.
await turboBuild();
console.log(`\n${formatTable(rows.map((row) => ({ package: 'maintainer loop', ...row })))}`);
