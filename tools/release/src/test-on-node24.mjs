#!/usr/bin/env node
// `pnpm test:node24`: every publishable package's vitest suite, run by the Node 24 binary
// (`<node24> node_modules/vitest/vitest.mjs run ...`, the arguments of the package's own test
// script), one package after the other, with Node 24 first on PATH for anything they spawn.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.mjs';
import { publishablePackages, repoRoot } from './workspace-packages.mjs';

/**
 * The vitest arguments of a package's `test` script ("vitest run --typecheck" -> ["run", "--typecheck"]).
 * @param {string | undefined} script
 * @returns {string[] | undefined} undefined when the script is not a plain vitest call
 */
export function vitestArguments(script) {
  const words = script?.trim().split(/\s+/) ?? [];
  if (words[0] !== 'vitest') return undefined;
  return words.slice(1).length ? words.slice(1) : ['run'];
}

/**
 * Runs one package folder's suite with the given node binary.
 * @param {{ dir: string, args: string[], node: string }} options
 * @returns {Promise<{ code: number, output: string }>}
 */
export function runSuite({ dir, args, node }) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [path.join(dir, 'node_modules/vitest/vitest.mjs'), ...args], {
      cwd: dir,
      env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH}`, CI: 'true', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/**
 * Runs every package's suite on Node 24.
 * @param {{ root?: string, only?: string[], log?: (line: string) => void }} [options]
 */
export async function testOnNode24({ root = repoRoot, only = [], log = console.log } = {}) {
  const { bin, version } = await ensureNode24();
  log(`Node ${version} at ${path.relative(process.cwd(), bin)}`);
  const results = [];
  for (const pkg of publishablePackages(root)) {
    if (only.length && !only.includes(pkg.name) && !only.includes(pkg.dirName)) continue;
    const args = vitestArguments(pkg.manifest.scripts?.test);
    if (!args) {
      results.push({ name: pkg.name, ok: false, line: `✖ ${pkg.name}: its test script is not "vitest ..."; test:node24 runs vitest suites only` });
      continue;
    }
    if (!existsSync(path.join(pkg.dir, 'node_modules/vitest/vitest.mjs'))) {
      results.push({ name: pkg.name, ok: false, line: `✖ ${pkg.name}: vitest is not installed in ${pkg.relDir}; run pnpm install` });
      continue;
    }
    const started = Date.now();
    const { code, output } = await runSuite({ dir: pkg.dir, args, node: bin });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const summary = output
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n').filter((line) => /^\s*(Test Files|Tests)\s/.test(line)).map((line) => line.trim()).join(', ');
    const line = `${code === 0 ? '✔' : '✖'} ${pkg.name} on Node ${version} (${seconds} s): ${summary || `exit ${code}`}`;
    log(line);
    if (code !== 0) log(output.split('\n').slice(-60).join('\n'));
    results.push({ name: pkg.name, ok: code === 0, line });
  }
  return { version, results };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  testOnNode24({ only: process.argv.slice(2) }).then(
    ({ results }) => {
      const failed = results.filter((result) => !result.ok);
      for (const result of failed) if (!result.line.includes(' s): ')) console.log(result.line);
      console.log(failed.length === 0 ? `test:node24 passed (${results.length} packages)` : `test:node24 failed: ${failed.map((result) => result.name).join(', ')}`);
      process.exitCode = failed.length === 0 ? 0 : 1;
    },
    (error) => {
      console.error(`test:node24 failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
