import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPublicKeyProvider, PREVIOUS_KEY_GRACE_MS, PublicKeyFetchError, type WebhookKeyPair } from '../src/index.js';
import { implementations, rejectsWithCode, rejectsWithFetchCode } from './implementations.js';
import { type KeyServer, closedPortUrl, json, startKeyServer } from './key-server.js';

const BODY = '{"eventType":"user.created","data":{"id":"u_1"}}';
const MINUTE = 60_000;

let server: KeyServer;
let clock: number;
const now = () => clock;
let first: WebhookKeyPair;
let second: WebhookKeyPair;

beforeAll(async () => {
  [first, second] = await Promise.all([implementations[1]![1].generateWebhookKeyPair(), implementations[1]![1].generateWebhookKeyPair()]);
});

beforeEach(async () => {
  clock = 1_700_000_000_000;
  server = await startKeyServer();
  server.serveKey(first.publicKey);
});

afterEach(async () => {
  await server.close();
});

const provider = (options: Partial<Parameters<typeof createPublicKeyProvider>[0]> = {}) =>
  createPublicKeyProvider({ url: server.url, now, ...options });

describe('fetches { success, publicKey } once and serves it from the cache', () => {
  it('answers repeated get() calls with one request and the same CryptoKey', async () => {
    const keys = provider();
    const key = await keys.get();
    expect(key.type).toBe('public');
    expect(await keys.get()).toBe(key);
    clock += 59 * MINUTE;
    expect(await keys.get()).toBe(key);
    expect(server.requests()).toBe(1);
  });

  it('refetches once the key is older than cacheTtlMs, keeping the CryptoKey when the key is unchanged', async () => {
    const keys = provider({ cacheTtlMs: 10 * MINUTE });
    const key = await keys.get();
    clock += 10 * MINUTE;
    expect(await keys.get()).toBe(key);
    expect(server.requests()).toBe(2);
    server.serveKey(second.publicKey);
    clock += 10 * MINUTE;
    expect(await keys.get()).not.toBe(key);
    expect(server.requests()).toBe(3);
  });

  it('uses the fetch it is given', async () => {
    const seen: string[] = [];
    const keys = provider({ fetch: (input, init) => (seen.push(String(input)), fetch(input, init)) });
    await keys.get();
    expect(seen).toEqual([server.url]);
  });
});

describe('keeps the key before a rotation as previousKey() for 5 minutes (PREVIOUS_KEY_GRACE_MS)', () => {
  it('has none before a rotation, nor when a refetch brings the same key; after one, the replaced key until 5 minutes have passed', async () => {
    const keys = provider({ cacheTtlMs: MINUTE });
    expect(keys.previousKey!()).toBeUndefined();
    const before = await keys.get();
    clock += MINUTE;
    expect(await keys.get()).toBe(before); // refetched, unchanged
    expect(keys.previousKey!()).toBeUndefined();
    server.serveKey(second.publicKey);
    clock += MINUTE;
    const after = await keys.get();
    expect(after).not.toBe(before);
    expect(keys.lastKey!()).toBe(after);
    expect(keys.previousKey!()).toBe(before);
    clock += PREVIOUS_KEY_GRACE_MS - 1;
    expect(keys.previousKey!()).toBe(before);
    clock += 1;
    expect(PREVIOUS_KEY_GRACE_MS).toBe(5 * MINUTE);
    expect(keys.previousKey!()).toBeUndefined();
  });
});

describe('keeps the last key at hand while the endpoint fails after the cache TTL', () => {
  it('rejects get() with the typed error, retrying once per minRefreshIntervalMs, and keeps lastKey()', async () => {
    const keys = provider({ cacheTtlMs: 10 * MINUTE, minRefreshIntervalMs: MINUTE });
    expect(keys.lastKey!()).toBeUndefined();
    const key = await keys.get();
    server.reply(json(500, {}));
    clock += 10 * MINUTE;
    await rejectsWithFetchCode(keys.get(), 'http_error');
    expect(server.requests()).toBe(2);
    clock += MINUTE - 1;
    await rejectsWithFetchCode(keys.get(), 'http_error');
    expect(server.requests()).toBe(2);
    expect(keys.lastKey!()).toBe(key);
    clock += 1;
    await rejectsWithFetchCode(keys.get(), 'http_error');
    expect(server.requests()).toBe(3);
    server.serveKey(second.publicKey);
    clock += MINUTE;
    const rotated = await keys.get();
    expect(rotated).not.toBe(key);
    expect(keys.lastKey!()).toBe(rotated);
    expect(server.requests()).toBe(4);
    expect(await keys.get()).toBe(rotated);
    expect(server.requests()).toBe(4);
  });

  it('retries at every get() when there has never been a key', async () => {
    server.reply(json(500, {}));
    const keys = provider();
    await rejectsWithFetchCode(keys.get(), 'http_error');
    await rejectsWithFetchCode(keys.get(), 'http_error');
    expect(server.requests()).toBe(2);
    expect(keys.lastKey!()).toBeUndefined();
  });
});

describe('shares one request among concurrent get() calls', () => {
  it('twenty callers waiting on a slow endpoint cause one request and get one key', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    server.reply(async (_, response) => {
      await gate;
      json(200, { success: true, publicKey: first.publicKey })(_, response);
    });
    const keys = provider();
    const pending = Array.from({ length: 20 }, () => keys.get());
    // Let the one request reach the server before releasing it.
    while (server.requests() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    const results = await Promise.all(pending);
    expect(new Set(results).size).toBe(1);
    expect(server.requests()).toBe(1);
  });
});

describe('rejects an answer without a usable key with a typed PublicKeyFetchError', () => {
  it('success: false gives key_unavailable, with the service message', async () => {
    server.reply(json(200, { success: false, message: 'key rotation in progress' }));
    const error = await rejectsWithFetchCode(provider().get(), 'key_unavailable');
    expect(error.message).toContain('key rotation in progress');
    expect(error.url).toBe(server.url);
  });

  it.each([
    ['a body that is not JSON', () => json(200, '<html>gateway</html>'), 'not JSON'],
    ['a JSON array', () => json(200, [1, 2]), 'an array'],
    ['no publicKey', () => json(200, { success: true }), 'the fields [success]'],
    ['success that is not a boolean', () => json(200, { success: 'true', publicKey: 'x' }), 'success "true"'],
    ['a publicKey in no key format', () => json(200, { success: true, publicKey: 'not a key!' }), 'unusable publicKey'],
    ['a private key as publicKey', () => json(200, { success: true, publicKey: first.privateKey }), 'a private key'],
  ])('%s gives malformed_response', async (_, reply, saw) => {
    server.reply(reply());
    const error = await rejectsWithFetchCode(provider().get(), 'malformed_response');
    expect(error.message).toContain(saw);
    expect(error.message).not.toContain(first.privateKey.slice(30, 60));
  });

  it.each([404, 500, 503])('HTTP %i gives http_error with the status', async (status) => {
    server.reply(json(status, { error: 'nope' }));
    const error = await rejectsWithFetchCode(provider().get(), 'http_error');
    expect(error.status).toBe(status);
    expect(error.message).toContain(`HTTP ${status}`);
  });

  it('a refused connection (closed port) gives network_error', async () => {
    const error = await rejectsWithFetchCode(createPublicKeyProvider({ url: await closedPortUrl() }).get(), 'network_error');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('an endpoint that never answers gives timeout', async () => {
    server.reply(() => undefined);
    const error = await rejectsWithFetchCode(provider({ timeoutMs: 100 }).get(), 'timeout');
    expect(error.message).toContain('timeoutMs');
  });

  it.each([
    ['Infinity (no timeout)', Infinity],
    ['beyond what a timer holds (2^40 ms)', 2 ** 40],
    ['a fraction', 1_000.5],
  ])('a timeoutMs of %s still fetches the key', async (_, timeoutMs) => {
    server.serveKey(first.publicKey);
    await expect(provider({ timeoutMs }).get()).resolves.toBeDefined();
  });

  it('a fetch that rejects with something other than an Error gives network_error', async () => {
    const error = await rejectsWithFetchCode(provider({ fetch: () => Promise.reject(null) }).get(), 'network_error');
    expect(error.message).toContain('failed (null)');
  });

  it('does not cache a failure: the next get() asks again', async () => {
    server.reply(json(500, {}));
    const keys = provider();
    await rejectsWithFetchCode(keys.get(), 'http_error');
    server.serveKey(first.publicKey);
    await expect(keys.get()).resolves.toBeDefined();
    expect(server.requests()).toBe(2);
  });
});

describe('rejects misuse of its options with a TypeError', () => {
  it.each([
    ['a relative url', { url: '/api/v1/public-key' }],
    ['a non-http url', { url: 'ftp://example.com/key' }],
    ['a negative cacheTtlMs', { url: 'https://example.com', cacheTtlMs: -1 }],
    ['a string minRefreshIntervalMs', { url: 'https://example.com', minRefreshIntervalMs: '60000' }],
    ['a timeoutMs of 0 (every fetch would time out)', { url: 'https://example.com', timeoutMs: 0 }],
    ['a fetch that is not a function', { url: 'https://example.com', fetch: 3 }],
    ['a clock that is not a function', { url: 'https://example.com', now: 5 }],
    ['no options', undefined],
  ])('%s', (_, options) => {
    expect(() => createPublicKeyProvider(options as never)).toThrow(TypeError);
  });

  it('says what it got, quoting a string', () => {
    expect(() => createPublicKeyProvider({ url: 'https://example.com', minRefreshIntervalMs: '60000' as never })).toThrow('minRefreshIntervalMs must be a number >= 0; got "60000".');
    expect(() => createPublicKeyProvider({ url: 'https://example.com', timeoutMs: 0 })).toThrow('timeoutMs must be a number > 0; got 0.');
    expect(() => createPublicKeyProvider({ url: 'https://example.com', fetch: 3 as never })).toThrow('Pass options.fetch, a fetch function (needed where there is no global fetch); got a number.');
  });
});

describe.each(implementations)('verifyWebhookSignature with a provider (%s build)', (_, api) => {
  const sign = (privateKey: string) => api.signWebhook({ rawBody: BODY, privateKey, timestamp: clock / 1000 });
  const verify = (publicKey: ReturnType<typeof provider>, signed: { timestamp: string; signature: string }) =>
    api.verifyWebhookSignature({ rawBody: BODY, ...signed, publicKey, now });

  it('verifies with the fetched key', async () => {
    await expect(verify(provider(), await sign(first.privateKey))).resolves.toBeUndefined();
    expect(server.requests()).toBe(1);
  });

  it('refetches once when the cached key fails, and accepts a webhook signed with the rotated key', async () => {
    const keys = provider();
    await keys.get();
    server.serveKey(second.publicKey);
    clock += 2 * MINUTE;
    await expect(verify(keys, await sign(second.privateKey))).resolves.toBeUndefined();
    expect(server.requests()).toBe(2);
    await expect(verify(keys, await sign(second.privateKey))).resolves.toBeUndefined();
    expect(server.requests()).toBe(2);
  });

  it('by default refetches 15 s after the last fetch, a quarter of the first retry wait: a delivery signed with a rotated key verifies well before its retry', async () => {
    const keys = provider();
    await keys.get();
    server.serveKey(second.publicKey);
    const signed = await sign(second.privateKey);
    clock += 15_000 - 1;
    await rejectsWithCode(verify(keys, signed), 'invalid_signature');
    expect(server.requests()).toBe(1);
    clock += 1;
    await expect(verify(keys, signed)).resolves.toBeUndefined();
    expect(server.requests()).toBe(2);
  });

  it('rate-limits refetches: a flood of forged webhooks causes one fetch per minRefreshIntervalMs', async () => {
    const keys = provider({ minRefreshIntervalMs: MINUTE });
    await keys.get();
    const { privateKey: forger } = await api.generateWebhookKeyPair();
    const forged = await sign(forger);
    clock += 2 * MINUTE;
    const concurrent = await Promise.all(Array.from({ length: 25 }, () => verify(keys, forged).catch((error: unknown) => error)));
    for (const error of concurrent) expect((error as { code?: string }).code).toBe('invalid_signature');
    for (let i = 0; i < 25; i++) await rejectsWithCode(verify(keys, forged), 'invalid_signature');
    expect(server.requests()).toBe(2);
    clock += MINUTE;
    await rejectsWithCode(verify(keys, forged), 'invalid_signature');
    expect(server.requests()).toBe(3);
  });

  it('answers invalid_signature when the refetch after a failure itself fails', async () => {
    const keys = provider();
    await keys.get();
    server.reply(json(500, {}));
    clock += 2 * MINUTE;
    const error = await rejectsWithCode(verify(keys, await sign(second.privateKey)), 'invalid_signature');
    expect(error.cause).toBeInstanceOf(PublicKeyFetchError);
  });

  it('verifies with the last key while the endpoint is down after the cache TTL (stale if error)', async () => {
    const keys = provider();
    await keys.get();
    server.reply(json(503, {}));
    clock += 2 * 60 * MINUTE;
    await expect(verify(keys, await sign(first.privateKey))).resolves.toBeUndefined();
    await expect(verify(keys, await sign(first.privateKey))).resolves.toBeUndefined();
    expect(server.requests()).toBe(2);
    const { privateKey: forger } = await api.generateWebhookKeyPair();
    await rejectsWithCode(verify(keys, await sign(forger)), 'invalid_signature');
    expect(server.requests()).toBe(2);
  });

  it('verifies with a provider of your own that has no lastKey', async () => {
    const key = await provider().get();
    const own = { get: () => Promise.resolve(key), refresh: () => Promise.resolve(key) };
    await expect(verify(own as ReturnType<typeof provider>, await sign(first.privateKey))).resolves.toBeUndefined();
  });

  it('passes the PublicKeyFetchError through when there is no key at all', async () => {
    server.reply(json(200, { success: false }));
    await rejectsWithFetchCode(verify(provider(), await sign(first.privateKey)), 'key_unavailable');
  });
});
