import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  ConflictError,
  createPartnerClient,
  InvalidArgumentError,
  NotFoundError,
  signerFromViemAccount,
  TimeoutError,
  TokenManager,
  ValidationError,
  type PartnerClient,
  type PartnerClientOptions,
} from '../src/index.js';
import { startPartnerService, type PartnerService, type PartnerServiceOptions } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE, unregisteredAccount } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
let service: PartnerService;
afterEach(() => service?.close());

/** A client signed in with a registered wallet; on the newer generation (the limit's) unless `serviceOptions` says otherwise. */
async function signedInClient(serviceOptions: PartnerServiceOptions = {}, clientOptions: Partial<PartnerClientOptions> = {}): Promise<PartnerClient> {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address], ...serviceOptions });
  const client = createPartnerClient({ baseUrl: service.url, ...clientOptions });
  await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
  return client;
}

describe('reads the daily limit in cents with its sync status', () => {
  it('returns the default limit of 1,000,000 cents, synced', async () => {
    const client = await signedInClient();
    await expect(client.getDailyLimit()).resolves.toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
  });

  it('fills currency "USD" when the answer leaves it out (the spec: clients assume USD), and keeps one that is given', async () => {
    const client = await signedInClient();
    service.script('GET', LIMIT_PATH, { status: 200, body: { amount: 250_000, syncStatus: 'synced' } });
    await expect(client.getDailyLimit()).resolves.toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'synced' });
    service.script('PUT', LIMIT_PATH, { status: 200, body: { amount: 50_000, syncStatus: 'pending' } });
    await expect(client.setDailyLimit({ amount: 50_000 })).resolves.toEqual({ amount: 50_000, currency: 'USD', syncStatus: 'pending' });
    service.script('GET', LIMIT_PATH, { status: 200, body: { amount: 50_000, syncStatus: 'synced' } });
    await expect(client.waitForLimitSync()).resolves.toEqual({ amount: 50_000, currency: 'USD', syncStatus: 'synced' });
    service.script('GET', LIMIT_PATH, { status: 200, body: { amount: 50_000, currency: 'EUR', syncStatus: 'synced' } });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ currency: 'EUR' });
  });

  it('rejects a 200 answer that is not an AccountLimit with UnexpectedResponseError', async () => {
    const client = await signedInClient();
    service.script('GET', LIMIT_PATH, { status: 200, body: { limit: 5 } });
    await expect(client.getDailyLimit()).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_limit_body' });
  });
});

describe('a user without an account yet: the 409 is a ConflictError that says to finish onboarding up to createAccount()', () => {
  it('GET and PUT answered 409 OnboardingStepNotReached reject with ConflictError, the code and what to do; the service\'s words are serviceMessage', async () => {
    const client = await signedInClient();
    const refusal = { status: 409, body: { code: 'OnboardingStepNotReached', message: 'The daily limit is set on the account, which this user has not created yet' } };
    service.script('GET', LIMIT_PATH, refusal);
    service.script('PUT', LIMIT_PATH, refusal);
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 50_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, code: 'OnboardingStepNotReached' });
      expect((error as Error).message).toMatch(
        /^The request conflicts with the current state \(HTTP 409 OnboardingStepNotReached\): The limit is on the account, not created yet: finish onboarding up to createAccount\(\) \[request id req-\d+\]$/,
      );
      expect(error).toMatchObject({ serviceMessage: 'The daily limit is set on the account, which this user has not created yet' });
    }
  });

  it('a 409 with another code is still a ConflictError with its status and code, and keeps the service\'s words without the account advice', async () => {
    const client = await signedInClient();
    const refusal = { status: 409, body: { code: 'Something', message: 'Another change of the limit is in progress' } };
    service.script('GET', LIMIT_PATH, refusal);
    service.script('PUT', LIMIT_PATH, refusal);
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 50_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, code: 'Something' });
      expect((error as Error).message).toMatch(
        /^The request conflicts with the current state \(HTTP 409 Something\): Another change of the limit is in progress\. Read the current state \(for onboarding: the onboarding status\) and act on it \[request id req-\d+\]$/,
      );
      expect((error as Error).message).not.toMatch(/createAccount|not created yet/);
    }
  });
});

describe('a wallet that has not registered: it signs in, and the limit answers 401 UserNotRegistered, an AuthenticationError that says to register', () => {
  // Service facts and the sandbox: any wallet that signs gets a token (hasSignedUp: false until
  // it registers); the routes that need a user refuse it with 401 UserNotRegistered.
  it('getDailyLimit and setDailyLimit reject with the advice (the service\'s words are serviceMessage); the token is kept, no new sign-in, nothing is set', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    let reauthentications = 0;
    const client = createPartnerClient({
      baseUrl: service.url,
      tokenManager: new TokenManager({ reauthenticate: () => (reauthentications++, client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE })) }),
    });
    const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.hasSignedUp).toBe(false);
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 50_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: 'UserNotRegistered' });
      expect((error as Error).message).toMatch(
        /^Authentication failed \(HTTP 401 UserNotRegistered\): This wallet has not registered a user yet \(hasSignedUp: false\): register it with requestEmailVerification\(\), then registerUser\(\) with the one-time password it emails \(POST \/user\), then finish onboarding up to createAccount\(\) \[request id req-\d+\]$/,
      );
      expect((error as AuthenticationError).serviceMessage).toBe('This wallet has no user yet (token claim hasSignedUp: false); register first: POST /email/verification, then POST /user with the email and its one-time password.');
    }
    // The token still serves registration: kept, and no wallet prompt for a sign-in that would bring the same answer.
    expect(reauthentications).toBe(0);
    expect(client.tokenManager.hasToken).toBe(true);
    expect(service.requests.filter((request) => request.path === LIMIT_PATH).map((request) => [request.method, request.authorization])).toEqual([
      ['GET', `Bearer ${token}`],
      ['PUT', `Bearer ${token}`],
    ]);
    expect(service.limit).toMatchObject({ amount: 1_000_000, syncStatus: 'synced' });
  });
});

describe('an older-generation deployment: the 404 is a NotFoundError that says the limit is a newer-generation operation, set onchain on the older one', () => {
  // Service facts: the limit endpoint belongs to the newer generation; reference 9: the older
  // generation's user sets the onchain daily limit with an onchain signature.
  it('getDailyLimit, setDailyLimit and waitForLimitSync reject with NotFoundError and the advice; the service\'s words are serviceMessage', async () => {
    // The test service answers as the sandbox does on the older generation (404 NotFound, before the token is read).
    const client = await signedInClient({ generation: 'older' });
    const calls: [() => Promise<unknown>, string][] = [
      [() => client.getDailyLimit(), 'GET /user-api/user/account/limit (getAccountLimit)'],
      [() => client.setDailyLimit({ amount: 50_000 }), 'PUT /user-api/user/account/limit (setAccountLimit)'],
      [() => client.waitForLimitSync({ timeoutMs: 1_000 }), 'GET /user-api/user/account/limit (getAccountLimit)'],
    ];
    for (const [call, operation] of calls) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NotFound' });
      expect((error as Error).message).toBe(
        `Not found (HTTP 404 NotFound): The daily limit is a newer-generation operation; on the older generation the user sets it onchain (no limit endpoint). Check baseUrl: it must be a newer-generation deployment (sandbox: generation 'newer') [request id ${(error as NotFoundError).requestId}]`,
      );
      expect((error as NotFoundError).serviceMessage).toBe(
        `${operation} exists only on the newer generation; this sandbox runs the older one (start it with --generation newer): on the older generation the user sets the daily limit onchain, with an onchain signature.`,
      );
      expect((error as NotFoundError).requestId).toMatch(/^req-\d+$/);
    }
    // A 404 is not retried, and keeps the token.
    expect(service.requests.filter((request) => request.path === LIMIT_PATH)).toHaveLength(3);
    expect(client.tokenManager.hasToken).toBe(true);
  });

  it('a 404 without a body still names the generation', async () => {
    const client = await signedInClient({ generation: 'older' });
    service.script('GET', LIMIT_PATH, { status: 404, body: '' });
    await expect(client.getDailyLimit()).rejects.toThrow(/The daily limit is a newer-generation operation; on the older generation the user sets it onchain/);
  });

  it('a 404 with another code is still a NotFoundError with its status and code, and keeps the service\'s words without the generation advice', async () => {
    const client = await signedInClient();
    const refusal = { status: 404, body: { code: 'AccountClosed', message: 'The account of this user was closed' } };
    service.script('GET', LIMIT_PATH, refusal);
    service.script('PUT', LIMIT_PATH, refusal);
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 50_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'AccountClosed' });
      expect((error as Error).message).toMatch(/^Not found \(HTTP 404 AccountClosed\): The account of this user was closed\. Check baseUrl \(or webhooksUrl\) and the path \[request id req-\d+\]$/);
      expect((error as Error).message).not.toMatch(/newer-generation|onchain/);
    }
  });
});

describe('sets the daily limit and answers pending at once', () => {
  it('sends {amount, currency: "USD"} and returns the new limit with syncStatus pending', async () => {
    const client = await signedInClient();
    await expect(client.setDailyLimit({ amount: 50_000 })).resolves.toEqual({ amount: 50_000, currency: 'USD', syncStatus: 'pending' });
    const put = service.requests.find((request) => request.method === 'PUT')!;
    expect(JSON.parse(put.body)).toEqual({ amount: 50_000, currency: 'USD' });
  });

  it('accepts the bounds 1 and 1,000,000', async () => {
    const client = await signedInClient();
    await expect(client.setDailyLimit({ amount: 1 })).resolves.toMatchObject({ amount: 1 });
    await expect(client.setDailyLimit({ amount: 1_000_000, currency: 'USD' })).resolves.toMatchObject({ amount: 1_000_000 });
  });
});

describe('checks the amount and currency before any request', () => {
  it.each([
    ['zero', { amount: 0 }, 'amount_out_of_range'],
    ['a negative amount', { amount: -100 }, 'amount_out_of_range'],
    ['more than 1,000,000 cents', { amount: 1_000_001 }, 'amount_out_of_range'],
    ['a fraction of a cent', { amount: 12.5 }, 'amount_not_integer'],
    ['a string', { amount: '5000' }, 'amount_not_integer'],
    ['NaN', { amount: Number.NaN }, 'amount_not_integer'],
    ['Infinity', { amount: Number.POSITIVE_INFINITY }, 'amount_not_integer'],
    ['a missing amount', {}, 'amount_not_integer'],
    ['EUR', { amount: 5_000, currency: 'EUR' }, 'currency_not_supported'],
    ['lower-case usd', { amount: 5_000, currency: 'usd' }, 'currency_not_supported'],
    // Only a currency left out (undefined) means USD.
    ['a null currency', { amount: 5_000, currency: null }, 'currency_not_supported'],
    ['a bare number instead of { amount }', 50_000, 'amount_not_integer'],
    ['a Number object', { amount: new Number(5_000) }, 'amount_not_integer'],
  ])('rejects %s with InvalidArgumentError and sends nothing', async (_case, params, code) => {
    const client = await signedInClient();
    const requestsBefore = service.requests.length;
    const error = await client.setDailyLimit(params as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).code).toBe(code);
    expect(service.requests.length).toBe(requestsBefore);
    expect(service.count('PUT', LIMIT_PATH)).toBe(0);
  });

  it('explains the range and how to set another agreed maximum, higher or lower', async () => {
    const client = await signedInClient();
    const error = await client.setDailyLimit({ amount: 2_000_000 }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/at most 1000000 cents \(10,000 USD\).*maxDailyLimitCents/);
    expect((error as Error).message).toContain('when the platform agreed another maximum with you, higher or lower, set maxDailyLimitCents to it');
    expect((error as Error).message).not.toContain('A higher maximum must be agreed');
    // A maximum agreed lower than the default: the same advice, with that maximum.
    const lower = createPartnerClient({ baseUrl: service.url, maxDailyLimitCents: 500_000 });
    const refused = await lower.setDailyLimit({ amount: 600_000 }).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: 'amount_out_of_range', message: expect.stringContaining('at most 500000 cents (5,000 USD), got 600000') });
    expect((refused as Error).message).toContain('higher or lower');
    // Zero is refused for being zero: no word about the maximum.
    expect(((await client.setDailyLimit({ amount: 0 }).catch((caught: unknown) => caught)) as Error).message).not.toContain('maxDailyLimitCents');
  });

  it('says what it got: a bare number is told to be passed as { amount }, a Number object as what it is, a null currency as null', async () => {
    const client = await signedInClient();
    const message = async (params: unknown) => ((await client.setDailyLimit(params as never).catch((caught: unknown) => caught)) as Error).message;
    expect(await message(50_000)).toBe('setDailyLimit takes an object { amount } with the amount in cents (500 USD is { amount: 50000 }), got 50000: pass { amount: 50000 }.');
    expect(await message(undefined)).toContain('setDailyLimit takes an object { amount }');
    expect(await message({ amount: new Number(5) })).toContain('got a Number object (new Number(5)): pass the number itself');
    expect(await message({ amount: 10n })).toContain('got 10n, a bigint: pass a number');
    expect(await message({ amount: 100, currency: null })).toBe('currency must be "USD", the only currency the daily limit accepts (or left out), got null.');
    await expect(client.setDailyLimit({ amount: 100, currency: undefined })).resolves.toMatchObject({ amount: 100, currency: 'USD' });
  });

  it('allows a higher partner-agreed maximum with maxDailyLimitCents, leaving the final word to the service', async () => {
    const client = await signedInClient({}, { maxDailyLimitCents: 2_000_000 });
    // This test service keeps the default maximum, so it answers 422.
    await expect(client.setDailyLimit({ amount: 1_500_000 })).rejects.toBeInstanceOf(ValidationError);
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
    await expect(client.setDailyLimit({ amount: 2_000_001 })).rejects.toMatchObject({ code: 'amount_out_of_range' });
    expect(service.count('PUT', LIMIT_PATH)).toBe(1);
  });
});

describe('waits for the limit to sync by polling with backoff', () => {
  it('polls until syncStatus is synced and returns that limit', async () => {
    const client = await signedInClient({ pendingPollsAfterUpdate: 3 });
    await client.setDailyLimit({ amount: 75_000 });
    const limit = await client.waitForLimitSync({ pollIntervalMs: 5 });
    expect(limit).toEqual({ amount: 75_000, currency: 'USD', syncStatus: 'synced' });
    expect(service.count('GET', LIMIT_PATH)).toBe(4);
  });

  it('returns at once when the limit is already synced', async () => {
    const client = await signedInClient();
    await expect(client.waitForLimitSync()).resolves.toMatchObject({ syncStatus: 'synced' });
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('throws TimeoutError code limit_sync_timeout when it stays pending', async () => {
    const client = await signedInClient({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    const error = await client.waitForLimitSync({ timeoutMs: 200, pollIntervalMs: 10 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'limit_sync_timeout', timeoutMs: 200 });
    expect(service.count('GET', LIMIT_PATH)).toBeGreaterThanOrEqual(1);
  });

  it('stops with AbortError when the signal aborts', async () => {
    const client = await signedInClient({ pendingPollsAfterUpdate: 1_000 });
    await client.setDailyLimit({ amount: 75_000 });
    const controller = new AbortController();
    const pending = client.waitForLimitSync({ signal: controller.signal, pollIntervalMs: 10_000 }).catch((caught: unknown) => caught);
    while (service.count('GET', LIMIT_PATH) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(AbortError);
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('a timeout given as a number (waitForLimitSync(25000)) is refused with the object to pass, { timeoutMs: 25000 }, and amount', async () => {
    const client = await signedInClient();
    const error = await client.waitForLimitSync(25_000 as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument: 'options', code: 'invalid_option' });
    expect((error as Error).message).toBe(
      "waitForLimitSync's options must be an object such as { timeoutMs, signal }, or left out: to wait up to 25000 ms, pass { timeoutMs: 25000 }, and add amount (what setDailyLimit answered) to wait for your own change: { amount, timeoutMs: 25000 }; got 25000.",
    );
  });

  it('rejects nonsense options', async () => {
    const client = await signedInClient();
    await expect(client.waitForLimitSync({ timeoutMs: 0 })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'timeoutMs' });
    await expect(client.waitForLimitSync({ pollIntervalMs: -1 })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'pollIntervalMs' });
  });
});
