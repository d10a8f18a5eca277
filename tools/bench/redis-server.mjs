// A real redis-server for tests and benchmarks (the receiver's Redis tests and bench, the
// runtime matrix, the journeys): on loopback, on a port the OS chose, in a temporary directory,
// persisting nothing (`--save '' --appendonly no`). The binary is `redis-server` on the PATH (CI
// installs it with apt), or REDIS_SERVER_BIN.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.mjs';

const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** Whether the redis-server binary runs here (a benchmark skips its Redis figures without it). */
export function hasRedisServer() {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

/** @param {number} port */
function answersPing(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

/**
 * @param {number} port
 * @param {import('node:child_process').ChildProcess} child
 * @param {() => string} log
 */
async function waitUntilReady(port, child, log) {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${log()}`);
    if (await answersPing(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server did not answer PING on port ${port}:\n${log()}`);
}

/**
 * A running redis-server.
 * @typedef {object} RedisServer
 * @property {number} port
 * @property {() => Promise<void>} stop Stops the server (SIGTERM) and waits for its exit; the port stays reserved for `start`.
 * @property {() => Promise<void>} start Starts it again on the same port (after `stop`), empty.
 * @property {() => Promise<void>} close Stops it and removes its directory.
 */

/**
 * Starts redis-server; throws, saying how to install it, when the binary is missing.
 * @returns {Promise<RedisServer>}
 */
export async function startRedisServer() {
  if (!hasRedisServer()) {
    throw new Error(`These checks need a real Redis server, and "${binary}" could not be run. Install it (Debian: apt-get install redis-server) or point REDIS_SERVER_BIN at the binary.`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'capi-redis-'));
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  let port = 0;
  const launch = async () => {
    let output = '';
    const started = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout.on('data', (chunk) => { output += chunk; });
    started.stderr.on('data', (chunk) => { output += chunk; });
    await waitUntilReady(port, started, () => output);
  };
  // Another process may take the port between freePort() and the bind: try a few ports.
  for (let attempt = 0; ; attempt++) {
    port = /** @type {number} */ (await freePort());
    try {
      await launch();
      break;
    } catch (error) {
      child?.kill('SIGKILL');
      if (attempt === 4) throw error;
    }
  }
  const stop = async () => {
    const running = child;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  return {
    port,
    stop,
    start: launch,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
