// Real workerd for tests, from the npm package `workerd` (its binary comes in the platform
// package `@cloudflare/workerd-linux-64`, an optional dependency; its postinstall is not needed).
// A worker is bundled the way wrangler bundles it (esbuild, conditions workerd, worker,
// browser), written with a workerd config into a temp folder, and served on 127.0.0.1.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const workerd = require('workerd');

/** The export conditions wrangler gives esbuild (its default, WRANGLER_BUILD_CONDITIONS unset). */
export const WRANGLER_CONDITIONS = ['workerd', 'worker', 'browser'];

/**
 * Bundles a worker's entry module as wrangler does.
 * @param {string} entry path of the worker's entry module
 * @returns {Promise<{ code: string, inputs: string[] }>} the bundle and every file in it (paths relative to the cwd)
 */
export async function bundleWorker(entry) {
  const result = await build({
    entryPoints: [entry], bundle: true, format: 'esm', target: 'es2022', conditions: WRANGLER_CONDITIONS,
    write: false, metafile: true, logLevel: 'silent',
  });
  return { code: result.outputFiles[0].text, inputs: Object.keys(result.metafile.inputs) };
}

/** A TCP port free on 127.0.0.1 right now (the OS's choice), for a server a test starts. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const capnpText = (value) => JSON.stringify(value);

// The worker that fires scheduled events (what a Cron Trigger does): it calls the main worker's
// scheduled handler through a service binding, `Fetcher.scheduled()`, which workerd gives a
// worker with the experimental flag `service_binding_extra_handlers` (the way Miniflare and
// @cloudflare/vitest-pool-workers fire them). The main worker itself runs without the flag.
const CRON_WORKER = `export default {
  async fetch(request, env) {
    const cron = new URL(request.url).searchParams.get('cron') ?? '* * * * *';
    return Response.json(await env.MAIN.scheduled({ scheduledTime: new Date(), cron }));
  },
};
`;

/**
 * Starts workerd serving one worker.
 * @param {{ code: string, bindings?: Record<string, string>, durableObjects?: { binding: string, className: string }[], cron?: boolean }} options
 *   `code`: the bundled ES module; `bindings`: text bindings; `durableObjects`: namespaces of
 *   classes the module exports (storage in memory, for the life of the process); `cron`: serve
 *   the worker that fires its scheduled events too (`scheduled()` of the result).
 * @returns {Promise<{ url: string, stderr: () => string, scheduled: (cron?: string) => Promise<{ outcome: string, noRetry: boolean }>, close: () => Promise<void> }>}
 */
export async function startWorkerd({ code, bindings = {}, durableObjects = [], cron = false }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'capi-workerd-'));
  writeFileSync(path.join(dir, 'worker.js'), code);
  if (cron) writeFileSync(path.join(dir, 'cron.js'), CRON_WORKER);
  const port = await freePort();
  const cronPort = cron ? await freePort() : undefined;
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # The sandbox runs on loopback: let fetch() reach private and local addresses.
    (name = "loopback", network = (allow = ["public", "private", "local"])),${cron ? `
    (name = "cron", worker = .cron),` : ''}
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "main"),${cron ? `
    (name = "cron", address = "127.0.0.1:${cronPort}", http = (), service = "cron"),` : ''}
  ],
);${cron ? `
const cron :Workerd.Worker = (
  modules = [(name = "cron.js", esModule = embed "cron.js")],
  compatibilityDate = ${capnpText(workerd.compatibilityDate)},
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [(name = "MAIN", service = "main")],
);` : ''}
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = ${capnpText(workerd.compatibilityDate)},
  bindings = [
${[
    ...Object.entries(bindings).map(([name, text]) => `    (name = ${capnpText(name)}, text = ${capnpText(text)}),`),
    ...durableObjects.map(({ binding, className }) => `    (name = ${capnpText(binding)}, durableObjectNamespace = ${capnpText(className)}),`),
  ].join('\n')}
  ],
  durableObjectNamespaces = [
${durableObjects.map(({ className }) => `    (className = ${capnpText(className)}, uniqueKey = ${capnpText(`capi-${className}`)}),`).join('\n')}
  ],
  durableObjectStorage = (inMemory = void),
  globalOutbound = "loopback",
);
`;
  writeFileSync(path.join(dir, 'config.capnp'), config);
  // (--experimental: the cron worker's flag is an experimental one.)
  const child = spawn(workerd.default, ['serve', ...(cron ? ['--experimental'] : []), 'config.capnp'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('close', resolve));
  // A test runner that exits without close() must not leave workerd listening.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const close = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`workerd exited with ${child.exitCode} before serving:\n${stderr}`);
    }
    try {
      await fetch(`${url}/__ready`);
      break;
    } catch (error) {
      if (attempt > 200) {
        await close();
        throw new Error(`workerd did not listen on ${url} within 20 s:\n${stderr}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const scheduled = async (expression = '* * * * *') => {
    if (cronPort === undefined) throw new Error('startWorkerd({ cron: true }) serves the worker that fires scheduled events; this one was started without it');
    const response = await fetch(`http://127.0.0.1:${cronPort}/?cron=${encodeURIComponent(expression)}`);
    if (!response.ok) throw new Error(`the cron worker answered ${response.status}: ${await response.text()}`);
    return response.json();
  };
  return { url, stderr: () => stderr, scheduled, close };
}
