import { createServer } from 'node:http';
import { createPartnerClient, TokenManager } from '../dist/index.js';
const BODY = JSON.stringify({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
const server = createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) }); res.end(BODY); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const client = createPartnerClient({ baseUrl: base, tokenManager: new TokenManager({ tokens: 't' }) });
for (let i = 0; i < 4000; i++) await client.getDailyLimit();
server.close();
