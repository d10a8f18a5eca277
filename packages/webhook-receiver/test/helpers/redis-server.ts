import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real redis-server started for one test file, on a port the OS chose, persisting nothing. */
export interface RedisServer {
  readonly port: number;
  /** Stops the server (SIGTERM) and waits for its exit; the port stays reserved for `start`. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`), empty. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';

function assertBinaryPresent(): void {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `These tests need a real Redis server, and "${binary}" could not be run (${probe.error?.message ?? probe.stderr}). ` +
        'Install it (Debian: apt-get install redis-server) or point REDIS_SERVER_BIN at the binary.',
    );
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function answersPing(port: number): Promise<boolean> {
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

async function waitUntilReady(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${log()}`);
    if (await answersPing(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server did not answer PING on port ${port}:\n${log()}`);
}

/** Starts redis-server with `--save '' --appendonly no` in a temporary directory. */
export async function startRedisServer(): Promise<RedisServer> {
  assertBinaryPresent();
  const dir = mkdtempSync(join(tmpdir(), 'capi-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;

  const launch = async (): Promise<void> => {
    let output = '';
    child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => { output += chunk; });
    child.stderr!.on('data', (chunk) => { output += chunk; });
    await waitUntilReady(port, child, () => output);
  };

  // Another process may take the port between freePort() and the bind: try a few ports.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      child?.kill('SIGKILL');
      if (attempt === 4) throw error;
    }
  }

  const stop = async (): Promise<void> => {
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

/** A redis-server with one client of each library the stores accept, connected to it. */
export interface RedisWithClients {
  readonly server: RedisServer;
  readonly ioredis: Redis;
  readonly nodeRedis: ReturnType<typeof createClient>;
  /** Disconnects both clients, then stops the server. */
  close(): Promise<void>;
}

/** Starts a redis-server and connects an ioredis and a node-redis client to it. */
export async function startRedisWithClients(): Promise<RedisWithClients> {
  const server = await startRedisServer();
  const ioredis = new Redis({ port: server.port, host: '127.0.0.1' });
  const nodeRedis = createClient({ socket: { port: server.port, host: '127.0.0.1' } });
  await nodeRedis.connect();
  return {
    server,
    ioredis,
    nodeRedis,
    async close() {
      ioredis.disconnect();
      await nodeRedis.close();
      await server.close();
    },
  };
}
