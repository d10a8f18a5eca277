import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeBinary } from './runtimes.mjs';

export const matrixDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** How each runtime with a process runs an entry point of the suite. */
function commandLine(name, entry) {
  // Deno: the permissions the entry points need, no lock file. --allow-net=127.0.0.1: loopback
  // only, any port (its own server, the sandbox, the redis-server); --allow-env: its input, and
  // ioredis (its `debug` dependency lists every variable as it loads, so no narrower list
  // works); --allow-read: node_modules. Not --allow-sys, --allow-write or --allow-run.
  if (name === 'deno') return ['run', '--no-lock', '--allow-env', '--allow-net=127.0.0.1', '--allow-read', entry];
  return [entry];
}

/** Spawns an entry point of the suite in a runtime, in this directory, its input in `env`. */
async function spawnIn(name, entry, env) {
  const bin = await runtimeBinary(name);
  return spawn(bin, commandLine(name, entry), {
    cwd: matrixDir,
    env: { ...process.env, ...env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Runs the conformance suite in one runtime and returns what it printed.
 * @param {string} name a runtime of the matrix other than workerd
 * @param {unknown} input the suite's input (sandbox URLs and keys), passed as CAPI_CONFORMANCE
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
export async function runSuiteIn(name, input) {
  const child = await spawnIn(name, 'conformance/process-entry.mjs', { CAPI_CONFORMANCE: JSON.stringify(input) });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * Starts a server entry point of the suite in a runtime (conformance/redis-receiver.mjs), and
 * resolves once it prints `LISTENING <port>`.
 * @param {string} name a runtime of the matrix other than workerd
 * @param {string} entry the entry point, relative to this package
 * @param {Record<string, string>} env its input
 * @returns {Promise<{ origin: string, stderr: () => string, exited: Promise<number>, kill: () => void }>}
 *   `exited`: its exit code (1 when killed by a signal)
 */
export async function startServerIn(name, entry, env) {
  const child = await spawnIn(name, entry, env);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const listening = /LISTENING (\d+)/.exec(stdout);
      if (listening) {
        resolve({
          origin: `http://127.0.0.1:${listening[1]}`,
          stderr: () => stderr,
          exited,
          kill: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
        });
      }
    });
    child.once('error', reject);
    exited.then((code) => reject(new Error(`${entry} on ${name} exited with ${code} before it listened:\n${stdout}${stderr}`)));
  });
}
