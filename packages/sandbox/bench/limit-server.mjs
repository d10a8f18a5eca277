// A child process of bench/index.mjs: serves the limit GET either through the sandbox or
// through a bare node:http server answering the same JSON (the baseline), and reports its
// URL (and a bearer token) to the parent over IPC.
import { createServer } from 'node:http';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { DEV_WALLET, startSandbox } from '../dist/index.js';

const LIMIT_JSON = JSON.stringify({ amount: 1000000, currency: 'USD', syncStatus: 'synced' });

async function startBare() {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(LIMIT_JSON) });
    response.end(LIMIT_JSON);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/user-api/user/account/limit`, token: 'unused' };
}

async function startSandboxed() {
  // The limit is the newer generation's; the dev wallet's user is seeded with its account.
  const sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
  });
  const account = privateKeyToAccount(DEV_WALLET.privateKey);
  const nonce = await (await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`)).text();
  const message = createSiweMessage({ address: account.address, chainId: 100, domain: 'localhost', uri: 'http://localhost', version: '1', nonce, issuedAt: new Date() });
  const response = await fetch(`${sandbox.baseUrl}/api/v1/auth/challenge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, signature: await account.signMessage({ message }), ttlInSeconds: 86400 }),
  });
  const { token } = await response.json();
  return { url: `${sandbox.baseUrl}/user-api/user/account/limit`, token };
}

const started = process.argv[2] === 'bare' ? await startBare() : await startSandboxed();
process.send(started);
process.on('disconnect', () => process.exit(0));
