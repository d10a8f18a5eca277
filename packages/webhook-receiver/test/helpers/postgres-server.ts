// A real PostgreSQL server for the transactional store's tests: Debian's binaries
// (/usr/lib/postgresql/<version>/bin, `apt-get install postgresql`; CI installs it), a cluster
// initialised in a temporary directory with trust authentication on loopback, on a port the OS
// chose, without fsync (nothing here needs to survive a crash). As root (CI), the cluster runs
// as the `postgres` user the Debian package creates: the server refuses to run as root.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A running PostgreSQL server. */
export interface PostgresServer {
  readonly port: number;
  /** A connection string for its `postgres` database. */
  readonly url: string;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) {
    throw new Error('These checks need a real PostgreSQL server, and none was found under /usr/lib/postgresql. Install it (Debian: apt-get install postgresql).');
  }
  return join(root, versions[0]!, 'bin');
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

/** Starts a PostgreSQL server; throws, saying how to install it, when its binaries are missing. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'capi-postgres-'));
  // As root, the server runs as `postgres`, which owns the directory (signals reach it directly).
  const user: { uid?: number; gid?: number } = userInfo().uid === 0 ? postgresUser() : {};
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const data = join(dir, 'data');
  const initialised = spawnSync(join(bin, 'initdb'), ['-D', data, '--auth=trust', '--username=postgres', '--no-sync', '--encoding=UTF8', '--locale=C'], { encoding: 'utf8', cwd: dir, ...user });
  if (initialised.status !== 0) throw new Error(`initdb failed (${initialised.status}):\n${initialised.stdout}\n${initialised.stderr}`);
  const port = await freePort();
  const args = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'];
  let output = '';
  const child: ChildProcess = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...user });
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${output}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (attempt >= 400) throw new Error(`postgres did not accept connections on port ${port}: ${String(error)}\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return {
    port,
    url,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // SIGTERM: PostgreSQL's smart shutdown, once the clients that are closing have gone
        // (a fast one would end them with an error their pool reports); fast after 5 s.
        child.kill('SIGTERM');
        const fast = setTimeout(() => child.kill('SIGINT'), 5_000);
        await exited;
        clearTimeout(fast);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('Running as root, these checks start PostgreSQL as the postgres user, which does not exist: install the postgresql package (it creates that user).');
  return { uid, gid };
}
