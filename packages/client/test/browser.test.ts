// The built client in a real browser against the sandbox: headless Chromium loads a page from
// http://localhost:PORT (so the SIWE domain is localhost:PORT) that imports the client's dist
// main entry and a viem local account, bundled by esbuild for the browser, and calls the
// sandbox cross-origin (CORS). A second page, on an origin the sandbox does not allow
// (partner.localhost, which Chromium resolves to loopback), must get a ConnectionError. The
// pages report back over loopback HTTP; the test asserts on what they report.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser, mainEntry } from './support/browser-bundle.js';
import { registeredAccount, TEST_PRIVATE_KEY } from './support/wallet.js';


// The page's script. Each step's outcome is reported, an error as its name, code and status.
const PROBE = `
import { AuthenticationError, ConnectionError, InvalidArgumentError, createPartnerClient, signerFromViemAccount } from ${JSON.stringify(mainEntry)};
import { privateKeyToAccount } from 'viem/accounts';

const report = (result) => fetch('/result', { method: 'POST', body: JSON.stringify({ origin: location.origin, ...result }) });
const outcome = (promise) =>
  promise.then(
    (value) => ({ value }),
    (error) => ({ error: { name: error?.name, code: error?.code, status: error?.status, argument: error?.argument, message: String(error?.message),
      typed: error instanceof AuthenticationError || error instanceof ConnectionError || error instanceof InvalidArgumentError } }),
  );
const limitRequests = () => performance.getEntriesByType('resource').filter((entry) => entry.name.endsWith('/user-api/user/account/limit')).length;

try {
  const config = await (await fetch('/config')).json();
  const account = privateKeyToAccount(config.privateKey);
  const client = createPartnerClient({ baseUrl: config.baseUrl, webhooksUrl: config.webhooksUrl, retries: 0 });
  const signIn = () => outcome(client.signInWithEthereum({ ...signerFromViemAccount(account), domain: location.host, uri: location.origin, chainId: 100, ttlInSeconds: 3600 }));
  if (location.hostname === 'localhost') {
    const signedIn = await signIn();
    const initial = await outcome(client.getDailyLimit());
    const set = await outcome(client.setDailyLimit({ amount: 42000 }));
    const synced = await outcome(client.waitForLimitSync({ pollIntervalMs: 20, timeoutMs: 20000 }));
    const requestsBefore = limitRequests();
    const outOfRange = await outcome(client.setDailyLimit({ amount: 1000001 }));
    const requestsAfterOutOfRange = limitRequests() - requestsBefore;
    const publicKey = await outcome(client.getWebhookPublicKey());
    client.tokenManager.clear();
    const withoutToken = await outcome(client.getDailyLimit());
    await report({ signedIn: signedIn.value ? { tokenParts: signedIn.value.token.split('.').length, expiresAt: signedIn.value.expiresAt.getTime() } : signedIn,
      initial, set, synced, limitRequestsSeen: requestsBefore, outOfRange, requestsAfterOutOfRange, publicKey, withoutToken, domain: location.host });
    location.href = config.foreignPage;
  } else {
    const signedIn = await signIn();
    client.tokenManager.setTokens(config.token);
    const limit = await outcome(client.getDailyLimit());
    const publicKey = await outcome(client.getWebhookPublicKey());
    await report({ signedIn, limit, publicKey });
  }
} catch (error) {
  await report({ failure: String((error && error.stack) || error) });
}
`;

let scratch: string;
let probeBundle: string;
let sandbox: Sandbox;
let pageServer: Server;

beforeAll(async () => {
  if (!existsSync(mainEntry)) throw new Error('dist/ is missing: run `pnpm turbo run build --filter=@capi/client...` first');
  scratch = mkdtempSync(join(tmpdir(), 'capi-client-browser-'));
  probeBundle = await bundleForBrowser(PROBE);
  // The limit is the newer generation's; the user has its account (a smart wallet).
  sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [registeredAccount.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }],
    limitSyncDelayMs: 50,
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([sandbox?.close(), pageServer && new Promise<void>((resolve) => pageServer.close(() => resolve()))]);
  // Chromium's helper processes may still be writing to the profile for a moment after exit.
  if (scratch) rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(text));
  });

/** Serves the page on loopback; resolves with the reports of the localhost page and the foreign one. */
async function servePages(config: (port: number) => unknown) {
  const reports: Record<string, unknown>[] = [];
  let done!: () => void;
  const bothReported = new Promise<void>((resolve) => (done = resolve));
  pageServer = createServer(async (request, response) => {
    if (request.method === 'POST' && request.url === '/result') {
      const result = JSON.parse(await readBody(request)) as Record<string, unknown>;
      reports.push(result);
      if (reports.length === 2 || 'failure' in result) done();
      return void response.writeHead(204).end();
    }
    const pages: Record<string, [string, string]> = {
      '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>partner front end</title><script type="module" src="/probe.js"></script>'],
      '/probe.js': ['text/javascript', probeBundle],
      '/config': ['application/json', JSON.stringify(config((pageServer.address() as AddressInfo).port))],
    };
    const page = pages[request.url ?? ''];
    response.writeHead(page ? 200 : 404, { 'content-type': `${page?.[0] ?? 'text/plain'}; charset=utf-8` }).end(page?.[1]);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  return { port: (pageServer.address() as AddressInfo).port, reports, bothReported };
}

describe('runs in a real browser against the sandbox (headless Chromium, cross-origin)', () => {
  it('signs in with the page as SIWE domain, reads, sets and waits for the limit, throws typed errors, and gets a ConnectionError where CORS refuses', async () => {
    const { port, reports, bothReported } = await servePages((pagePort) => ({
      baseUrl: sandbox.baseUrl,
      webhooksUrl: sandbox.webhooksUrl,
      privateKey: TEST_PRIVATE_KEY,
      foreignPage: `http://partner.localhost:${pagePort}/`,
      token: 'not-a-real-token',
    }));
    const profile = mkdtempSync(join(scratch, 'profile-'));
    const chromium = spawn(
      process.env.CHROMIUM_PATH ?? 'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
        `--user-data-dir=${profile}`, `http://localhost:${port}/`],
      // Its own process group, so that the browser and its helpers are stopped together (below).
      { stdio: 'ignore', detached: true },
    );
    const closed = new Promise<void>((resolve) => chromium.on('close', () => resolve()));
    const exited = new Promise<void>((resolve) => chromium.on('exit', (code) => (reports.push({ failure: `chromium exited (${code})` }), resolve())));
    try {
      await Promise.race([bothReported, exited]);
      expect(reports.find((report) => 'failure' in report)).toBeUndefined();
      const main = reports.find((report) => report.origin === `http://localhost:${port}`)!;
      const foreign = reports.find((report) => report.origin === `http://partner.localhost:${port}`)!;

      expect(main).toMatchObject({
        domain: `localhost:${port}`,
        signedIn: { tokenParts: 3 },
        initial: { value: { amount: 1_000_000, syncStatus: 'synced' } },
        set: { value: { amount: 42_000, currency: 'USD', syncStatus: 'pending' } },
        synced: { value: { amount: 42_000, syncStatus: 'synced' } },
        outOfRange: { error: { name: 'InvalidArgumentError', code: 'amount_out_of_range', argument: 'amount', typed: true } },
        requestsAfterOutOfRange: 0,
        publicKey: { value: { success: true, publicKey: sandbox.publicKey } },
        withoutToken: { error: { name: 'AuthenticationError', status: 401, code: 'MissingToken', typed: true } },
      });
      // The page's resource timing saw the limit requests it made (GET, PUT, polls), and none more for the out-of-range amount.
      expect(main.limitRequestsSeen).toBeGreaterThanOrEqual(3);
      expect((main.signedIn as { expiresAt: number }).expiresAt).toBeGreaterThan(Date.now() + 14 * 60_000); // newer generation: 15 minutes
      // The sandbox saw the limit the page set, so the page's requests really reached it.
      const limit = await fetch(`${sandbox.baseUrl}/user-api/user/account/limit`, { headers: { authorization: `Bearer ${await tokenFor()}` } });
      expect(await limit.json()).toMatchObject({ amount: 42_000 });

      // partner.localhost is not an allowed origin: the browser withholds every core API answer.
      expect(foreign).toMatchObject({
        signedIn: { error: { name: 'ConnectionError', code: 'connection_failed', typed: true } },
        limit: { error: { name: 'ConnectionError', code: 'connection_failed', typed: true } },
        // The public key may be read from any origin.
        publicKey: { value: { success: true, publicKey: sandbox.publicKey } },
      });
      expect((foreign.limit as { error: { message: string } }).error.message).toContain('CORS');
    } finally {
      // The whole group: the helpers (zygote, renderers) write to the profile too, and outlive a
      // kill of the browser alone long enough for its removal to fail with ENOTEMPTY under load.
      try { process.kill(-chromium.pid!, 'SIGKILL'); } catch { /* gone already */ }
      await closed; // before the profile folder is removed
    }
  }, 90_000);
});

/** A token for the test's own check of the sandbox's state (Node side, no Origin). */
async function tokenFor(): Promise<string> {
  const { createPartnerClient, signerFromViemAccount } = await import('../src/index.js');
  const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
  const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 });
  return token;
}
