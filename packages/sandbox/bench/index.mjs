// Benchmarks of @capi/sandbox: the limit GET (bearer check + JSON answer) under autocannon on
// loopback, against a bare node:http server answering the same JSON, measured in the same run.
// Each server runs in its own process so that autocannon does not share its event loop.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { printTable, record } from '@capi/bench-kit';

const serverScript = fileURLToPath(new URL('./limit-server.mjs', import.meta.url));
// Two alternating rounds each (so that drift in the shared machine's load hits both alike).
const ROUNDS = 2;
const ROUND_SECONDS = 2.5;
const CONNECTIONS = 16;

async function startServer(kind) {
  const child = fork(serverScript, [kind], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [info] = await once(child, 'message');
  return { ...info, stop: () => child.disconnect() };
}

async function load(server, duration) {
  const result = await autocannon({
    url: server.url,
    headers: { authorization: `Bearer ${server.token}` },
    connections: CONNECTIONS,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.url}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99 };
}

const sandbox = await startServer('sandbox');
const bare = await startServer('bare');
try {
  // Warm both up (JIT, sockets), then measure them back to back.
  await load(sandbox, 1);
  await load(bare, 1);
  const sandboxRounds = [];
  const bareRounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    sandboxRounds.push(await load(sandbox, ROUND_SECONDS));
    bareRounds.push(await load(bare, ROUND_SECONDS));
  }
  const mean = (rounds, key) => rounds.reduce((sum, r) => sum + r[key], 0) / rounds.length;
  const measuredSandbox = { requestsPerSecond: mean(sandboxRounds, 'requestsPerSecond'), p99Ms: mean(sandboxRounds, 'p99Ms') };
  const measuredBare = { requestsPerSecond: mean(bareRounds, 'requestsPerSecond'), p99Ms: mean(bareRounds, 'p99Ms') };
  record({
    package: '@capi/sandbox',
    name: 'limit GET requests/s (autocannon, loopback)',
    value: measuredSandbox.requestsPerSecond,
    unit: 'req/s',
    baseline: 'bare node:http, same JSON',
    ratio: measuredSandbox.requestsPerSecond / measuredBare.requestsPerSecond,
  });
  record({
    package: '@capi/sandbox',
    name: 'limit GET p99 latency',
    value: measuredSandbox.p99Ms,
    unit: 'ms',
    baseline: 'bare node:http p99',
    ratio: measuredSandbox.p99Ms / Math.max(measuredBare.p99Ms, 1),
  });
  record({ package: '@capi/sandbox', name: 'bare node:http requests/s (baseline)', value: measuredBare.requestsPerSecond, unit: 'req/s' });
  record({ package: '@capi/sandbox', name: 'bare node:http p99 latency (baseline)', value: measuredBare.p99Ms, unit: 'ms' });
  printTable();
} finally {
  sandbox.stop();
  bare.stop();
}
