import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { startPrismProxy } from './support/prism.js';
import { callOperation } from './support/sandbox-api.js';
import { getNonce, newAccount, siweMessage, tokenFor } from './support/sign-in.js';
import { openApi, operationsById } from './support/spec-responses.js';

const registered = newAccount();
const stranger = newAccount();
/** A newer-generation user with its account (a smart wallet), so that the limit answers 200 there. */
const accountHolder = newAccount();
/** The older generation answers sign-in and its SMS phone verification. */
let sandbox: Sandbox;
/** The newer generation answers the onboarding operations and the limit. */
let newer: Sandbox;
let token: string;
let newerToken: string;
let accountHolderToken: string;

beforeAll(async () => {
  [sandbox, newer] = await Promise.all([
    startSandbox({ users: [{ signInWallets: [registered.address] }], limitSyncDelayMs: 50 }),
    startSandbox({
      generation: 'newer',
      users: [{ signInWallets: [registered.address] }, { signInWallets: [accountHolder.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }],
      limitSyncDelayMs: 50,
    }),
  ]);
  [token, newerToken, accountHolderToken] = await Promise.all([tokenFor(sandbox.baseUrl, registered), tokenFor(newer.baseUrl, registered), tokenFor(newer.baseUrl, accountHolder)]);
});
afterAll(() => Promise.all([sandbox.close(), newer.close()]));

async function signedChallenge(account = registered, overrides: Parameters<typeof siweMessage>[2] = {}, target = sandbox) {
  const message = siweMessage(account, await getNonce(target.baseUrl), overrides);
  return { message, signature: await account.signMessage({ message }), ttlInSeconds: 3600 };
}

type Scenario = () => Promise<{ status: number }>;
const core = (operationId: string, init?: Parameters<typeof callOperation>[2]) => callOperation(sandbox.baseUrl, operationId, init);
const onNewer = (operationId: string, init?: Parameters<typeof callOperation>[2]) => callOperation(newer.baseUrl, operationId, init);
const notJson = { rawBody: '{"phone":', headers: { 'content-type': 'application/json' } };
/** A JSON body sent as text/plain: 415, whatever the body says. */
const asText = (body: unknown) => ({ rawBody: JSON.stringify(body), headers: { 'content-type': 'text/plain' } });
const lastCode = (target: Sandbox, sentTo: string) => target.oneTimePasswords().findLast((sent) => sent.sentTo === sentTo)!.code;
let serial = 0;
const uniqueEmail = () => `user${++serial}@example.com`;

/** A token for a wallet with no user yet, on the newer generation. */
async function freshToken(): Promise<string> {
  return tokenFor(newer.baseUrl, newAccount());
}

/** A token for a newer-generation user seeded with `fields` (its step follows them). */
async function tokenOfUser(fields: Record<string, unknown>): Promise<string> {
  const account = newAccount();
  newer.users.create({ signInWallets: [account.address], ...fields });
  return tokenFor(newer.baseUrl, account);
}

const kycDone = { kycStatus: 'approved', isSourceOfFundsAnswered: true } as const;
const withAccount = { ...kycDone, smartWallets: [{ address: '0x000000000000000000000000000000000000dEaD', chainId: '100' }] } as const;
let smartWalletSerial = 0;
/** A user at `action_create_card` (the phone set or not); each gets its own smart wallet. */
const atCardStep = (phone: string | null) => ({ ...kycDone, phone, smartWallets: [{ address: `0x${String(++smartWalletSerial).padStart(40, '0')}`, chainId: '100' }] });

async function registeredFresh(): Promise<string> {
  const fresh = await freshToken();
  const email = uniqueEmail();
  await onNewer('requestEmailVerification', { token: fresh, body: { email } });
  await onNewer('registerUser', { token: fresh, body: { email, otp: lastCode(newer, email) } });
  return fresh;
}

/** The five refusals every onboarding write shares; 409 from a user still at KYC. */
const writeRefusals = (operationId: string, invalidBody: unknown): Record<string, Scenario> => ({
  '400': () => onNewer(operationId, { token: newerToken, ...notJson }),
  '415': () => onNewer(operationId, { token: newerToken, ...asText(validBodies[operationId] ?? {}) }),
  '401': () => onNewer(operationId, { body: invalidBody }),
  '409': async () => onNewer(operationId, { token: newerToken, body: invalidBody === undefined ? undefined : validBodies[operationId] }),
  '422': async () => onNewer(operationId, { token: operationId === 'acceptTerms' ? await registeredFresh() : await tokenOfUser(atCardStep(null)), body: invalidBody }),
});

const validBodies: Record<string, unknown> = {
  acceptTerms: { accepted: true },
  submitSourceOfFunds: { answers: [{ question: 'Main source of income?', answer: 'Employment' }] },
  requestPhoneVerification: { phone: '+15555550100' },
  setPhone: { phone: '+15555550100', otp: '000000' },
  updatePhone: { phone: '+15555550100', otp: '000000' },
  createCard: { virtual: true },
};

async function atPhoneStepWithCode(phone: string): Promise<string> {
  const userToken = await tokenOfUser(atCardStep(null));
  await onNewer('requestPhoneVerification', { token: userToken, body: { phone } });
  return userToken;
}

/** One way to reach every documented status of every operation. */
const scenarios: Record<string, Record<string, Scenario>> = {
  getNonce: { '200': () => core('getNonce') },
  verifySiweSignature: {
    '200': async () => core('verifySiweSignature', { body: await signedChallenge() }),
    '401': async () => core('verifySiweSignature', { body: { ...(await signedChallenge()), signature: (await signedChallenge(stranger)).signature } }),
    '403': async () => core('verifySiweSignature', { body: await signedChallenge(registered, { domain: '127.0.0.1:3000', uri: 'http://127.0.0.1:3000' }) }),
    '415': async () => core('verifySiweSignature', asText(await signedChallenge())),
    '422': async () => core('verifySiweSignature', { body: { ...(await signedChallenge()), ttlInSeconds: 60 } }),
  },
  // The limit is the newer generation's (on the older one it does not exist: 404, undocumented as for every operation of the other generation).
  getAccountLimit: {
    '200': () => onNewer('getAccountLimit', { token: accountHolderToken }),
    '401': () => onNewer('getAccountLimit', { token: 'not-a-jwt' }),
    // The seeded newer user has not created its account.
    '409': () => onNewer('getAccountLimit', { token: newerToken }),
  },
  setAccountLimit: {
    '200': () => onNewer('setAccountLimit', { token: accountHolderToken, body: { amount: 500, currency: 'USD' } }),
    '400': () => onNewer('setAccountLimit', { token: accountHolderToken, rawBody: 'amount=500', headers: { 'content-type': 'application/json' } }),
    '401': () => onNewer('setAccountLimit', { body: { amount: 500, currency: 'USD' } }),
    '409': () => onNewer('setAccountLimit', { token: newerToken, body: { amount: 500, currency: 'USD' } }),
    '415': () => onNewer('setAccountLimit', { token: accountHolderToken, ...asText({ amount: 500, currency: 'USD' }) }),
    '422': () => onNewer('setAccountLimit', { token: accountHolderToken, body: { amount: 500, currency: 'GBP' } }),
  },
  getWebhookPublicKey: { '200': () => callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey') },
  getOnboardingStatus: {
    '200': () => onNewer('getOnboardingStatus', { token: newerToken }),
    // A wallet without a user (reference 5 rule 1 and 7), as a request without a token.
    '401': async () => onNewer('getOnboardingStatus', { token: await freshToken() }),
  },
  requestEmailVerification: {
    '200': async () => onNewer('requestEmailVerification', { token: await freshToken(), body: { email: uniqueEmail() } }),
    '400': async () => onNewer('requestEmailVerification', { token: await freshToken(), ...notJson }),
    '401': () => onNewer('requestEmailVerification', { body: { email: uniqueEmail() } }),
    '409': () => onNewer('requestEmailVerification', { token: newerToken, body: { email: uniqueEmail() } }),
    '415': async () => onNewer('requestEmailVerification', { token: await freshToken(), ...asText({ email: uniqueEmail() }) }),
    '422': async () => onNewer('requestEmailVerification', { token: await freshToken(), body: { email: 'not an email' } }),
  },
  getUser: {
    '200': () => onNewer('getUser', { token: newerToken }),
    '401': async () => onNewer('getUser', { token: await freshToken() }),
  },
  registerUser: {
    '200': async () => {
      const fresh = await freshToken();
      const email = uniqueEmail();
      await onNewer('requestEmailVerification', { token: fresh, body: { email } });
      return onNewer('registerUser', { token: fresh, body: { email, otp: lastCode(newer, email) } });
    },
    '400': async () => onNewer('registerUser', { token: await freshToken(), ...notJson }),
    '401': () => onNewer('registerUser', { body: { email: uniqueEmail(), otp: '000000' } }),
    '409': () => onNewer('registerUser', { token: newerToken, body: { email: uniqueEmail(), otp: '000000' } }),
    '415': async () => onNewer('registerUser', { token: await freshToken(), ...asText({ email: uniqueEmail(), otp: '000000' }) }),
    '422': async () => onNewer('registerUser', { token: await freshToken(), body: { email: uniqueEmail(), otp: '000000' } }),
  },
  acceptTerms: {
    '200': async () => onNewer('acceptTerms', { token: await registeredFresh(), body: { accepted: true } }),
    ...writeRefusals('acceptTerms', { accepted: false }),
  },
  submitSourceOfFunds: {
    '200': async () => onNewer('submitSourceOfFunds', { token: await tokenOfUser({ kycStatus: 'approved' }), body: validBodies.submitSourceOfFunds }),
    ...writeRefusals('submitSourceOfFunds', { answers: [] }),
  },
  requestPhoneVerification: {
    '200': async () => onNewer('requestPhoneVerification', { token: await tokenOfUser(withAccount), body: { phone: '+15555550101' } }),
    ...writeRefusals('requestPhoneVerification', { phone: '555-0101' }),
  },
  setPhone: {
    '200': async () => onNewer('setPhone', { token: await atPhoneStepWithCode('+15555550102'), body: { phone: '+15555550102', otp: lastCode(newer, '+15555550102') } }),
    ...writeRefusals('setPhone', { phone: '+15555550103', otp: '12' }),
  },
  updatePhone: {
    '200': async () => {
      const userToken = await tokenOfUser({ ...atCardStep('+15555550104'), isPhoneValidated: true });
      await onNewer('requestPhoneVerification', { token: userToken, body: { phone: '+15555550105' } });
      return onNewer('updatePhone', { token: userToken, body: { phone: '+15555550105', otp: lastCode(newer, '+15555550105') } });
    },
    ...writeRefusals('updatePhone', { phone: '+15555550106' }),
  },
  createAccount: {
    '200': async () => onNewer('createAccount', { token: await tokenOfUser(kycDone) }),
    '401': () => onNewer('createAccount'),
    '409': () => onNewer('createAccount', { token: newerToken }),
  },
  createCard: {
    '200': async () => onNewer('createCard', { token: await tokenOfUser(atCardStep('+15555550107')), body: { virtual: true } }),
    ...writeRefusals('createCard', {}),
  },
  requestLegacyPhoneVerification: {
    '200': () => core('requestLegacyPhoneVerification', { token, body: { phone: '+15555550108' } }),
    '400': () => core('requestLegacyPhoneVerification', { token, ...notJson }),
    '401': () => core('requestLegacyPhoneVerification', { body: { phone: '+15555550108' } }),
    '415': () => core('requestLegacyPhoneVerification', { token, ...asText({ phone: '+15555550108' }) }),
    '422': () => core('requestLegacyPhoneVerification', { token, body: { phone: 'call me' } }),
  },
  checkLegacyPhoneVerification: {
    '200': async () => {
      await core('requestLegacyPhoneVerification', { token, body: { phone: '+15555550109' } });
      return core('checkLegacyPhoneVerification', { token, body: { phone: '+15555550109', otp: lastCode(sandbox, '+15555550109') } });
    },
    '400': () => core('checkLegacyPhoneVerification', { token, ...notJson }),
    '401': () => core('checkLegacyPhoneVerification', { body: { phone: '+15555550109', otp: '000000' } }),
    '415': () => core('checkLegacyPhoneVerification', { token, ...asText({ phone: '+15555550109', otp: '000000' }) }),
    '422': () => core('checkLegacyPhoneVerification', { token, body: { phone: '+15555550110', otp: '000000' } }),
  },
};

describe('reaches every status the spec documents, each answer matching its response schema', () => {
  // "spec coverage:" tests are check:pr's sandbox gate (tools/check-pr): seconds, no server.
  it('spec coverage: has a scenario for exactly the operations and statuses of specs/dist/openapi.json', () => {
    const documented = [...operationsById].flatMap(([operationId, { operation }]) => Object.keys(operation.responses).map((status) => `${operationId} ${status}`));
    const covered = Object.entries(scenarios).flatMap(([operationId, byStatus]) => Object.keys(byStatus).map((status) => `${operationId} ${status}`));
    expect(covered.sort()).toEqual(documented.sort());
  });

  for (const [operationId, byStatus] of Object.entries(scenarios)) {
    for (const [status, scenario] of Object.entries(byStatus)) {
      // callOperation checks the body against the spec's schema for this status.
      it(`${operationId} answers ${status}`, async () => {
        expect((await scenario()).status).toBe(Number(status));
      });
    }
  }

});

describe('passes an independent check: Prism proxy (--errors) in front of the newer-generation sandbox', () => {
  let corePrism: Awaited<ReturnType<typeof startPrismProxy>>;
  let webhooksPrism: Awaited<ReturnType<typeof startPrismProxy>>;
  beforeAll(async () => {
    // Prism reads the spec as this test run loaded it, even if specs/dist is rebuilt meanwhile.
    const specPath = join(mkdtempSync(join(tmpdir(), 'capi-sandbox-prism-')), 'openapi.json');
    writeFileSync(specPath, JSON.stringify(openApi));
    [corePrism, webhooksPrism] = await Promise.all([startPrismProxy(specPath, newer.baseUrl), startPrismProxy(specPath, newer.webhooksUrl)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([corePrism?.close(), webhooksPrism?.close()]);
  });

  async function throughPrism(prismUrl: string, method: string, path: string, init: { token?: string; body?: unknown } = {}) {
    const response = await fetch(prismUrl + path, {
      method,
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, violations: response.headers.get('sl-violations'), text };
  }

  it('a sign-in, limit and key session goes through with the sandbox statuses and no violation', async () => {
    const nonceResponse = await throughPrism(corePrism.url, 'GET', '/api/v1/auth/nonce');
    expect(nonceResponse).toMatchObject({ status: 200, violations: null });
    const message = siweMessage(accountHolder, nonceResponse.text);
    const signIn = await throughPrism(corePrism.url, 'POST', '/api/v1/auth/challenge', {
      body: { message, signature: await accountHolder.signMessage({ message }), ttlInSeconds: 86400 },
    });
    expect(signIn).toMatchObject({ status: 200, violations: null });
    const prismToken = JSON.parse(signIn.text).token as string;

    const traffic: [string, string, { token?: string; body?: unknown }, number][] = [
      ['GET', '/user-api/user/account/limit', { token: prismToken }, 200],
      ['PUT', '/user-api/user/account/limit', { token: prismToken, body: { amount: 123_456, currency: 'USD' } }, 200],
      ['GET', '/user-api/user/account/limit', { token: prismToken }, 200],
      ['GET', '/user-api/user/account/limit', { token: 'expired.or.foreign' }, 401],
      ['GET', '/user-api/user/account/limit', { token: newerToken }, 409],
      ['PUT', '/user-api/user/account/limit', { token: newerToken, body: { amount: 123_456, currency: 'USD' } }, 409],
      ['POST', '/api/v1/auth/challenge', { body: { ...(await signedChallenge(registered, {}, newer)), signature: (await signedChallenge(stranger, {}, newer)).signature } }, 401],
      ['POST', '/api/v1/auth/challenge', { body: await signedChallenge(registered, { domain: 'other.example', uri: 'https://other.example' }, newer) }, 403],
      ['POST', '/api/v1/auth/challenge', { body: await signedChallenge(registered, { domain: '127.0.0.1', uri: 'http://127.0.0.1' }, newer) }, 403],
      ['GET', '/user/onboarding', { token: prismToken }, 200],
      ['GET', '/user', { token: prismToken }, 200],
      ['POST', '/account', { token: prismToken }, 409],
      ['POST', '/user/terms', { token: prismToken, body: { accepted: true } }, 409],
    ];
    for (const [method, path, init, expected] of traffic) {
      const response = await throughPrism(corePrism.url, method, path, init);
      expect({ method, path, status: response.status, violations: response.violations }).toEqual({ method, path, status: expected, violations: null });
    }
    const key = await throughPrism(webhooksPrism.url, 'GET', '/api/v1/public-key');
    expect(key).toMatchObject({ status: 200, violations: null });
    expect(JSON.parse(key.text).publicKey).toBe(newer.publicKey);
    expect(corePrism.output() + webhooksPrism.output()).not.toMatch(/Violation/);
  });
});
