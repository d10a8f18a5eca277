// A real redis-server for the Redis checks of the matrix, started by the test on Node: on a
// port the OS chose, on loopback, persisting nothing (`--save '' --appendonly no`). The binary
// is `redis-server` on the PATH (CI installs it with apt), or REDIS_SERVER_BIN, as in the
// receiver's own Redis tests.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Starts redis-server on `port`; resolves once it accepts connections, rejects if it exits first. */
function launch(port) {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(child);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)));
  });
}

/**
 * Starts a redis-server for one test file.
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startRedisServer() {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(`The Redis checks need a real Redis server, and "${binary}" could not be run (${probe.error?.message ?? probe.stderr}). Install it (Debian: apt-get install redis-server) or point REDIS_SERVER_BIN at the binary.`);
  }
  // Another process may take the port between freePort() and the bind: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const child = await launch(port);
      return {
        port,
        close: () => new Promise((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
      };
    } catch (error) {
      if (attempt === 5) throw error;
    }
  }
}
