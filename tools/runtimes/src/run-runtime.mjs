import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeBinary } from './runtimes.mjs';

export const matrixDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** How each runtime with a process runs the suite's entry point. */
function commandLine(name, entry) {
  // Deno: the permissions the suite needs (loopback HTTP, its input, reading node_modules), no lock file.
  if (name === 'deno') return ['run', '--no-lock', '--allow-env', '--allow-net=127.0.0.1', '--allow-read', entry];
  return [entry];
}

/**
 * Runs the conformance suite in one runtime and returns what it printed.
 * @param {string} name a runtime of the matrix other than workerd
 * @param {unknown} input the suite's input (sandbox URLs and keys), passed as CAPI_CONFORMANCE
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
export async function runSuiteIn(name, input) {
  const bin = await runtimeBinary(name);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, commandLine(name, 'conformance/process-entry.mjs'), {
      cwd: matrixDir,
      env: { ...process.env, CAPI_CONFORMANCE: JSON.stringify(input), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
