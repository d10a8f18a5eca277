import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A receiver running in a child process. */
export interface ReceiverProcess {
  readonly url: string;
  readonly pid: number;
  /** Sends SIGTERM and resolves once the process has exited. */
  stop(): Promise<void>;
  /** Sends `signal` (SIGKILL: the process dies mid-handler) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Bundles a receiver process (by default test/fixtures/receiver-process.ts) from the current
 * source (so the children run what the tests test, without a prior build) and returns the path
 * of the bundle.
 */
export async function bundleReceiverProcess(entry = join(packageDir, 'test', 'fixtures', 'receiver-process.ts')): Promise<string> {
  // Inside the package's node_modules, so that the bundle resolves ioredis and the workspace packages.
  const name = entry.slice(entry.lastIndexOf('/') + 1).replace(/\.ts$/, '');
  const outfile = join(packageDir, 'node_modules', '.cache', 'capi-webhook-receiver-tests', `${name}-${process.pid}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    // Everything but the Redis and PostgreSQL clients is bundled in: the children run exactly the code under test.
    external: ['ioredis', 'pg'],
    logLevel: 'silent',
  });
  return outfile;
}

/** Starts one receiver process (it prints `LISTENING <port>`) and waits until it listens. */
export function startReceiverProcess(bundle: string, env: Record<string, string>): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, [bundle], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => { child.once('exit', () => resolve()); });
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    // A process killed by a signal has no exit code, only a signal code.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  let output = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk) => { output += chunk; });
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /LISTENING (\d+)/.exec(output);
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}/webhooks`, pid: child.pid!, stop: () => kill('SIGTERM'), kill });
    });
    child.once('exit', (code) => reject(new Error(`receiver process exited with ${code} before listening:\n${output}`)));
  });
}
