import { afterEach, describe, expect, it } from 'vitest';
import { createPartnerClient, InvalidArgumentError, signerFromViemAccount } from '../src/index.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let service: PartnerService | undefined;
afterEach(() => service?.close());

describe('checks client options when the client is created', () => {
  it.each([
    ['no options', undefined, 'options'],
    ['a missing baseUrl', {}, 'baseUrl'],
    ['a relative baseUrl', { baseUrl: '/api' }, 'baseUrl'],
    ['a non-http baseUrl', { baseUrl: 'ftp://example.com' }, 'baseUrl'],
    ['a malformed webhooksUrl', { baseUrl: 'https://api.example.com', webhooksUrl: 'webhooks' }, 'webhooksUrl'],
    ['a zero timeoutMs', { baseUrl: 'https://api.example.com', timeoutMs: 0 }, 'timeoutMs'],
    ['a negative retries', { baseUrl: 'https://api.example.com', retries: -1 }, 'retries'],
    ['a fractional retries', { baseUrl: 'https://api.example.com', retries: 1.5 }, 'retries'],
    ['a negative retry delay', { baseUrl: 'https://api.example.com', retries: { baseDelayMs: -1 } }, 'retries.baseDelayMs'],
    ['a fractional maxDailyLimitCents', { baseUrl: 'https://api.example.com', maxDailyLimitCents: 10.5 }, 'maxDailyLimitCents'],
    ['a fetch that is not a function', { baseUrl: 'https://api.example.com', fetch: 'fetch' }, 'fetch'],
    ['a tokenManager that is not one', { baseUrl: 'https://api.example.com', tokenManager: {} }, 'tokenManager'],
    ['retries given as a string', { baseUrl: 'https://api.example.com', retries: '5' }, 'retries'],
    ['retries given as an array', { baseUrl: 'https://api.example.com', retries: [1] }, 'retries'],
  ])('rejects %s with InvalidArgumentError', (_case, options, argument) => {
    const create = () => createPartnerClient(options as never);
    expect(create).toThrow(InvalidArgumentError);
    expect(create).toThrow(expect.objectContaining({ argument }));
  });

  // Options often come from environment variables: "got 100" for the string "100" would read
  // as if 100 had been refused.
  it.each([
    ['timeoutMs', { timeoutMs: '100' }],
    ['retries', { retries: { count: '3' } }],
    ['retries.baseDelayMs', { retries: { baseDelayMs: '10' } }],
    ['maxDailyLimitCents', { maxDailyLimitCents: '2000000' }],
  ])('quotes a string given for %s in the message', (argument, options) => {
    const create = () => createPartnerClient({ baseUrl: 'https://api.example.com', ...(options as object) });
    expect(create).toThrow(expect.objectContaining({ argument, message: expect.stringMatching(/got "\d+"/) }));
  });

  it('accepts Infinity as "no timeout"', () => {
    expect(() => createPartnerClient({ baseUrl: 'https://api.example.com', timeoutMs: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});

describe('checks the signal and auth of each call before sending', () => {
  it.each([
    ['a string signal', { signal: 'abort' }, 'signal'],
    ['a plain object signal', { signal: {} }, 'signal'],
    ['an AbortController instead of its signal', { signal: new AbortController() }, 'signal'],
    ['auth given as a string', { auth: 'false' }, 'auth'],
  ])('rejects %s with InvalidArgumentError and sends nothing', async (_case, options, argument) => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] }); // the limit's generation
    const client = createPartnerClient({ baseUrl: service.url, webhooksUrl: service.url });
    const calls = [
      client.getDailyLimit(options as never),
      client.setDailyLimit({ amount: 100 }, options as never),
      // The public key and sign-in calls never send a token, whatever auth says.
      ...('signal' in options
        ? [client.getWebhookPublicKey(options as never), client.waitForLimitSync(options as never), client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE, ...(options as object) })]
        : []),
    ];
    for (const call of calls) {
      const error = await call.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument, code: 'invalid_option', message: expect.stringMatching(argument === 'signal' ? /must be an AbortSignal/ : /must be true or false, got "false"/) });
    }
    expect(service.requests).toHaveLength(0);
  });

  it('rejects a per-call headers option instead of sending the TokenManager\'s token (another user\'s)', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] }); // the limit's generation
    const client = createPartnerClient({ baseUrl: service.url });
    const options = { headers: { Authorization: 'Bearer another-users-token' } };
    for (const call of [client.getDailyLimit(options as never), client.setDailyLimit({ amount: 100 }, options as never)]) {
      const error = await call.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument: 'headers', code: 'invalid_option', message: expect.stringMatching(/client\.raw/) });
    }
    expect(service.requests).toHaveLength(0);
  });

  it.each([['null', null], ['a number', 5], ['a string', 'fast']])('rejects options that are %s with InvalidArgumentError and sends nothing', async (_case, options) => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] }); // the limit's generation
    const client = createPartnerClient({ baseUrl: service.url });
    for (const call of [client.getDailyLimit(options as never), client.setDailyLimit({ amount: 100 }, options as never), client.waitForLimitSync(options as never)]) {
      const error = await call.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument: 'options', code: 'invalid_option', message: expect.stringMatching(/options must be an object such as \{ (signal|timeoutMs), .*got (null|5|"fast")\.$/) });
    }
    expect(service.requests).toHaveLength(0);
  });

  it('takes signal: null as no signal, as fetch does', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] }); // the limit's generation
    const client = createPartnerClient({ baseUrl: service.url });
    await expect(client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE, signal: null as never })).resolves.toMatchObject({ token: expect.any(String) });
    await expect(client.getDailyLimit({ signal: null as never })).resolves.toMatchObject({ amount: 1_000_000 });
    await expect(client.waitForLimitSync({ signal: null as never })).resolves.toMatchObject({ syncStatus: 'synced' });
  });
});

describe('refuses a custom fetch that resolves to something other than a Response', () => {
  it.each([
    ['undefined', undefined, 'undefined'],
    ['a plain object', { ok: true }, 'another object'],
    ['a string', 'ok', '"ok"'],
  ])('%s: InvalidArgumentError naming the fetch option, not retried as a ConnectionError', async (_case, value, shown) => {
    let calls = 0;
    const client = createPartnerClient({ baseUrl: 'http://localhost:9', retries: 2, fetch: async () => ((calls += 1), value as never) });
    const error = await client.getDailyLimit({ auth: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument: 'fetch', code: 'invalid_option', message: expect.stringContaining(`fetch must resolve to a Response, got ${shown}`) });
    expect(calls).toBe(1);
  });
});

describe('exposes the typed openapi-fetch client as raw, with the client behaviour underneath', () => {
  it('sends raw requests with the bearer token and returns {data, response} without throwing', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] }); // the limit's generation
    const client = createPartnerClient({ baseUrl: service.url });
    const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    const { data, error, response } = await client.raw.GET('/user-api/user/account/limit');
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
    expect(service.requests.at(-1)!.authorization).toBe(`Bearer ${token}`);

  });

  it('lets raw middleware see every request', async () => {
    service = await startPartnerService();
    const client = createPartnerClient({ baseUrl: service.url });
    const seen: string[] = [];
    client.raw.use({ onRequest: ({ request }) => void seen.push(`${request.method} ${new URL(request.url).pathname}`) });
    await client.raw.GET('/api/v1/auth/nonce', { parseAs: 'text' });
    expect(seen).toEqual(['GET /api/v1/auth/nonce']);
  });

  it('uses a custom fetch for every attempt', async () => {
    service = await startPartnerService();
    const urls: string[] = [];
    const client = createPartnerClient({
      baseUrl: service.url,
      fetch: (url, init) => {
        urls.push(url);
        return fetch(url, init);
      },
    });
    await client.raw.GET('/api/v1/auth/nonce', { parseAs: 'text' });
    expect(urls).toEqual([`${service.url}/api/v1/auth/nonce`]);
  });
});
