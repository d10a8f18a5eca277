import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A receiver running in a child process. */
export interface ReceiverProcess {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Bundles test/fixtures/receiver-process.ts from the current source (so the children run what
 * the tests test, without a prior build) and returns the path of the bundle.
 */
export async function bundleReceiverProcess(): Promise<string> {
  // Inside the package's node_modules, so that the bundle resolves ioredis and the workspace packages.
  const outfile = join(packageDir, 'node_modules', '.cache', 'capi-webhook-receiver-tests', `receiver-process-${process.pid}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(packageDir, 'test', 'fixtures', 'receiver-process.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    // Everything but the Redis client is bundled in: the children run exactly the code under test.
    external: ['ioredis'],
    logLevel: 'silent',
  });
  return outfile;
}

/** Starts one receiver process and waits until it listens. */
export function startReceiverProcess(bundle: string, env: Record<string, string>): Promise<ReceiverProcess> {
  const child: ChildProcess = spawn(process.execPath, [bundle], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk) => { output += chunk; });
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /LISTENING (\d+)/.exec(output);
      if (match) {
        resolve({
          url: `http://127.0.0.1:${match[1]}/webhooks`,
          pid: child.pid!,
          stop: () => new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`receiver process exited with ${code} before listening:\n${output}`)));
  });
}
