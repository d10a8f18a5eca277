// @capi/client/onboarding against @capi/sandbox over loopback HTTP: the onboarding status, a
// wait for a step driven by the sandbox's admin API, and the token's unverified claims.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AbortError, AuthenticationError, ConflictError, createPartnerClient, InvalidArgumentError, signerFromViemAccount, TimeoutError, TokenManager, ValidationError } from '../src/index.js';
import {
  acceptTerms,
  createAccount,
  createCard,
  getOnboardingStatus,
  getUser,
  readTokenClaims,
  registerUser,
  requestEmailVerification,
  requestPhoneVerification,
  setPhone,
  submitSourceOfFunds,
  updatePhone,
  waitForOnboardingStatus,
} from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

async function signedIn() {
  sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registeredAccount.address] }] });
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

describe('waitForOnboardingStatus polls one last time at its timeoutMs, never giving up before it', () => {
  it('resolves when the status changes between the last regular poll and the deadline', async () => {
    const { client, userId } = await signedIn();
    // The first poll reads KYC; the next regular one (4 s) would land after the 3.5 s deadline,
    // the change at 2 s: only a poll at the deadline reads it.
    const approve = setTimeout(() => sandbox!.users.setKycStatus(userId, 'approved'), 2_000);
    try {
      await expect(waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 3_500, pollIntervalMs: 4_000 })).resolves.toEqual({ status: 'action_complete_sof' });
    } finally {
      clearTimeout(approve);
    }
  });

  it('a status still short of the target is reported only once timeoutMs has passed', async () => {
    const { client } = await signedIn();
    const started = Date.now();
    const late = await waitForOnboardingStatus(client, 'action_complete_sof', { timeoutMs: 1_000, pollIntervalMs: 5_000 }).catch((error: unknown) => error);
    expect(late).toMatchObject({ name: 'TimeoutError', code: 'onboarding_wait_timeout', timeoutMs: 1_000, message: expect.stringContaining('"action_complete_kyc" after 1000 ms') });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });
});

describe('a wait for KYC that a rejected or resubmission-requested KYC holds at action_complete_kyc', () => {
  it.each(['rejected', 'resubmissionRequested'] as const)('kycStatus %s: the timeout says to check the user\'s kycStatus, not only to wait longer', async (kycStatus) => {
    const { client, userId } = await signedIn();
    sandbox!.users.setKycStatus(userId, kycStatus);
    const late = await waitForOnboardingStatus(client, (status) => status !== 'action_complete_kyc', { timeoutMs: 300, pollIntervalMs: 50 }).catch((error: unknown) => error);
    expect(late).toMatchObject({ name: 'TimeoutError', code: 'onboarding_wait_timeout', message: expect.stringContaining('"action_complete_kyc" after 300 ms') });
    expect((late as Error).message).toContain("check the user's kycStatus (getUser(), or the kyc.status.changed webhook)");
    expect((late as Error).message).toContain('with rejected or resubmissionRequested the status stays at action_complete_kyc');
    expect((await getUser(client)).kycStatus).toBe(kycStatus);
  });

  it('another step keeps the general advice', async () => {
    const { client, userId } = await signedIn();
    sandbox!.users.setKycStatus(userId, 'approved');
    const late = await waitForOnboardingStatus(client, 'completed', { timeoutMs: 200, pollIntervalMs: 50 }).catch((error: unknown) => error);
    expect(late).toMatchObject({ code: 'onboarding_wait_timeout', message: expect.stringContaining('Wait longer (timeoutMs) or check what the user must do at this step') });
    expect((late as Error).message).not.toContain('kycStatus');
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

  it("gives each claim the spec names its type, or leaves it out: a hasSignedUp of \"false\" is false, not truthy", () => {
    const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;
    expect(readTokenClaims(jwt({ hasSignedUp: 'false', chainId: 100, userId: 42, iat: 1, exp: 2, signerAddress: '0xabc', role: 'x' }))).toEqual({
      hasSignedUp: false, chainId: '100', userId: '42', iat: 1, exp: 2, signerAddress: '0xabc', role: 'x',
    });
    const wrong = readTokenClaims(jwt({ hasSignedUp: 'no', chainId: { id: 100 }, userId: null, iat: '1', exp: null, signerAddress: 7 }));
    expect(wrong).toEqual({});
    expect(!wrong.hasSignedUp).toBe(true);
    expect(readTokenClaims(jwt({ hasSignedUp: 'true' })).hasSignedUp).toBe(true);
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

describe('the limit before the account exists (newer generation)', () => {
  it('a registered user is refused the limit with a ConflictError saying to create the account, until createAccount; then it reads and sets it', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [], limitSyncDelayMs: 20 });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    await requestEmailVerification(client, { email: 'no-account@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'no-account@example.com')!.code;
    const user = await registerUser(client, { email: 'no-account@example.com', otp });
    await acceptTerms(client);
    sandbox.users.setKycStatus(user.id, 'approved');
    await submitSourceOfFunds(client, { answers: [{ question: 'What is your main source of income?', answer: 'Employment' }] });
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_create_account' });
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 50_000 })]) {
      const refused = await call().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConflictError);
      expect(refused).toMatchObject({ status: 409, code: 'OnboardingStepNotReached', message: expect.stringContaining('The limit is on the account, not created yet: finish onboarding up to createAccount()') });
    }
    await createAccount(client);
    // The refused PUT left nothing behind: the new account starts at the default.
    await expect(client.getDailyLimit()).resolves.toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
    await expect(client.setDailyLimit({ amount: 50_000 })).resolves.toEqual({ amount: 50_000, currency: 'USD', syncStatus: 'pending' });
  });
});

describe('a wallet not yet registered keeps its token after a 401, for registration', () => {
  it('the limit answers 401 and says to register; the token is kept, not renewed (no wallet prompt), and registration works with it', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    let prompts = 0;
    const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    const client = createPartnerClient({
      baseUrl: sandbox.baseUrl,
      tokenManager: new TokenManager({ reauthenticate: async () => (prompts++, signIn()) }),
    });
    await signIn();
    const limit = await client.getDailyLimit().catch((error: unknown) => error);
    expect(limit).toBeInstanceOf(AuthenticationError);
    expect((limit as Error).message).toMatch(/has not registered a user yet/);
    expect(prompts).toBe(0);
    expect(client.tokenManager.hasToken).toBe(true);
    await expect(requestEmailVerification(client, { email: 'kept@example.com' })).resolves.toMatchObject({ sentTo: 'kept@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'kept@example.com')!.code;
    await expect(registerUser(client, { email: 'kept@example.com', otp })).resolves.toMatchObject({ email: 'kept@example.com' });
    // Without `refresh` nothing renews the token after registration (a wallet prompt never does).
    expect(prompts).toBe(0);
    expect(client.tokenManager.hasSignedUp).toBe(false);
  });

  it('is refreshed (newer generation, no wallet prompt) when the service has expired it: registration, then a 401 on the next step, then the refreshed token works', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const calls = { prompts: 0, refreshes: 0 };
    const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    const refresh = async (refreshToken: string) => {
      calls.refreshes += 1;
      const response = await fetch(`${sandbox!.baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
      return response.json();
    };
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager: new TokenManager({ refresh, reauthenticate: async () => (calls.prompts++, signIn()) }) });
    await signIn();
    await requestEmailVerification(client, { email: 'late@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'late@example.com')!.code;
    const user = await registerUser(client, { email: 'late@example.com', otp });
    // Registration refreshes the token at once (no wallet prompt): the new one names the user.
    expect(calls).toEqual({ prompts: 0, refreshes: 1 });
    expect(client.tokenManager.hasSignedUp).toBe(true);
    expect(readTokenClaims((await client.tokenManager.getToken())!)).toMatchObject({ hasSignedUp: true, userId: user.id });
    // That token has expired on the service's clock, not yet on the device's: refreshed again.
    sandbox.advanceClock(16 * 60_000);
    await expect(acceptTerms(client)).resolves.toMatchObject({ id: user.id });
    expect(calls).toEqual({ prompts: 0, refreshes: 2 });
  });

  it('a refresh that fails after registration keeps the registered user and the current token, and prompts no wallet', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const calls = { prompts: 0, refreshes: 0 };
    const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    const refresh = async () => {
      calls.refreshes += 1;
      throw new Error('refresh endpoint down');
    };
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager: new TokenManager({ refresh, reauthenticate: async () => (calls.prompts++, signIn()) }) });
    const { token } = await signIn();
    await requestEmailVerification(client, { email: 'down@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'down@example.com')!.code;
    await expect(registerUser(client, { email: 'down@example.com', otp })).resolves.toMatchObject({ email: 'down@example.com' });
    expect(calls).toEqual({ prompts: 0, refreshes: 1 });
    expect(await client.tokenManager.getToken()).toBe(token);
    expect(client.tokenManager.hasSignedUp).toBe(false);
  });
});

describe('the newer generation\'s journey against the sandbox, through every onboarding function', () => {
  it('a new wallet: email one-time password, registration, terms, KYC, source of funds, account, phone, card, then the limit', async () => {
    sandbox = await startSandbox({ generation: 'newer', requirePhone: true, users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    const step = async () => (await getOnboardingStatus(client)).status;
    const otpFor = (sentTo: string) => sandbox!.oneTimePasswords().findLast((sent) => sent.sentTo === sentTo)!.code;

    expect(readTokenClaims((await signIn()).token).hasSignedUp).toBe(false);
    await expect(getOnboardingStatus(client)).rejects.toMatchObject({ name: 'AuthenticationError', status: 401, code: 'UserNotRegistered', message: expect.stringMatching(/requestEmailVerification\(\), then registerUser\(\)/) });
    await expect(getUser(client)).rejects.toBeInstanceOf(AuthenticationError);
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(requestEmailVerification(client, { email: 'ada@example.com' })).resolves.toMatchObject({ sentTo: 'ada@example.com', expiresAt: expect.any(String) });
    const wrongCode = otpFor('ada@example.com') === '000000' ? '000001' : '000000';
    await expect(registerUser(client, { email: 'ada@example.com', otp: wrongCode })).rejects.toMatchObject({ name: 'ValidationError', code: 'InvalidOneTimePassword' });
    const user = await registerUser(client, { email: 'ada@example.com', otp: otpFor('ada@example.com') });
    expect(user).toMatchObject({ email: 'ada@example.com', signInWallets: [{ address: wallet.address }] });
    await expect(registerUser(client, { email: 'ada@example.com', otp: '123456' })).rejects.toBeInstanceOf(ConflictError);
    expect(readTokenClaims((await signIn()).token).userId).toBe(user.id);

    expect(await step()).toBe('action_accept_tos');
    await expect(createAccount(client)).rejects.toMatchObject({ name: 'ConflictError', code: 'OnboardingStepNotReached' });
    await acceptTerms(client);
    expect(await step()).toBe('action_complete_kyc');
    sandbox.users.setKycStatus(user.id, 'approved');
    await expect(waitForOnboardingStatus(client, 'action_complete_sof', { pollIntervalMs: 20 })).resolves.toEqual({ status: 'action_complete_sof' });
    expect((await submitSourceOfFunds(client, { answers: [{ question: 'Main income?', answer: 'Employment' }] })).isSourceOfFundsAnswered).toBe(true);
    expect(await step()).toBe('action_create_account');
    expect((await createAccount(client)).smartWallets).toHaveLength(1);
    expect(await step()).toBe('action_verify_phone');
    await expect(requestPhoneVerification(client, { phone: '+15555550123' })).resolves.toMatchObject({ sentTo: '+15555550123' });
    expect((await setPhone(client, { phone: '+15555550123', otp: otpFor('+15555550123') })).isPhoneValidated).toBe(true);
    await requestPhoneVerification(client, { phone: '+15555550199' });
    expect((await updatePhone(client, { phone: '+15555550199', otp: otpFor('+15555550199') })).phone).toBe('+15555550199');
    expect(await step()).toBe('action_create_card');
    // The phone is verified: a card with another number is refused (not a silently kept old number), and creates nothing.
    await expect(createCard(client, { virtual: true, phone: '+15555550123' })).rejects.toMatchObject({
      name: 'ConflictError',
      status: 409,
      code: 'PhoneAlreadySet',
      // Said once, in the client's terms; the service's own words (raw paths) are serviceMessage.
      message: expect.stringMatching(/^(?!.*PATCH \/phone).*so no card was created.*requestPhoneVerification\(\), then updatePhone\(\)/),
      serviceMessage: expect.stringMatching(/already set \(validated\).*PATCH \/phone/),
    });
    expect((await getUser(client)).cards).toHaveLength(0);
    expect((await createCard(client, { virtual: true })).cards).toHaveLength(1);
    expect(await step()).toBe('completed');
    expect(await getUser(client)).toMatchObject({ id: user.id, kycStatus: 'approved', isSourceOfFundsAnswered: true, isPhoneValidated: true });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000, currency: 'USD' });
  });
});
