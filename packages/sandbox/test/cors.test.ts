// CORS over real HTTP: fetch with explicit Origin headers, as a browser would send them.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { newAccount, tokenFor } from './support/sign-in.js';

const SEED = 20261121;
const registered = newAccount();
let sandbox: Sandbox;
let token: string;

beforeAll(async () => {
  // The newer generation, whose limit a partner's front end reads and sets (the user has its account).
  sandbox = await startSandbox({
    generation: 'newer',
    users: [{ signInWallets: [registered.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }],
    whitelist: ['app.example.com', 'shop.example.com:8443'],
    limitSyncDelayMs: 5,
  });
  token = await tokenFor(sandbox.baseUrl, registered);
});
afterAll(() => sandbox?.close());

const preflight = (url: string, origin: string, method = 'PUT', headers = 'authorization, content-type') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

const port = fc.integer({ min: 1, max: 65535 });
const scheme = fc.constantFrom('http', 'https');
const allowedOrigin = fc.oneof(
  fc.constant('http://localhost'),
  fc.tuple(scheme, port).map(([s, p]) => `${s}://localhost:${p}`),
  fc.tuple(scheme, port).map(([s, p]) => `${s}://app.example.com:${p}`),
  scheme.map((s) => `${s}://app.example.com`),
  scheme.map((s) => `${s}://shop.example.com:8443`),
);
const disallowedOrigin = fc.oneof(
  fc.tuple(scheme, port).map(([s, p]) => `${s}://127.0.0.1:${p}`),
  fc.tuple(scheme, port).map(([s, p]) => `${s}://partner.localhost:${p}`),
  fc.tuple(scheme, port.filter((p) => p !== 8443)).map(([s, p]) => `${s}://shop.example.com:${p}`),
  scheme.map((s) => `${s}://shop.example.com`),
  fc.tuple(scheme, fc.domain()).filter(([, d]) => !['localhost', 'app.example.com'].includes(d)).map(([s, d]) => `${s}://${d}`),
  fc.constantFrom('null', 'file://', 'ftp://localhost', 'http://localhost:3000/path', 'localhost:3000', 'http://user@localhost:3000'),
);

describe('answers a CORS preflight from an origin whose host is an allowed SIWE domain', () => {
  it('allows localhost (any port) and each whitelist entry (host: any port; host:port: that port), http or https', async () => {
    await fc.assert(
      fc.asyncProperty(allowedOrigin, async (origin) => {
        const response = await preflight(`${sandbox.baseUrl}/user-api/user/account/limit`, origin);
        expect(response.status).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe(origin);
        expect(response.headers.get('vary')).toBe('Origin');
        expect(response.headers.get('access-control-allow-methods')).toBe('GET, PUT, POST, PATCH, DELETE');
        expect(response.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
        expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
        expect(await response.text()).toBe('');
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('echoes the origin on the answers themselves, errors included, and exposes the headers the client reads', async () => {
    const origin = 'http://localhost:3000';
    const nonce = await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`, { headers: { origin } });
    expect(nonce.status).toBe(200);
    expect(nonce.headers.get('access-control-allow-origin')).toBe(origin);
    expect(nonce.headers.get('vary')).toBe('Origin');
    expect(nonce.headers.get('access-control-expose-headers')).toBe('retry-after, x-request-id, request-id, x-amzn-requestid');

    const set = await fetch(`${sandbox.baseUrl}/user-api/user/account/limit`, {
      method: 'PUT',
      headers: { origin, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1234, currency: 'USD' }),
    });
    expect(set.status).toBe(200);
    expect(set.headers.get('access-control-allow-origin')).toBe(origin);
    expect(await set.json()).toMatchObject({ amount: 1234, syncStatus: 'pending' });

    // The client must be able to read a refusal's body to raise the right error.
    const refused = await fetch(`${sandbox.baseUrl}/user-api/user/account/limit`, { headers: { origin } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(origin);
    const notFound = await fetch(`${sandbox.baseUrl}/no/such/path`, { headers: { origin: 'https://app.example.com' } });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });
});

describe('refuses an origin outside the SIWE whitelist', () => {
  it('answers its preflight 403 with an ErrorBody naming the origin and --whitelist, and no CORS headers', async () => {
    await fc.assert(
      fc.asyncProperty(disallowedOrigin, async (origin) => {
        const response = await preflight(`${sandbox.baseUrl}/user-api/user/account/limit`, origin);
        expect(response.status).toBe(403);
        expect(corsHeaders(response)).toEqual([]);
        expect(response.headers.get('content-type')).toBe('application/json');
        const body = await response.json();
        expect(body.code).toBe('CorsOriginNotAllowed');
        expect(body.message).toContain(JSON.stringify(origin));
        expect(body.message).toMatch(/--whitelist|localhost/);
      }),
      { seed: SEED, numRuns: 80 },
    );
  });

  it('tells a page on 127.0.0.1 to use localhost, and a foreign host which --whitelist to pass', async () => {
    const loopback = await (await preflight(`${sandbox.baseUrl}/api/v1/auth/challenge`, 'http://127.0.0.1:3000', 'POST', 'content-type')).json();
    expect(loopback.message).toContain('--whitelist 127.0.0.1');
    expect(loopback.message).toContain('http://localhost');
    const foreign = await (await preflight(`${sandbox.baseUrl}/api/v1/auth/challenge`, 'https://partner.example.org:8080', 'POST', 'content-type')).json();
    expect(foreign.message).toContain("--whitelist partner.example.org (startSandbox({ whitelist: ['partner.example.org'] }))");
  });

  it('adds no CORS header to its other requests (the browser then withholds the answer)', async () => {
    await fc.assert(
      fc.asyncProperty(disallowedOrigin, async (origin) => {
        const response = await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`, { headers: { origin } });
        expect(response.status).toBe(200);
        expect(corsHeaders(response)).toEqual([]);
        await response.text();
      }),
      { seed: SEED, numRuns: 30 },
    );
  });
});

describe('leaves requests without an Origin header as they were', () => {
  it('adds no CORS or Vary header, and an OPTIONS that is not a preflight is routed as before', async () => {
    const response = await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`);
    expect(corsHeaders(response)).toEqual([]);
    expect(response.headers.get('vary')).toBeNull();
    await response.text();
    const options = await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`, { method: 'OPTIONS', headers: { origin: 'http://localhost:3000' } });
    expect(options.status).toBe(405);
    expect(options.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    expect((await options.json()).code).toBe('MethodNotAllowed');
  });
});

describe('applies the same rule to the /__sandbox/ endpoints', () => {
  it('allows a whitelisted origin and refuses another', async () => {
    const allowed = await preflight(`${sandbox.baseUrl}/__sandbox/deliveries`, 'http://localhost:5173', 'DELETE', '');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const read = await fetch(`${sandbox.baseUrl}/__sandbox/users`, { headers: { origin: 'http://localhost:5173' } });
    expect(read.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect((await read.json()).users).toHaveLength(1);
    const refused = await preflight(`${sandbox.baseUrl}/__sandbox/users`, 'https://evil.example', 'POST', 'content-type');
    expect(refused.status).toBe(403);
    expect(corsHeaders(refused)).toEqual([]);
  });
});

describe('lets any origin read the webhook public key', () => {
  it('answers GET /api/v1/public-key and its preflight with Access-Control-Allow-Origin: *', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(allowedOrigin, disallowedOrigin), async (origin) => {
        const response = await fetch(`${sandbox.webhooksUrl}/api/v1/public-key`, { headers: { origin } });
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(await response.json()).toEqual({ success: true, publicKey: sandbox.publicKey });
        const pre = await preflight(`${sandbox.webhooksUrl}/api/v1/public-key`, origin, 'GET', 'authorization');
        expect(pre.status).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      }),
      { seed: SEED, numRuns: 20 },
    );
    const withoutOrigin = await fetch(`${sandbox.webhooksUrl}/api/v1/public-key`);
    expect(corsHeaders(withoutOrigin)).toEqual([]);
    await withoutOrigin.text();
  });
});
