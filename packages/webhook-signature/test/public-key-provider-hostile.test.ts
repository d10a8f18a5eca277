// The key provider against hostile or broken key servers (real node:http on loopback): every
// get() and refresh() settles, with a key or a typed PublicKeyFetchError, and while a key is at
// hand the endpoint is never asked more than once per minRefreshIntervalMs.
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createPublicKeyProvider,
  generateWebhookKeyPair,
  PublicKeyFetchError,
  signWebhook,
  verifyWebhookSignature,
  WebhookSignatureError,
  type PublicKeyProvider,
  type WebhookKeyPair,
} from '../src/index.js';
import { rejectsWithFetchCode } from './implementations.js';
import { type KeyServer, json, startKeyServer } from './key-server.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const FETCH_ERROR_CODES = ['network_error', 'timeout', 'http_error', 'key_unavailable', 'malformed_response'];

let server: KeyServer;
let clock: number;
const now = () => clock;
let first: WebhookKeyPair;
let second: WebhookKeyPair;
let forger: WebhookKeyPair;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => { unhandled.push(reason); };

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  [first, second, forger] = await Promise.all([generateWebhookKeyPair(), generateWebhookKeyPair(), generateWebhookKeyPair()]);
});

afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

beforeEach(async () => {
  clock = 1_700_000_000_000;
  server = await startKeyServer();
});

afterEach(async () => {
  await server.close();
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled.splice(0)).toEqual([]);
});

const provider = (options: Partial<Parameters<typeof createPublicKeyProvider>[0]> = {}) =>
  createPublicKeyProvider({ url: server.url, now, ...options });

describe('rejects a hostile key server with a typed PublicKeyFetchError, and nothing hangs', () => {
  it('a server that sends its headers and never finishes the body gives timeout', async () => {
    server.reply((_, response) => { response.writeHead(200, { 'content-type': 'application/json' }).write('{"success":true,'); });
    await rejectsWithFetchCode(provider({ timeoutMs: 150 }).get(), 'timeout');
  });

  it('a server that trickles its body forever gives timeout', async () => {
    server.reply((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).write('{"success":true,"publicKey":"');
      const drip = setInterval(() => { if (response.destroyed) clearInterval(drip); else response.write('A'); }, 5);
      response.on('close', () => clearInterval(drip));
    });
    await rejectsWithFetchCode(provider({ timeoutMs: 150 }).get(), 'timeout');
  });

  it('a huge body gives a typed error (malformed_response, or timeout when it is slower than timeoutMs)', async () => {
    const chunk = Buffer.alloc(1 << 20, 0x41);
    server.reply((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const pump = () => {
        while (sent < 16 && !response.destroyed) {
          sent += 1;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    });
    const error = await provider({ timeoutMs: 5_000 }).get().then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(PublicKeyFetchError);
    expect(['malformed_response', 'timeout']).toContain((error as PublicKeyFetchError).code);
  }, 20_000); // above the provider's own 5 s timeout, so a slow machine sees the typed error, not vitest's

  it('200 with an HTML page (a login wall, a wrong path) gives malformed_response quoting its start', async () => {
    server.reply((_, response) => { response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>Sign in</body></html>'); });
    const error = await rejectsWithFetchCode(provider().get(), 'malformed_response');
    expect(error.message).toContain('<!doctype html>');
  });

  it('follows a redirect to the key, and gives network_error for a redirect loop', async () => {
    server.reply((request, response) => {
      if (request.url === '/api/v1/public-key') return void response.writeHead(302, { location: '/moved/public-key' }).end();
      if (request.url === '/loop') return void response.writeHead(302, { location: '/loop' }).end();
      json(200, { success: true, publicKey: first.publicKey })(request, response);
    });
    await expect(provider().get()).resolves.toBeDefined();
    await rejectsWithFetchCode(provider({ url: server.url.replace('/api/v1/public-key', '/loop') }).get(), 'network_error');
  });

  it('a fetch that ignores its AbortSignal still gives timeout after timeoutMs, and the next get() asks again', async () => {
    let calls = 0;
    const keys = provider({ timeoutMs: 100, fetch: () => { calls += 1; return new Promise<Response>(() => undefined); } });
    await rejectsWithFetchCode(keys.get(), 'timeout');
    await rejectsWithFetchCode(keys.get(), 'timeout');
    expect(calls).toBe(2);
  });

  it('a fetch wrapper that drops init (and with it the signal) over a server that never answers gives timeout', async () => {
    server.reply(() => undefined);
    await rejectsWithFetchCode(provider({ timeoutMs: 100, fetch: (url) => fetch(url) }).get(), 'timeout');
  });

  it('a body whose reading never ends through a fetch that ignores the signal gives timeout', async () => {
    const stalled = { ok: true, status: 200, text: () => new Promise<string>(() => undefined) } as unknown as Response;
    await rejectsWithFetchCode(provider({ timeoutMs: 100, fetch: () => Promise.resolve(stalled) }).get(), 'timeout');
  });
});

describe('shares one request among concurrent get() and refresh() calls during a failure', () => {
  it('without a key: every call rejects with the same typed error from one request', async () => {
    server.reply((_, response) => { setTimeout(() => json(503, { success: false, message: 'maintenance' })(_, response), 30); });
    const keys = provider();
    const calls = [...Array.from({ length: 10 }, () => keys.get()), ...Array.from({ length: 10 }, () => keys.refresh())];
    const errors = await Promise.all(calls.map((call) => call.then(() => undefined, (reason: unknown) => reason)));
    expect(server.requests()).toBe(1);
    expect(new Set(errors).size).toBe(1);
    expect(errors[0]).toBeInstanceOf(PublicKeyFetchError);
    expect((errors[0] as PublicKeyFetchError).code).toBe('http_error');
  });

  it('with a stale key: one request, then get() fails fast and refresh() keeps the key until minRefreshIntervalMs', async () => {
    server.serveKey(first.publicKey);
    const keys = provider();
    const key = await keys.get();
    clock += 2 * HOUR;
    server.reply((_, response) => { setTimeout(() => json(500, {})(_, response), 30); });
    const calls = [...Array.from({ length: 10 }, () => keys.get()), ...Array.from({ length: 10 }, () => keys.refresh())];
    const outcomes = await Promise.all(calls.map((call) => call.then((value) => value, (reason: unknown) => reason)));
    expect(server.requests()).toBe(2);
    for (const outcome of outcomes) expect((outcome as PublicKeyFetchError).code).toBe('http_error');
    await rejectsWithFetchCode(keys.get(), 'http_error');
    await expect(keys.refresh()).resolves.toBe(key);
    expect(keys.lastKey?.()).toBe(key);
    expect(server.requests()).toBe(2);
  });
});

describe('keeps refetches rate-limited when the key rotates in the middle of a flood of forged deliveries', () => {
  it('asks the endpoint once per minRefreshIntervalMs, never accepts a forgery, and accepts the new key once it is fetched', async () => {
    const body = '{"eventType":"user.created","data":{"id":"u_1"}}';
    server.serveKey(first.publicKey);
    const keys = provider({ minRefreshIntervalMs: MINUTE });
    await keys.get();
    const forged = await signWebhook({ rawBody: body, privateKey: forger.privateKey, timestamp: clock / 1000 });
    const verify = (signed: { timestamp: string; signature: string }) =>
      verifyWebhookSignature({ rawBody: body, ...signed, publicKey: keys, now }).then(() => 'valid', (error: WebhookSignatureError) => error.code);

    clock += 2 * MINUTE;
    const flood = async () => new Set(await Promise.all(Array.from({ length: 40 }, () => verify(forged))));
    // The flood's first forgery refetches (the same key), the rest get the cached key back.
    expect(await flood()).toEqual(new Set(['invalid_signature']));
    expect(server.requests()).toBe(2);
    // The service rotates while the flood goes on: no refetch within minRefreshIntervalMs, so
    // a delivery signed with the new key is refused for now (the service retries it).
    server.serveKey(second.publicKey);
    expect(await flood()).toEqual(new Set(['invalid_signature']));
    const legit = await signWebhook({ rawBody: body, privateKey: second.privateKey, timestamp: clock / 1000 });
    expect(await verify(legit)).toBe('invalid_signature');
    expect(server.requests()).toBe(2);
    // A minute on, one refetch among the flood and the legitimate delivery brings the new key.
    clock += MINUTE;
    const [forgeries, verdict] = await Promise.all([flood(), verify(legit)]);
    expect(forgeries).toEqual(new Set(['invalid_signature']));
    expect(verdict).toBe('valid');
    expect(server.requests()).toBe(3);
    expect(await verify(legit)).toBe('valid');
    expect(server.requests()).toBe(3);
  });
});

type Mode = 'first' | 'second' | 'http 500' | 'html' | 'success false' | 'reset';
type Step =
  | { op: 'advance'; ms: number }
  | { op: 'serve'; mode: Mode }
  | { op: 'get' | 'refresh'; count: number }
  | { op: 'verify'; signer: 'first' | 'second' | 'forger'; count: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 2 * MINUTE }), fc.integer({ min: 0, max: 2 * HOUR })) }),
  fc.record({ op: fc.constant('serve' as const), mode: fc.constantFrom<Mode>('first', 'second', 'http 500', 'html', 'success false', 'reset') }),
  fc.record({ op: fc.constantFrom('get' as const, 'refresh' as const), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('verify' as const), signer: fc.constantFrom('first' as const, 'second' as const, 'forger' as const), count: fc.integer({ min: 1, max: 8 }) }),
);

describe('settles every call with a key or a typed error, whatever the endpoint does, and spaces requests while a key is at hand', () => {
  it('holds for random schedules of rotations, outages, clock steps and concurrent calls', async () => {
    const body = '{"eventType":"user.created","data":{"id":"u_1"}}';
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        let mode: Mode = 'first';
        // When each request reached the server (on the provider's clock), and whether a key was at hand then.
        const requests: Array<{ at: number; keyAtHand: boolean }> = [];
        let keys!: PublicKeyProvider;
        server.reply((request, response) => {
          requests.push({ at: clock, keyAtHand: keys.lastKey?.() !== undefined });
          switch (mode) {
            case 'first': return json(200, { success: true, publicKey: first.publicKey })(request, response);
            case 'second': return json(200, { success: true, publicKey: second.publicKey })(request, response);
            case 'http 500': return json(500, { error: 'down' })(request, response);
            case 'html': return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
            case 'success false': return json(200, { success: false, message: 'no key' })(request, response);
            case 'reset': return void response.socket?.destroy();
          }
        });
        keys = provider({ minRefreshIntervalMs: MINUTE, cacheTtlMs: HOUR });
        const pairs = { first, second, forger };
        for (const current of steps) {
          if (current.op === 'advance') clock += current.ms;
          else if (current.op === 'serve') mode = current.mode;
          else if (current.op === 'verify') {
            const signed = await signWebhook({ rawBody: body, privateKey: pairs[current.signer].privateKey, timestamp: Math.floor(clock / 1000) });
            const verdicts = await Promise.all(Array.from({ length: current.count }, () =>
              verifyWebhookSignature({ rawBody: body, ...signed, publicKey: keys, now }).then(() => 'valid', (error: unknown) => error)));
            for (const verdict of verdicts) {
              if (verdict === 'valid') {
                expect(current.signer).not.toBe('forger');
              } else if (verdict instanceof WebhookSignatureError) {
                expect(verdict.code).toBe('invalid_signature');
              } else {
                expect(verdict).toBeInstanceOf(PublicKeyFetchError);
              }
            }
          } else {
            const call = current.op === 'get' ? () => keys.get() : () => keys.refresh();
            const outcomes = await Promise.all(Array.from({ length: current.count }, () => call().then((key) => key, (error: unknown) => error)));
            for (const outcome of outcomes) {
              if (outcome instanceof PublicKeyFetchError) expect(FETCH_ERROR_CODES).toContain(outcome.code);
              else expect((outcome as CryptoKey).type).toBe('public');
            }
          }
        }
        for (let index = 1; index < requests.length; index++) {
          if (requests[index]!.keyAtHand) expect(requests[index]!.at - requests[index - 1]!.at).toBeGreaterThanOrEqual(MINUTE);
        }
      }),
      { seed: 20261121, numRuns: 60 },
    );
  });
});
