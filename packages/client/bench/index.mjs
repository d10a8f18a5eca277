// @capi/client benchmarks: the client's overhead per request against raw fetch to the same
// loopback server in the same run, and the size of the main entry (viem stays out of it).
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { batchRatio, bundleSize, interleavedBatches, printTable, record } from '@capi/bench-kit';
import { createPartnerClient, TokenManager } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const TOKEN = 'bench-access-token';
const LIMIT_BODY = JSON.stringify({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });

const server = createServer((req, res) => {
  if (req.url === '/user-api/user/account/limit' && req.headers.authorization === `Bearer ${TOKEN}`) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(LIMIT_BODY) });
    res.end(LIMIT_BODY);
    return;
  }
  res.writeHead(401, { 'content-type': 'application/json' });
  res.end('{"message":"Unauthorized"}');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;

const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ tokens: TOKEN }) });
const limitUrl = `${baseUrl}/user-api/user/account/limit`;

async function throughClient() {
  const limit = await client.getDailyLimit();
  if (limit.amount !== 1_000_000) throw new Error('unexpected limit');
}

// Made twice by one factory: the baseline, and its identical copy for the control row.
const makeRawFetch = () => async function rawFetch() {
  const response = await fetch(limitUrl, { headers: { accept: 'application/json', authorization: `Bearer ${TOKEN}` } });
  if (!response.ok) throw new Error(`status ${response.status}`);
  const limit = await response.json();
  if (limit.amount !== 1_000_000) throw new Error('unexpected limit');
};
const rawFetch = makeRawFetch();
const rawFetchControl = makeRawFetch();

// The same raw fetch with what the client adds on every request: a timeout that cancels it.
async function rawFetchWithTimeout() {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const response = await fetch(limitUrl, { headers: { accept: 'application/json', authorization: `Bearer ${TOKEN}` }, signal: controller.signal });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const limit = await response.json();
    if (limit.amount !== 1_000_000) throw new Error('unexpected limit');
  } finally {
    clearTimeout(timer);
  }
}

// bench-kit's interleavedBatches against the same server: short batches in an order shuffled
// afresh each round, garbage collected every few rounds outside the timed batches. Each ratio
// compares fast-decile batch times (see batchRatio); the median of the per-round ratios is
// printed beside the goal's row, and a control row times raw fetch against an identical copy
// of itself. Every contender sends the same headers and reads and parses the same JSON body.
setFlagsFromString('--expose-gc');
const times = await interleavedBatches(
  { throughClient, rawFetch, rawFetchWithTimeout, rawFetchControl },
  { rounds: 400, batch: 16, collectGarbage: runInNewContext('gc') },
);
const versusRaw = batchRatio(times, 'throughClient', 'rawFetch');
record({ name: 'getDailyLimit requests/s (loopback)', value: versusRaw.perSecond, unit: 'req/s (fast decile)', baseline: 'raw fetch + json', ratio: versusRaw.ratio, goal: '>= 0.9', met: versusRaw.ratio >= 0.9 });
record({ name: '  the same, median of the per-round ratios (noise included)', value: versusRaw.medianPerSecond, unit: 'req/s (median)', baseline: 'raw fetch + json', ratio: versusRaw.medianRatio });
const versusTimeout = batchRatio(times, 'throughClient', 'rawFetchWithTimeout');
record({ name: 'getDailyLimit requests/s (loopback)', value: versusTimeout.perSecond, unit: 'req/s (fast decile)', baseline: 'raw fetch + json + per-request timeout signal', ratio: versusTimeout.ratio });
const control = batchRatio(times, 'rawFetchControl', 'rawFetch');
record({ name: 'control: raw fetch against an identical copy of itself (1.00 = no bias)', value: control.perSecond, unit: 'req/s (fast decile)', baseline: 'raw fetch + json', ratio: control.ratio });
// The sign-in code is a chunk of its own, loaded by signInWithEthereum on first use.
const main = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*', './sign-in-*', './webhook-public-key-*', './limit-sync-*', './renewal-errors-*', './limit-errors-*', './request-errors-*'] });
record({ name: 'main entry min+gzip, without the lazy sign-in, webhook-key, limit-sync, renewal-error, limit-error and request-error chunks (openapi-fetch included)', value: main.gzipBytes, unit: 'bytes', goal: '<= 10240', met: main.gzipBytes <= 10_240 });
const withSignIn = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*'] });
record({ name: 'main entry min+gzip, with the lazy chunks (viem excluded)', value: withSignIn.gzipBytes, unit: 'bytes' });
const onboarding = await bundleSize(join(here, '../dist/onboarding.js'), { external: ['viem', 'viem/*'] });
record({ name: '@capi/client/onboarding min+gzip (with the client code it shares with the main entry)', value: onboarding.gzipBytes, unit: 'bytes' });
// What the onboarding entry adds to an app that has the main entry, lazy chunks included on both sides.
const both = await bundleSize(join(here, 'main-and-onboarding.mjs'), { external: ['viem', 'viem/*'] });
record({ name: '  what @capi/client/onboarding adds to an app with the main entry (both with their lazy chunks)', value: both.gzipBytes - withSignIn.gzipBytes, unit: 'bytes' });
const siwe = await bundleSize(join(here, '../dist/siwe.js'));
record({ name: '@capi/client/siwe min+gzip (viem/siwe included)', value: siwe.gzipBytes, unit: 'bytes' });

server.close();
printTable();
