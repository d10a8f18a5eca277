import { createServer } from 'node:http';
import { createPartnerClient, TokenManager } from '../dist/index.js';
import createClient from 'openapi-fetch';
const BODY = JSON.stringify({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
const server = createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) }); res.end(BODY); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const url = `${base}/user-api/user/account/limit`;
const client = createPartnerClient({ baseUrl: base, tokenManager: new TokenManager({ tokens: 't' }) });
const of = createClient({ baseUrl: base, headers: { authorization: 'Bearer t' } });
const variants = {
  raw: async () => { const r = await fetch(url, { headers: { authorization: 'Bearer t' } }); await r.json(); },
  openapiFetch: async () => { await of.GET('/user-api/user/account/limit'); },
  client: async () => { await client.getDailyLimit(); },
};
const N = 1500;
for (let round = 0; round < 3; round++) for (const [name, fn] of Object.entries(variants)) {
  for (let i = 0; i < 100; i++) await fn();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn();
  const c = process.cpuUsage(c0); const t = performance.now() - t0;
  console.log(name.padEnd(14), 'cpu µs/req', ((c.user + c.system) / N).toFixed(0), 'wall µs/req', (t * 1000 / N).toFixed(0));
}
server.close();
