// waitForLimitSync and waitForOnboardingStatus poll through a transient outage (5xx, 408, 429, a
// dropped connection, a request's own timeout) until their timeoutMs, instead of ending with the
// first poll whose retries are used up; any other error still ends them at once. Real HTTP on
// loopback: the scripted partner service of test/support, no mocked fetch.
import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  createPartnerClient,
  NotFoundError,
  RateLimitError,
  ServerError,
  signerFromViemAccount,
  TimeoutError,
  type PartnerClient,
  type PartnerClientOptions,
} from '../src/index.js';
import { waitForOnboardingStatus } from '../src/onboarding.js';
import { LIMIT_PATH, startPartnerService, type PartnerService, type PartnerServiceOptions } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const ONBOARDING_PATH = '/user/onboarding';
const UNAVAILABLE = { status: 503, body: { code: 'ServiceUnavailable', message: 'Down for maintenance' } };

let service: PartnerService | undefined;
afterEach(() => service?.close());

/** A client signed in on the newer generation, each poll one attempt unless `clientOptions` says otherwise. */
async function signedIn(serviceOptions: PartnerServiceOptions = {}, clientOptions: Partial<PartnerClientOptions> = {}): Promise<PartnerClient> {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address], ...serviceOptions });
  const client = createPartnerClient({ baseUrl: service.url, retries: 0, ...clientOptions });
  await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
  return client;
}

const polls = (path: string) => service!.requests.filter((request) => request.method === 'GET' && request.path === path);
const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

describe('waitForLimitSync polls through a transient outage until its timeoutMs', () => {
  it('rides out a run of 503s longer than one poll\'s retries and returns the synced limit', async () => {
    // Each poll is two attempts (one retry); six 503s in a row use up the retries of three polls.
    const client = await signedIn({ pendingPollsAfterUpdate: 1 }, { retries: { count: 1, baseDelayMs: 1 } });
    const { amount } = await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, ...Array(6).fill(UNAVAILABLE));
    await expect(client.waitForLimitSync({ amount, timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toEqual({ amount: 75_000, currency: 'USD', syncStatus: 'synced' });
    // The six 503s, then pending, then synced.
    expect(polls(LIMIT_PATH)).toHaveLength(8);
  });

  it('polls through a poll that timed out (request_timeout, the request\'s own timeout)', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 0 }, { timeoutMs: 100 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, { hang: true });
    await expect(client.waitForLimitSync({ amount: 75_000, timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toMatchObject({ amount: 75_000, syncStatus: 'synced' });
    expect(polls(LIMIT_PATH)).toHaveLength(2);
  });

  it('polls through a 408 (the service timed the request out), which the transport retries too', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 0 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, { status: 408, body: { code: 'RequestTimeout', message: 'Request timed out' } });
    await expect(client.waitForLimitSync({ amount: 75_000, timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toMatchObject({ amount: 75_000, syncStatus: 'synced' });
    expect(polls(LIMIT_PATH)).toHaveLength(2);
  });

  it('a 404 during the outage still ends the wait at once with that NotFoundError', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, UNAVAILABLE, UNAVAILABLE, { status: 404, body: { code: 'NotFound', message: 'No such route' } });
    const error = await caught(client.waitForLimitSync({ amount: 75_000, timeoutMs: 60_000, pollIntervalMs: 10 }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'NotFound' });
    expect(polls(LIMIT_PATH)).toHaveLength(3);
  });

  it('at timeoutMs with the service still failing: limit_sync_timeout, the last ServerError as cause, named in the message', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, ...Array(200).fill(UNAVAILABLE));
    const started = Date.now();
    const error = await caught(client.waitForLimitSync({ amount: 75_000, timeoutMs: 300, pollIntervalMs: 20 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'limit_sync_timeout', timeoutMs: 300 });
    const { cause, message } = error as TimeoutError;
    expect(cause).toBeInstanceOf(ServerError);
    expect(cause).toMatchObject({ status: 503, code: 'ServiceUnavailable' });
    expect(message).toContain('could not be read (the last failed poll got HTTP 503 ServiceUnavailable) after 300 ms');
    expect(message).toMatch(/^Your change to 75000 cents was accepted \(setDailyLimit answered\)/);
    // Polled on through the outage: more than the first poll.
    expect(polls(LIMIT_PATH).length).toBeGreaterThan(2);
  });

  it("the caller's signal still ends it at once with AbortError while the service fails", async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, ...Array(200).fill(UNAVAILABLE));
    const controller = new AbortController();
    let settled = false;
    const pending = caught(client.waitForLimitSync({ timeoutMs: 60_000, pollIntervalMs: 10, signal: controller.signal })).finally(() => {
      settled = true;
    });
    while (!settled && polls(LIMIT_PATH).length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ code: 'aborted' });
  });

  it('the deadline stopping a poll in flight after a failed one: the cause is that failure', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    service!.script('GET', LIMIT_PATH, UNAVAILABLE, { hang: true });
    const error = await caught(client.waitForLimitSync({ timeoutMs: 300, pollIntervalMs: 20 }));
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'limit_sync_timeout', timeoutMs: 300 });
    expect((error as Error).message).toBe(
      'The daily limit could not be read (the last failed poll got HTTP 503 ServiceUnavailable) after 300 ms. The change is applied downstream asynchronously: wait longer (timeoutMs) or check again later.',
    );
    expect((error as Error).cause).toBeInstanceOf(ServerError);
    expect(polls(LIMIT_PATH)).toHaveLength(2);
  });
});

describe("waitForLimitSync's timeout says the change was accepted when it was given amount", () => {
  it('with amount: accepted (setDailyLimit answered) and still pending; without: no such claim', async () => {
    const client = await signedIn({ pendingPollsAfterUpdate: 1_000 });
    const { amount } = await client.setDailyLimit({ amount: 75_000 });
    const withAmount = await caught(client.waitForLimitSync({ amount, timeoutMs: 200, pollIntervalMs: 10 }));
    expect(withAmount).toMatchObject({ name: 'TimeoutError', code: 'limit_sync_timeout', timeoutMs: 200 });
    expect((withAmount as Error).message).toBe(
      'Your change to 75000 cents was accepted (setDailyLimit answered) and is applied downstream asynchronously, but the daily limit was still pending after 200 ms: wait longer (timeoutMs) or check again later with getDailyLimit().',
    );
    expect((withAmount as Error).cause).toBeUndefined();
    const withoutAmount = await caught(client.waitForLimitSync({ timeoutMs: 200, pollIntervalMs: 10 }));
    expect(withoutAmount).toMatchObject({ name: 'TimeoutError', code: 'limit_sync_timeout' });
    expect((withoutAmount as Error).message).toBe('The daily limit was still pending after 200 ms. The change is applied downstream asynchronously: wait longer (timeoutMs) or check again later.');
    expect((withoutAmount as Error).message).not.toContain('accepted');
  });
});

describe('waitForOnboardingStatus polls through a transient outage until its timeoutMs', () => {
  it('rides out dropped connections (ConnectionError) and returns the status', async () => {
    const client = await signedIn();
    service!.script('GET', ONBOARDING_PATH, { dropConnection: true }, { dropConnection: true }, { dropConnection: true }, { status: 200, body: { status: 'action_complete_sof' } });
    await expect(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toEqual({ status: 'action_complete_sof' });
    expect(polls(ONBOARDING_PATH)).toHaveLength(4);
  });

  it("a 429's Retry-After is honoured: the next poll comes no sooner", async () => {
    const client = await signedIn();
    service!.script('GET', ONBOARDING_PATH, { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Slow down' } }, { status: 200, body: { status: 'action_complete_sof' } });
    await expect(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toEqual({ status: 'action_complete_sof' });
    const [limited, next] = polls(ONBOARDING_PATH);
    // The service's own clock: the second poll arrived at least Retry-After (1 s) after the 429's
    // request, not the 10 ms pollIntervalMs (a few ms of slack for timer rounding).
    expect(next!.at - limited!.at).toBeGreaterThanOrEqual(990);
  });

  it('a Retry-After beyond the deadline: waits only until timeoutMs, polls one last time, then onboarding_wait_timeout with the RateLimitError as cause', async () => {
    const client = await signedIn();
    const limited = { status: 429, headers: { 'retry-after': '60' }, body: { message: 'Slow down' } };
    service!.script('GET', ONBOARDING_PATH, limited, limited);
    const started = Date.now();
    const error = await caught(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 400, pollIntervalMs: 10 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'onboarding_wait_timeout', timeoutMs: 400, message: expect.stringContaining('could not be read (the last failed poll got HTTP 429 rate_limited) within 400 ms') });
    expect((error as Error).cause).toBeInstanceOf(RateLimitError);
    expect((error as Error).cause).toMatchObject({ retryAfterMs: 60_000 });
    // The first poll, then the last one at the deadline: not the 60 s later the service asked.
    expect(polls(ONBOARDING_PATH)).toHaveLength(2);
  });

  it('a 401 during the outage still ends the wait at once with that AuthenticationError', async () => {
    const client = await signedIn();
    service!.script('GET', ONBOARDING_PATH, UNAVAILABLE, { status: 401, body: { code: 'Unauthorized', message: 'Token expired' } });
    const error = await caught(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 60_000, pollIntervalMs: 10 }));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'Unauthorized' });
    expect(polls(ONBOARDING_PATH)).toHaveLength(2);
  });

  it('at timeoutMs with the service still failing: onboarding_wait_timeout, the last ServerError as cause, named in the message', async () => {
    const client = await signedIn();
    service!.script('GET', ONBOARDING_PATH, ...Array(200).fill(UNAVAILABLE));
    const error = await caught(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 300, pollIntervalMs: 20 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'onboarding_wait_timeout', timeoutMs: 300 });
    expect((error as Error).cause).toBeInstanceOf(ServerError);
    expect((error as Error).cause).toMatchObject({ status: 503, code: 'ServiceUnavailable' });
    expect((error as Error).message).toBe(
      'The onboarding status could not be read (the last failed poll got HTTP 503 ServiceUnavailable) within 300 ms. Wait longer (timeoutMs), or check that the service is reachable.',
    );
  });

  it('a ConnectionError at the deadline is the cause too', async () => {
    const client = await signedIn();
    service!.script('GET', ONBOARDING_PATH, ...Array(200).fill({ dropConnection: true }));
    const error = await caught(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 300, pollIntervalMs: 20 }));
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'onboarding_wait_timeout', message: expect.stringContaining('could not be read (the last failed poll got no response: connection_failed) within 300 ms') });
    expect((error as Error).cause).toBeInstanceOf(ConnectionError);
  });
});
