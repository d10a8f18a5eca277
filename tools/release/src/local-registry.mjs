// A throwaway npm registry: verdaccio in this process, on a loopback port chosen by the OS,
// storage in a temp folder, no uplinks (it can serve only what was published to it), and one
// user created through the registry's own adduser endpoint so publishing is authenticated.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runServer } from 'verdaccio';

/**
 * @typedef {{ url: string, token: string, close(): Promise<void> }} LocalRegistry
 */

/**
 * Starts verdaccio.
 * @param {string} dir an empty temp folder for storage, htpasswd and config
 * @returns {Promise<LocalRegistry>}
 */
export async function startLocalRegistry(dir) {
  const storage = path.join(dir, 'storage');
  mkdirSync(storage, { recursive: true });
  const htpasswd = path.join(dir, 'htpasswd');
  writeFileSync(htpasswd, '');
  const config = {
    self_path: path.join(dir, 'config.yaml'),
    storage,
    auth: { htpasswd: { file: htpasswd, max_users: 10 } },
    uplinks: {},
    packages: {
      '@capi/*': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' },
      '**': { access: '$all', publish: '$authenticated' },
    },
    security: { api: { legacy: true } },
    server: { keepAliveTimeout: 0 },
    log: { type: 'stdout', format: 'pretty', level: 'fatal' },
    web: { enable: false },
  };
  const app = await runServer(/** @type {any} */ (config));
  const server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    listening.once('error', reject);
  });
  const url = `http://127.0.0.1:${server.address().port}/`;
  const close = () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve(undefined)); });

  const user = 'capi-release';
  const response = await fetch(`${url}-/user/org.couchdb.user:${user}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: user, password: 'dry-run-only-password', email: 'release@localhost', type: 'user' }),
  });
  const body = await response.json();
  if (!response.ok || !body.token) {
    await close();
    throw new Error(`verdaccio refused to create the release user (${response.status}): ${JSON.stringify(body)}`);
  }
  return { url, token: body.token, close };
}

/**
 * The .npmrc line that authenticates to the registry.
 * @param {LocalRegistry} registry
 */
export function authLine(registry) {
  return `//${registry.url.replace(/^https?:\/\//, '')}:_authToken=${registry.token}`;
}
