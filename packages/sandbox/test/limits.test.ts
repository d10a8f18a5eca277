import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { callOperation } from './support/sandbox-api.js';
import { newAccount, tokenFor } from './support/sign-in.js';

const owner = newAccount();
const other = newAccount();
let sandbox: Sandbox;
let token: string;

/** A newer-generation user seed with its account (a smart wallet): the limit is the account's. */
const withAccount = (address: string) => ({ signInWallets: [address], smartWallets: [{ address: newAccount().address, chainId: '100' }] });

// The limit operations are the newer generation's (x-generation, from service facts).
beforeAll(async () => {
  sandbox = await startSandbox({ generation: 'newer', users: [withAccount(owner.address), withAccount(other.address)], limitSyncDelayMs: 300 });
  token = await tokenFor(sandbox.baseUrl, owner);
});
afterAll(() => sandbox.close());

const setLimit = (body: unknown, bearer = token) => callOperation(sandbox.baseUrl, 'setAccountLimit', { token: bearer, body });
const getLimit = (bearer = token) => callOperation(sandbox.baseUrl, 'getAccountLimit', { token: bearer });

async function waitForSynced(bearer: string) {
  for (;;) {
    const { body } = await getLimit(bearer);
    if (body.syncStatus === 'synced') return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('reads the default daily limit of 1,000,000 cents', () => {
  it('answers {amount: 1000000, currency: USD, syncStatus: synced} for an account never changed', async () => {
    const other = await tokenFor(sandbox.baseUrl, newAccountRegistered());
    expect((await getLimit(other)).body).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
  });
});

function newAccountRegistered() {
  const account = newAccount();
  sandbox.users.create(withAccount(account.address));
  return account;
}

describe('sets a limit that is pending at once and synced after the configured delay', () => {
  it('PUT answers the new limit with syncStatus pending; GET shows pending, then synced', async () => {
    const put = await setLimit({ amount: 250_000, currency: 'USD' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'pending' });
    expect((await getLimit()).body.syncStatus).toBe('pending');
    expect(await waitForSynced(token)).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'synced' });
  });

  it('accepts the bounds 1 and 1,000,000', async () => {
    expect((await setLimit({ amount: 1, currency: 'USD' })).status).toBe(200);
    expect((await setLimit({ amount: 1_000_000, currency: 'USD' })).status).toBe(200);
  });

  it('keeps each account its own limit', async () => {
    const otherToken = await tokenFor(sandbox.baseUrl, other);
    await setLimit({ amount: 42, currency: 'USD' }, otherToken);
    await setLimit({ amount: 77, currency: 'USD' });
    expect((await getLimit(otherToken)).body.amount).toBe(42);
    expect((await getLimit()).body.amount).toBe(77);
  });
});

describe('answers 422 for an out-of-range amount or a currency other than USD', () => {
  it.each([
    ['amount 0', { amount: 0, currency: 'USD' }, /amount must be > 0/],
    ['a negative amount', { amount: -5, currency: 'USD' }, /amount/],
    ['amount above 1,000,000', { amount: 1_000_001, currency: 'USD' }, /amount must be <= 1000000/],
    ['a fractional amount', { amount: 10.5, currency: 'USD' }, /amount must be integer/],
    ['an amount as a string', { amount: '100', currency: 'USD' }, /amount must be integer/],
    ['currency EUR', { amount: 100, currency: 'EUR' }, /currency must be/],
    ['a missing currency', { amount: 100 }, /currency/],
    ['a missing amount', { currency: 'USD' }, /amount/],
  ])('%s', async (_name, body, pattern) => {
    const before = (await getLimit()).body;
    const response = await setLimit(body);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('ValidationError');
    expect(response.body.message).toMatch(pattern);
    expect(response.body.message).toMatch(/from 1 to 1000000/);
    expect((await getLimit()).body.amount).toBe(before.amount);
  });
});

describe('answers 400 for a body that is not JSON', () => {
  it('refuses malformed and empty bodies with InvalidJson', async () => {
    for (const rawBody of ['{"amount": 100,', '']) {
      const response = await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('InvalidJson');
    }
  });
});

describe('answers 401 to limit requests without a valid token', () => {
  it('refuses GET and PUT without a token and with a malformed Authorization header', async () => {
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit')).status).toBe(401);
    const put = await callOperation(sandbox.baseUrl, 'setAccountLimit', { body: { amount: 5, currency: 'USD' } });
    expect(put.status).toBe(401);
    const malformed = await callOperation(sandbox.baseUrl, 'getAccountLimit', { headers: { authorization: `Token ${token}` } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.code).toBe('MalformedAuthorization');
  });
});

describe('answers the limit only once the account exists (newer generation: 409 before createAccount)', () => {
  const limitOf = (newer: Sandbox, bearer: string) => callOperation(newer.baseUrl, 'getAccountLimit', { token: bearer });
  const putLimit = (newer: Sandbox, bearer: string, body: unknown) => callOperation(newer.baseUrl, 'setAccountLimit', { token: bearer, body });

  async function registered(newer: Sandbox) {
    const account = newAccount();
    const bearer = await tokenFor(newer.baseUrl, account);
    await callOperation(newer.baseUrl, 'requestEmailVerification', { token: bearer, body: { email: `${account.address}@example.com` } });
    const otp = newer.oneTimePasswords().at(-1)!.code;
    const user = (await callOperation(newer.baseUrl, 'registerUser', { token: bearer, body: { email: `${account.address}@example.com`, otp } })).body;
    return { bearer, userId: user.id as string };
  }

  it('a registered user without an account: GET and PUT answer 409 OnboardingStepNotReached naming the step; the refused PUT stores nothing and emits nothing; after createAccount the default limit is there', async () => {
    const newer = await startSandbox({ generation: 'newer', users: [], limitSyncDelayMs: 50 });
    try {
      newer.addWebhookEndpoint('http://127.0.0.1:9/unreachable');
      const { bearer, userId } = await registered(newer);
      const get = await limitOf(newer, bearer);
      expect(get).toMatchObject({ status: 409, body: { code: 'OnboardingStepNotReached' } });
      expect(get.body.message).toBe('The daily limit is set on the account, which this user has not created yet; the user is at action_accept_tos: accept the terms first (POST /user/terms), then get KYC approved (sandbox: PUT /__sandbox/users/:id/kyc-status), then answer the source-of-funds questionnaire (POST /source-of-funds), then create the account (POST /account).');
      const deliveriesBefore = newer.deliveries().length;
      const put = await putLimit(newer, bearer, { amount: 250_000, currency: 'USD' });
      expect(put).toMatchObject({ status: 409, body: { code: 'OnboardingStepNotReached' } });
      // A bad body is still judged first, as on the onboarding operations.
      expect((await putLimit(newer, bearer, { amount: 0, currency: 'USD' })).status).toBe(422);
      expect(newer.deliveries()).toHaveLength(deliveriesBefore);

      await callOperation(newer.baseUrl, 'acceptTerms', { token: bearer, body: { accepted: true } });
      newer.users.setKycStatus(userId, 'approved');
      await callOperation(newer.baseUrl, 'submitSourceOfFunds', { token: bearer, body: { answers: [{ question: 'Source?', answer: 'Employment' }] } });
      const atAccount = await limitOf(newer, bearer);
      expect(atAccount.body.message).toBe('The daily limit is set on the account, which this user has not created yet; the user is at action_create_account: create the account first (POST /account).');
      const deliveriesAtAccount = newer.deliveries().length;
      expect((await putLimit(newer, bearer, { amount: 250_000, currency: 'USD' })).status).toBe(409);
      expect(newer.deliveries()).toHaveLength(deliveriesAtAccount);

      expect((await callOperation(newer.baseUrl, 'createAccount', { token: bearer })).status).toBe(200);
      // Nothing of the refused PUTs was kept: the account starts at the default.
      expect((await limitOf(newer, bearer)).body).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
      expect((await putLimit(newer, bearer, { amount: 250_000, currency: 'USD' })).body).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'pending' });
      expect(newer.deliveries()).toHaveLength(deliveriesAtAccount);
    } finally {
      await newer.close();
    }
  });

  it('a migrated user waiting for its carry-over is told that KYC and the source of funds may carry over', async () => {
    const owner = newAccount();
    const newer = await startSandbox({ generation: 'newer', users: [], olderGenerationUsers: [{ owner: owner.address }] });
    try {
      const bearer = await tokenFor(newer.baseUrl, owner);
      const email = `${owner.address}@example.com`;
      await callOperation(newer.baseUrl, 'requestEmailVerification', { token: bearer, body: { email } });
      await callOperation(newer.baseUrl, 'registerUser', { token: bearer, body: { email, otp: newer.oneTimePasswords().at(-1)!.code } });
      const refused = await limitOf(newer, bearer);
      expect(refused.body.message).toBe(
        'The daily limit is set on the account, which this user has not created yet; the user is at action_accept_tos: accept the terms first (POST /user/terms), then wait while the verification is carried over (poll GET /user/onboarding), then get KYC approved (sandbox: PUT /__sandbox/users/:id/kyc-status) unless it is carried over, then answer the source-of-funds questionnaire (POST /source-of-funds) unless it is carried over, then create the account (POST /account).',
      );
    } finally {
      await newer.close();
    }
  });

  it('a wallet without a user still gets the 401 UserNotRegistered of reference 5 rule 1, on GET and PUT', async () => {
    const newer = await startSandbox({ generation: 'newer', users: [] });
    try {
      const bearer = await tokenFor(newer.baseUrl, newAccount());
      expect(await limitOf(newer, bearer)).toMatchObject({ status: 401, body: { code: 'UserNotRegistered' } });
      expect(await putLimit(newer, bearer, { amount: 250_000, currency: 'USD' })).toMatchObject({ status: 401, body: { code: 'UserNotRegistered' } });
    } finally {
      await newer.close();
    }
  });

  it('a seeded newer user has an account when it is seeded with a smart wallet', async () => {
    const [seededWithAccount, withoutAccount] = [newAccount(), newAccount()];
    const newer = await startSandbox({ generation: 'newer', users: [withAccount(seededWithAccount.address), { signInWallets: [withoutAccount.address] }] });
    try {
      expect((await limitOf(newer, await tokenFor(newer.baseUrl, seededWithAccount))).status).toBe(200);
      const refused = await limitOf(newer, await tokenFor(newer.baseUrl, withoutAccount));
      expect(refused).toMatchObject({ status: 409, body: { code: 'OnboardingStepNotReached' } });
      // The next steps in order: KYC, then the source of funds this user has not answered, then the account.
      expect(refused.body.message).toBe(
        'The daily limit is set on the account, which this user has not created yet; the user is at action_complete_kyc: KYC must be approved first (sandbox: PUT /__sandbox/users/:id/kyc-status), then answer the source-of-funds questionnaire (POST /source-of-funds), then create the account (POST /account).',
      );
    } finally {
      await newer.close();
    }
  });

  it('names only the steps still open: a user at KYC who has answered the source of funds goes on to the account', async () => {
    const answered = newAccount();
    const newer = await startSandbox({ generation: 'newer', users: [{ signInWallets: [answered.address], isSourceOfFundsAnswered: true }] });
    try {
      const refused = await limitOf(newer, await tokenFor(newer.baseUrl, answered));
      expect(refused.body.message).toMatch(/the user is at action_complete_kyc: KYC must be approved first \(sandbox: PUT \/__sandbox\/users\/:id\/kyc-status\), then create the account \(POST \/account\)\.$/);
    } finally {
      await newer.close();
    }
  });
});

// Service facts: "The reference's limit endpoint (`/user-api/user/account/limit`) belongs to the
// newer generation"; reference 9: on the older generation the user sets the onchain daily limit
// with an onchain signature. On the older generation the operations do not exist, as every
// operation of the other generation: 404 NotFound naming the generation.
describe('the older generation has no limit endpoint: GET and PUT answer 404 NotFound naming the newer generation', () => {
  it('answers 404 to a registered user with an account, to a wallet without a user and without a token, before reading the token or the body', async () => {
    const [registered, unregistered] = [newAccount(), newAccount()];
    const older = await startSandbox({ users: [withAccount(registered.address)] });
    try {
      const bearer = await tokenFor(older.baseUrl, registered);
      // Not through callOperation: the spec documents no 404, the operation does not exist here.
      const raw = async (method: 'GET' | 'PUT', authorization?: string, body?: unknown) => {
        const response = await fetch(`${older.baseUrl}/user-api/user/account/limit`, {
          method,
          headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization: `Bearer ${authorization}` }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      const calls = [
        ['GET', 'getAccountLimit', () => raw('GET', bearer)],
        ['PUT', 'setAccountLimit', () => raw('PUT', bearer, { amount: 5_000, currency: 'USD' })],
        ['PUT', 'setAccountLimit', () => raw('PUT', bearer, { amount: 0 })],
        ['GET', 'getAccountLimit', async () => raw('GET', await tokenFor(older.baseUrl, unregistered))],
        ['GET', 'getAccountLimit', () => raw('GET')],
      ] as const;
      for (const [method, operationId, call] of calls) {
        const answer = await call();
        expect(answer).toEqual({
          status: 404,
          body: {
            code: 'NotFound',
            message: `${method} /user-api/user/account/limit (${operationId}) exists only on the newer generation; this sandbox runs the older one (start it with --generation newer): on the older generation the user sets the daily limit onchain, with an onchain signature.`,
          },
        });
      }
      expect(older.deliveries()).toHaveLength(0);
    } finally {
      await older.close();
    }
  });
});
