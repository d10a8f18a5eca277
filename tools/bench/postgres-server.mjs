// A real PostgreSQL server for tests and benchmarks (the receiver's transactional store, as its
// PostgreSQL example uses it): Debian's binaries (/usr/lib/postgresql/<version>/bin,
// `apt-get install postgresql`; CI installs it), a cluster initialised in a temporary directory
// with trust authentication on loopback, on a port the OS chose, without fsync (nothing here
// needs to survive a crash). As root (CI), the server runs as the `postgres` user the Debian
// package creates: PostgreSQL refuses to run as root.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.mjs';

const ROOT = '/usr/lib/postgresql';

/** The newest PostgreSQL's bin directory under /usr/lib/postgresql, or `undefined`. */
function binDir() {
  const versions = existsSync(ROOT) ? readdirSync(ROOT).filter((name) => existsSync(join(ROOT, name, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.length === 0 ? undefined : join(ROOT, versions[0], 'bin');
}

/** Whether a PostgreSQL server can be started here (a benchmark skips its PostgreSQL figures without one). */
export function hasPostgresServer() {
  return binDir() !== undefined;
}

/** The `postgres` user's ids, to run the server as when we are root. */
function postgresUser() {
  const id = (flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('Running as root, these checks start PostgreSQL as the postgres user, which does not exist: install the postgresql package (it creates that user).');
  return { uid, gid };
}

/**
 * Whether the server started as `child` accepts connections at `url` within 10 s (false: it exited, or never did).
 * @param {string} url
 * @param {import('node:child_process').ChildProcess} child
 */
async function acceptsConnections(url, child) {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (child.exitCode !== null) return false;
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch {
      await client.end().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return false;
}

/**
 * A running PostgreSQL server.
 * @typedef {object} PostgresServer
 * @property {number} port
 * @property {string} url A connection string for its `postgres` database.
 * @property {() => Promise<void>} close Stops the server and removes its directory.
 */

/**
 * Starts a PostgreSQL server; throws, saying how to install it, when its binaries are missing.
 * @returns {Promise<PostgresServer>}
 */
export async function startPostgresServer() {
  const bin = binDir();
  if (bin === undefined) throw new Error(`These checks need a real PostgreSQL server, and none was found under ${ROOT}. Install it (Debian: apt-get install postgresql).`);
  const dir = mkdtempSync(join(tmpdir(), 'capi-postgres-'));
  // As root, the server runs as `postgres`, which owns the directory (signals reach it directly).
  /** @type {{ uid?: number, gid?: number }} */
  const user = userInfo().uid === 0 ? postgresUser() : {};
  if (user.uid !== undefined) chownSync(dir, user.uid, /** @type {number} */ (user.gid));
  const data = join(dir, 'data');
  const initialised = spawnSync(join(bin, 'initdb'), ['-D', data, '--auth=trust', '--username=postgres', '--no-sync', '--encoding=UTF8', '--locale=C'], { encoding: 'utf8', cwd: dir, ...user });
  if (initialised.status !== 0) throw new Error(`initdb failed (${initialised.status}):\n${initialised.stdout}\n${initialised.stderr}`);
  /** @param {number} port */
  const args = (port) => ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'];
  // Another process may take the port between freePort() and the bind: try a few ports.
  let port = 0;
  /** @type {import('node:child_process').ChildProcess} */
  let child;
  for (let tries = 1; ; tries++) {
    port = await freePort();
    let output = '';
    child = spawn(join(bin, 'postgres'), args(port), { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...user });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    if (await acceptsConnections(`postgres://postgres@127.0.0.1:${port}/postgres`, child)) break;
    if (!/could not bind|already in use/i.test(output) || tries === 5) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`postgres did not accept connections on port ${port} (exit code ${child.exitCode}):\n${output}`);
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = child;
  return {
    port,
    url,
    async close() {
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        // SIGTERM: PostgreSQL's smart shutdown, once the clients that are closing have gone
        // (a fast one would end them with an error their pool reports); fast after 5 s.
        server.kill('SIGTERM');
        const fast = setTimeout(() => server.kill('SIGINT'), 5_000);
        await exited;
        clearTimeout(fast);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
