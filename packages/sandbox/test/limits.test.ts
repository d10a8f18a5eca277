import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { callOperation } from './support/sandbox-api.js';
import { newAccount, tokenFor } from './support/sign-in.js';

const owner = newAccount();
const other = newAccount();
let sandbox: Sandbox;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox({ users: [{ signInWallets: [owner.address] }, { signInWallets: [other.address] }], limitSyncDelayMs: 300 });
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
  sandbox.users.create({ signInWallets: [account.address] });
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
