import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPartnerClient, RateLimitError, ServerError, ConnectionError, signerFromViemAccount, type RetryEvent, type PartnerClient } from '../src/index.js';
import { acceptTerms } from '../src/onboarding.js';
import { backoffDelay, resolveRetryPolicy } from '../src/retry-policy.js';
import { parseRetryAfter } from '../src/retry-after.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
let service: PartnerService;
let retries: RetryEvent[];
let client: PartnerClient;

// The limit stands for any idempotent (GET) and non-idempotent (PUT) request: on the newer
// generation, whose operation it is (the older one answers it 404).
beforeEach(async () => {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
  retries = [];
  client = createPartnerClient({ baseUrl: service.url, retries: { count: 2, baseDelayMs: 1 }, onRetry: (event) => retries.push(event) });
  await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
});
afterEach(() => service.close());

describe('retries idempotent requests on 5xx, 408 and 429', () => {
  it('retries a GET after 503 and 502 and returns the answer that follows', async () => {
    service.script('GET', LIMIT_PATH, { status: 503, body: 'unavailable' }, { status: 502, body: { error: 'bad gateway' } });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(service.count('GET', LIMIT_PATH)).toBe(3);
    expect(retries.map((event) => [event.retry, event.reason, event.status])).toEqual([
      [1, 'status', 503],
      [2, 'status', 502],
    ]);
  });

  it('gives up after the configured count with the typed error of the last answer', async () => {
    service.script('GET', LIMIT_PATH, { status: 500, body: 'a' }, { status: 500, body: 'b' }, { status: 500, body: 'c' });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toContain(': c.');
    expect(service.count('GET', LIMIT_PATH)).toBe(3);
  });

  it('makes no retry with retries: 0, per client or per call', async () => {
    service.script('GET', LIMIT_PATH, { status: 503 }, { status: 503 });
    const noRetries = createPartnerClient({ baseUrl: service.url, retries: 0, tokenManager: client.tokenManager });
    await expect(noRetries.getDailyLimit()).rejects.toBeInstanceOf(ServerError);
    await expect(client.getDailyLimit({ retries: 0 })).rejects.toBeInstanceOf(ServerError);
    expect(service.count('GET', LIMIT_PATH)).toBe(2);
  });

  it('does not retry 4xx answers other than 408 and 429', async () => {
    service.script('GET', LIMIT_PATH, { status: 404, body: { error: 'gone' } });
    await expect(client.getDailyLimit()).rejects.toMatchObject({ status: 404 });
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('retries a 408', async () => {
    service.script('GET', LIMIT_PATH, { status: 408 });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ syncStatus: 'synced' });
    expect(service.count('GET', LIMIT_PATH)).toBe(2);
  });
});

describe('never retries a PUT or POST unless the caller asks', () => {
  it('sends a PUT once on 503', async () => {
    service.script('PUT', LIMIT_PATH, { status: 503, body: { message: 'try later' } });
    await expect(client.setDailyLimit({ amount: 5_000 })).rejects.toBeInstanceOf(ServerError);
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
  });

  it('sends a PUT once on a dropped connection, and says it may have been applied (it reached the service)', async () => {
    service.script('PUT', LIMIT_PATH, { dropConnection: true });
    const error = await client.setDailyLimit({ amount: 5_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/If the request was sent, the new limit may have been set, and a write is not retried by default: read the limit with getDailyLimit\(\) to see whether it applied before setting it again\./);
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
  });

  it('sends any other write (a POST) once on a dropped connection, and says to check whether it took effect', async () => {
    service.script('POST', '/user/terms', { dropConnection: true });
    const error = await acceptTerms(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/^Could not get a response to POST \S+\/user\/terms: .*If it was sent, it may have been applied: a POST is not retried by default, so check whether it took effect before sending it again\.$/);
    expect(service.count('POST', '/user/terms')).toBe(1);
  });

  it('retries a PUT with its body when the call passes retries', async () => {
    service.script('PUT', LIMIT_PATH, { status: 503 }, { dropConnection: true });
    await expect(client.setDailyLimit({ amount: 5_000 }, { retries: 2 })).resolves.toMatchObject({ amount: 5_000, syncStatus: 'pending' });
    const puts = service.requests.filter((request) => request.method === 'PUT');
    expect(puts).toHaveLength(3);
    expect(puts.map((request) => JSON.parse(request.body))).toEqual([
      { amount: 5_000, currency: 'USD' },
      { amount: 5_000, currency: 'USD' },
      { amount: 5_000, currency: 'USD' },
    ]);
  });
});

describe('retries idempotent requests after connection errors', () => {
  it('retries a GET whose connection was dropped', async () => {
    service.script('GET', LIMIT_PATH, { dropConnection: true }, { dropConnection: true });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(retries.map((event) => event.reason)).toEqual(['connection', 'connection']);
  });
});

describe('honours Retry-After', () => {
  it('waits the delta-seconds of Retry-After before retrying', async () => {
    service.script('GET', LIMIT_PATH, { status: 429, headers: { 'retry-after': '1' }, body: { message: 'slow down' } });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(retries).toEqual([expect.objectContaining({ reason: 'status', status: 429, delayMs: 1000, fromRetryAfter: true })]);
  });

  it('waits until the HTTP-date of Retry-After before retrying', async () => {
    const inOneSecond = new Date(Date.now() + 1_000).toUTCString();
    service.script('GET', LIMIT_PATH, { status: 503, headers: { 'retry-after': inOneSecond } });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(retries).toHaveLength(1);
    expect(retries[0]!.fromRetryAfter).toBe(true);
    // HTTP-dates have one-second resolution.
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(0);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(1_000);
  });

  it('does not wait out a Retry-After longer than maxRetryAfterMs and reports it', async () => {
    service.script('GET', LIMIT_PATH, { status: 429, headers: { 'retry-after': '3600' } });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
    expect(retries).toHaveLength(0);
  });
});

describe('backs off exponentially with jitter', () => {
  const policy = resolveRetryPolicy({ baseDelayMs: 500, maxDelayMs: 8_000 });

  it('doubles the delay on each retry, between half and all of it', () => {
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, policy, () => 0))).toEqual([250, 500, 1000, 2000]);
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, policy, () => 1))).toEqual([500, 1000, 2000, 4000]);
  });

  it('caps the delay at maxDelayMs', () => {
    expect(backoffDelay(10, policy, () => 1)).toBe(8_000);
  });

  it('reads Retry-After as seconds or an HTTP-date and ignores anything else', () => {
    const now = Date.parse('Sat, 21 Nov 2026 12:00:00 GMT');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('2.5', now)).toBe(2_500);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
