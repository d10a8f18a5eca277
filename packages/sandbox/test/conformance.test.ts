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
let sandbox: Sandbox;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox({ users: [{ signInWallets: [registered.address] }], limitSyncDelayMs: 50 });
  token = await tokenFor(sandbox.baseUrl, registered);
});
afterAll(() => sandbox.close());

async function signedChallenge(account = registered, overrides: Parameters<typeof siweMessage>[2] = {}) {
  const message = siweMessage(account, await getNonce(sandbox.baseUrl), overrides);
  return { message, signature: await account.signMessage({ message }), ttlInSeconds: 3600 };
}

type Scenario = () => Promise<{ status: number }>;
const core = (operationId: string, init?: Parameters<typeof callOperation>[2]) => callOperation(sandbox.baseUrl, operationId, init);

const onboardingScenarios = (operationId: string): Record<string, Scenario> => {
  const reads = operationsById.get(operationId)!.method === 'GET';
  return {
    '200': () => core(operationId, { token, ...(reads ? {} : { body: {} }) }),
    '401': () => core(operationId, { ...(reads ? {} : { body: {} }) }),
    ...(reads ? {} : {
      '400': () => core(operationId, { token, rawBody: '{"phone":', headers: { 'content-type': 'application/json' } }),
      '422': () => core(operationId, { token, body: ['not', 'an', 'object'] }),
    }),
  };
};

/** One way to reach every documented status of every operation. */
const scenarios: Record<string, Record<string, Scenario>> = {
  getNonce: { '200': () => core('getNonce') },
  verifySiweSignature: {
    '200': async () => core('verifySiweSignature', { body: await signedChallenge() }),
    '401': async () => core('verifySiweSignature', { body: await signedChallenge(stranger) }),
    '403': async () => core('verifySiweSignature', { body: await signedChallenge(registered, { domain: '127.0.0.1:3000', uri: 'http://127.0.0.1:3000' }) }),
    '422': async () => core('verifySiweSignature', { body: { ...(await signedChallenge()), ttlInSeconds: 60 } }),
  },
  getAccountLimit: {
    '200': () => core('getAccountLimit', { token }),
    '401': () => core('getAccountLimit', { token: 'not-a-jwt' }),
  },
  setAccountLimit: {
    '200': () => core('setAccountLimit', { token, body: { amount: 500, currency: 'USD' } }),
    '400': () => core('setAccountLimit', { token, rawBody: 'amount=500', headers: { 'content-type': 'application/json' } }),
    '401': () => core('setAccountLimit', { body: { amount: 500, currency: 'USD' } }),
    '422': () => core('setAccountLimit', { token, body: { amount: 500, currency: 'GBP' } }),
  },
  getWebhookPublicKey: { '200': () => callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey') },
  ...Object.fromEntries(
    [
      'getOnboardingStatus',
      'registerUser',
      'requestPhoneVerification',
      'setPhone',
      'updatePhone',
      'createAccount',
      'requestLegacyPhoneVerification',
      'checkLegacyPhoneVerification',
    ].map((operationId) => [operationId, onboardingScenarios(operationId)]),
  ),
};

describe('reaches every status the spec documents, each answer matching its response schema', () => {
  it('has a scenario for exactly the operations and statuses of specs/dist/openapi.json', () => {
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

  it('reports the onboarding step from the user state', async () => {
    expect((await core('getOnboardingStatus', { token })).body).toEqual({ status: 'action_complete_kyc' });
    const user = sandbox.users.findByWallet(registered.address)!;
    sandbox.users.setKycStatus(user.id, 'approved');
    expect((await core('getOnboardingStatus', { token })).body).toEqual({ status: 'action_complete_sof' });
  });
});

describe('passes an independent check: Prism proxy (--errors) in front of the sandbox', () => {
  let corePrism: Awaited<ReturnType<typeof startPrismProxy>>;
  let webhooksPrism: Awaited<ReturnType<typeof startPrismProxy>>;
  beforeAll(async () => {
    // Prism reads the spec as this test run loaded it, even if specs/dist is rebuilt meanwhile.
    const specPath = join(mkdtempSync(join(tmpdir(), 'capi-sandbox-prism-')), 'openapi.json');
    writeFileSync(specPath, JSON.stringify(openApi));
    [corePrism, webhooksPrism] = await Promise.all([startPrismProxy(specPath, sandbox.baseUrl), startPrismProxy(specPath, sandbox.webhooksUrl)]);
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
    const message = siweMessage(registered, nonceResponse.text);
    const signIn = await throughPrism(corePrism.url, 'POST', '/api/v1/auth/challenge', {
      body: { message, signature: await registered.signMessage({ message }), ttlInSeconds: 86400 },
    });
    expect(signIn).toMatchObject({ status: 200, violations: null });
    const prismToken = JSON.parse(signIn.text).token as string;

    const traffic: [string, string, { token?: string; body?: unknown }, number][] = [
      ['GET', '/user-api/user/account/limit', { token: prismToken }, 200],
      ['PUT', '/user-api/user/account/limit', { token: prismToken, body: { amount: 123_456, currency: 'USD' } }, 200],
      ['GET', '/user-api/user/account/limit', { token: prismToken }, 200],
      ['GET', '/user-api/user/account/limit', { token: 'expired.or.foreign' }, 401],
      ['POST', '/api/v1/auth/challenge', { body: await signedChallenge(stranger) }, 401],
      ['POST', '/api/v1/auth/challenge', { body: await signedChallenge(registered, { domain: 'other.example', uri: 'https://other.example' }) }, 403],
      ['POST', '/api/v1/auth/challenge', { body: await signedChallenge(registered, { domain: '127.0.0.1', uri: 'http://127.0.0.1' }) }, 403],
      ['GET', '/user/onboarding', { token: prismToken }, 200],
      ['POST', '/account', { token: prismToken, body: {} }, 200],
    ];
    for (const [method, path, init, expected] of traffic) {
      const response = await throughPrism(corePrism.url, method, path, init);
      expect({ method, path, status: response.status, violations: response.violations }).toEqual({ method, path, status: expected, violations: null });
    }
    const key = await throughPrism(webhooksPrism.url, 'GET', '/api/v1/public-key');
    expect(key).toMatchObject({ status: 200, violations: null });
    expect(JSON.parse(key.text).publicKey).toBe(sandbox.publicKey);
    expect(corePrism.output() + webhooksPrism.output()).not.toMatch(/Violation/);
  });
});
