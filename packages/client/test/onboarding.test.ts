// @capi/client/onboarding against @capi/sandbox over loopback HTTP: the onboarding status, a
// wait for a step driven by the sandbox's admin API, and the token's unverified claims.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { AbortError, AuthenticationError, createPartnerClient, InvalidArgumentError, signerFromViemAccount, TimeoutError, ValidationError } from '../src/index.js';
import { getOnboardingStatus, readTokenClaims, registerUser, setPhone, waitForOnboardingStatus } from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

async function signedIn() {
  sandbox = await startSandbox({ users: [{ signInWallets: [registeredAccount.address] }] });
  const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
  const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
  const userId = readTokenClaims(token).userId!;
  return { client, token, userId, admin: `${sandbox.baseUrl}/__sandbox/users/${userId}` };
}

describe('getOnboardingStatus', () => {
  it('answers the step the user is at, and a 401 before sign-in', async () => {
    const { client } = await signedIn();
    await expect(getOnboardingStatus(client)).resolves.toMatchObject({ status: expect.any(String) });
    const stranger = createPartnerClient({ baseUrl: sandbox!.baseUrl });
    await expect(getOnboardingStatus(stranger)).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe('waitForOnboardingStatus', () => {
  it('returns once the status leaves KYC, driven by the admin API', async () => {
    const { client, admin } = await signedIn();
    const before = await getOnboardingStatus(client);
    expect(before.status).toBe('action_complete_kyc');
    const waiting = waitForOnboardingStatus(client, (status) => status !== 'action_complete_kyc', { pollIntervalMs: 20 });
    const put = await fetch(`${admin}/kyc-status`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kycStatus: 'approved' }) });
    expect(put.status).toBe(200);
    await expect(waiting).resolves.toEqual({ status: 'action_complete_sof' });
    await expect(waitForOnboardingStatus(client, ['action_complete_sof', 'action_accept_tos'])).resolves.toEqual({ status: 'action_complete_sof' });
  });

  it('times out with the last status, stops on the signal, refuses a bad target', async () => {
    const { client } = await signedIn();
    const late = await waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 50, pollIntervalMs: 20 }).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(TimeoutError);
    expect(late).toMatchObject({ code: 'onboarding_wait_timeout', message: expect.stringContaining('"action_complete_kyc"') });
    const controller = new AbortController();
    const stopped = waitForOnboardingStatus(client, 'action_complete_sof', { pollIntervalMs: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(stopped).rejects.toBeInstanceOf(AbortError);
    await expect(waitForOnboardingStatus(client, 42 as never)).rejects.toMatchObject({ code: 'invalid_target', argument: 'target' });
    await expect(waitForOnboardingStatus(client, 'x', { timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('readTokenClaims', () => {
  it('reads hasSignedUp and userId without verifying, and refuses what is not a JWT', async () => {
    const { token, userId } = await signedIn();
    expect(readTokenClaims(token)).toMatchObject({ hasSignedUp: true, userId, signerAddress: registeredAccount.address, chainId: '100' });
    expect(userId).toEqual(expect.any(String));
    for (const bad of ['', 'not-a-jwt', 'a.b.c', `x.${btoa('[1]')}.y`]) {
      expect(() => readTokenClaims(bad)).toThrow(expect.objectContaining({ code: 'invalid_token', argument: 'token' }));
    }
  });
});

describe('the onboarding writes against the sandbox', () => {
  it('a body the spec refuses is a ValidationError from the service (422); without a token, AuthenticationError', async () => {
    const { client } = await signedIn();
    const refused = await registerUser(client, { email: 'not an email', otp: '492817' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ status: 422 });
    const stranger = createPartnerClient({ baseUrl: sandbox!.baseUrl });
    await expect(setPhone(stranger, { phone: '+15555550123', otp: '731904' })).rejects.toBeInstanceOf(AuthenticationError);
  });
});
