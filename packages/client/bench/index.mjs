// @capi/client benchmarks: the client's overhead per request against raw fetch to the same
// loopback server in the same run, and the size of the main entry (viem stays out of it).
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { bundleSize, opsPerSecond, percentile, printTable, record } from '@capi/bench-kit';
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

async function rawFetch() {
  const response = await fetch(limitUrl, { headers: { accept: 'application/json', authorization: `Bearer ${TOKEN}` } });
  if (!response.ok) throw new Error(`status ${response.status}`);
  const limit = await response.json();
  if (limit.amount !== 1_000_000) throw new Error('unexpected limit');
}

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

// Alternating rounds against the same server, in reverse order every other round so that no
// contender always runs first or last, with garbage collected before each so that none pays for
// what another left behind. Each ratio is the median of the per-round ratios against the baseline
// of the same round, so that one round disturbed by other work on the shared machine does not
// swing it. Both sides send the same headers and read and parse the same JSON body.
const rounds = 11;
const roundMs = 400;
const contenders = { throughClient, rawFetch, rawFetchWithTimeout };
const rates = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? Object.entries(contenders) : Object.entries(contenders).reverse();
  for (const [name, fn] of order) {
    collectGarbage();
    rates[name].push(await opsPerSecond(fn, { minTimeMs: roundMs, warmupMs: round === 0 ? 300 : 30, batch: 16 }));
  }
}
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
const medianRatio = (baseline) => percentile(rates.throughClient.map((rate, round) => rate / rates[baseline][round]), 50);
const ratio = medianRatio('rawFetch');
record({ name: 'getDailyLimit requests/s (loopback)', value: mean(rates.throughClient), unit: 'req/s', baseline: 'raw fetch + json', ratio, goal: '>= 0.9', met: ratio >= 0.9 });
record({ name: 'getDailyLimit requests/s (loopback)', value: mean(rates.throughClient), unit: 'req/s', baseline: 'raw fetch + json + per-request timeout signal', ratio: medianRatio('rawFetchWithTimeout') });

// The sign-in code is a chunk of its own, loaded by signInWithEthereum on first use.
const main = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*', './sign-in-*'] });
record({ name: 'main entry min+gzip, without the sign-in chunk (openapi-fetch included)', value: main.gzipBytes, unit: 'bytes', goal: '<= 10240', met: main.gzipBytes <= 10_240 });
const withSignIn = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*'] });
record({ name: 'main entry min+gzip, with the sign-in chunk (viem excluded)', value: withSignIn.gzipBytes, unit: 'bytes' });
const siwe = await bundleSize(join(here, '../dist/siwe.js'));
record({ name: '@capi/client/siwe min+gzip (viem/siwe included)', value: siwe.gzipBytes, unit: 'bytes' });

server.close();
printTable();
