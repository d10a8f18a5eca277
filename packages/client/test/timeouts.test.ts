import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortError, createPartnerClient, signerFromViemAccount, TimeoutError, type PartnerClient, type RetryEvent } from '../src/index.js';
import { acceptTerms } from '../src/onboarding.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
let service: PartnerService;
let client: PartnerClient;
let retries: RetryEvent[];

// The limit stands for any GET and PUT: on the newer generation, whose operation it is (the older one answers it 404).
beforeEach(async () => {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
  retries = [];
  client = createPartnerClient({ baseUrl: service.url, timeoutMs: 500, retries: { count: 1, baseDelayMs: 1 }, onRetry: (event) => retries.push(event) });
  // Signature verification on a busy machine can take longer than the short test timeout.
  await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE, timeoutMs: 30_000 });
});
afterEach(() => service.close());

const waitForRequest = async (method: string, path: string, count = 1) => {
  while (service.count(method, path) < count) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('times out each request attempt after timeoutMs', () => {
  it('retries a timed-out GET, then throws TimeoutError', async () => {
    service.script('GET', LIMIT_PATH, { hang: true }, { hang: true });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'request_timeout', timeoutMs: 500 });
    expect((error as Error).message).toMatch(/within 500 ms.*Raise timeoutMs/);
    expect(service.count('GET', LIMIT_PATH)).toBe(2);
    expect(retries.map((event) => event.reason)).toEqual(['timeout']);
  });

  it('succeeds when the retry answers in time', async () => {
    service.script('GET', LIMIT_PATH, { hang: true });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
  });

  it('uses a per-call timeoutMs over the client one', async () => {
    service.script('GET', LIMIT_PATH, { hang: true });
    await expect(client.getDailyLimit({ timeoutMs: 20, retries: 0 })).rejects.toMatchObject({ name: 'TimeoutError', timeoutMs: 20 });
  });

  it('does not retry a timed-out PUT', async () => {
    service.script('PUT', LIMIT_PATH, { hang: true });
    await expect(client.setDailyLimit({ amount: 100 })).rejects.toBeInstanceOf(TimeoutError);
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
  });

  it("a timed-out setDailyLimit says the limit may have been set, and to read it with getDailyLimit() (the guide's advice)", async () => {
    service.script('PUT', LIMIT_PATH, { hang: true });
    const error = await client.setDailyLimit({ amount: 100 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'request_timeout', timeoutMs: 500 });
    const { message } = error as Error;
    expect(message).toMatch(/No complete response to PUT .*\/user-api\/user\/account\/limit within 500 ms/);
    expect(message).toMatch(/may have been (set|applied)/);
    expect(message).toContain('getDailyLimit()');
    expect(message).not.toContain('check that the service is reachable');
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
  });

  it('any other timed-out write (a POST, not retried) says it may have been applied, to check before sending it again', async () => {
    service.script('POST', '/user/terms', { hang: true });
    const error = await acceptTerms(client).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'request_timeout' });
    expect((error as Error).message).toMatch(/POST .*\/user\/terms within 500 ms.*may have been applied/);
    expect(service.count('POST', '/user/terms')).toBe(1);
  });

  it('rejects a timeoutMs that is not a positive number', async () => {
    await expect(client.getDailyLimit({ timeoutMs: -5 })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'timeoutMs' });
    await expect(client.getDailyLimit({ retries: 1.5 })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'retries' });
    await expect(client.getDailyLimit({ timeoutMs: '100' as never })).rejects.toMatchObject({ argument: 'timeoutMs', message: expect.stringContaining('got "100"') });
    await expect(client.getDailyLimit({ retries: '1' as never })).rejects.toMatchObject({ argument: 'retries', message: expect.stringContaining('got "1"') });
    expect(service.count('GET', LIMIT_PATH)).toBe(0);
  });
});

describe("cancels on the caller's AbortSignal", () => {
  it('aborts a request in flight with AbortError and does not retry it', async () => {
    service.script('GET', LIMIT_PATH, { hang: true });
    const controller = new AbortController();
    const pending = client.getDailyLimit({ signal: controller.signal, timeoutMs: 60_000 }).catch((caught: unknown) => caught);
    await waitForRequest('GET', LIMIT_PATH);
    const reason = new DOMException('The user left the page', 'AbortError');
    controller.abort(reason);
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    // The caller's own reason is kept as the cause.
    expect((error as Error).cause).toBe(reason);
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('aborts during the backoff wait', async () => {
    const slow = createPartnerClient({ baseUrl: service.url, tokenManager: client.tokenManager, retries: { count: 3, baseDelayMs: 60_000 } });
    service.script('GET', LIMIT_PATH, { status: 503 });
    const controller = new AbortController();
    const pending = slow.getDailyLimit({ signal: controller.signal }).catch((caught: unknown) => caught);
    await waitForRequest('GET', LIMIT_PATH);
    controller.abort();
    expect(await pending).toBeInstanceOf(AbortError);
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('sends nothing for an already aborted signal', async () => {
    await expect(client.getDailyLimit({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
    expect(service.count('GET', LIMIT_PATH)).toBe(0);
  });
});

describe('a request that gets no response', () => {
  it('says the device is offline when the browser says so (navigator.onLine false), else to check the URL and the network', async () => {
    const closed = createPartnerClient({ baseUrl: 'http://127.0.0.1:9', webhooksUrl: 'http://127.0.0.1:9', retries: 0 });
    await expect(closed.getWebhookPublicKey()).rejects.toMatchObject({ name: 'ConnectionError', message: expect.stringMatching(/Check baseUrl\/webhooksUrl and the network/) });
    vi.stubGlobal('navigator', { onLine: false });
    try {
      await expect(closed.getWebhookPublicKey()).rejects.toMatchObject({ name: 'ConnectionError', code: 'connection_failed', message: expect.stringMatching(/The device is offline \(navigator\.onLine is false\)\.$/) });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
