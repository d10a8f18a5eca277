// What the client says and does about the sandbox's refusals: a 401 whose code is about the
// token (not registration) for a wallet registered with its pre-registration token, a refresh
// callback that hands over the refusal's body, a refused sign-in, and a hint that shows a
// placeholder token. All against @capi/sandbox over loopback HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { NONCE_LIFETIME_MS, startSandbox, type Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AuthenticationError, createPartnerClient, errorFromResponse, InvalidArgumentError, signerFromViemAccount, TokenManager, TokenRenewalError, type PartnerClient, type TokenSet } from '../src/index.js';
import { acceptTerms, createAccount, getOnboardingStatus, registerUser, requestEmailVerification, submitSourceOfFunds } from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE, unregisteredAccount } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

const ACCESS_TOKEN_LIFETIME_MS = 15 * 60_000;
const SMART_ACCOUNT = { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' };

/** A new wallet taken through registration up to its account, keeping its pre-registration token (no refresh callback). */
async function registeredWithPreRegistrationToken(client: PartnerClient, wallet: ReturnType<typeof privateKeyToAccount>) {
  await client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
  await requestEmailVerification(client, { email: 'kept@example.com' });
  const otp = sandbox!.oneTimePasswords().findLast((sent) => sent.sentTo === 'kept@example.com')!.code;
  const user = await registerUser(client, { email: 'kept@example.com', otp });
  await acceptTerms(client);
  sandbox!.users.setKycStatus(user.id, 'approved');
  await submitSourceOfFunds(client, { answers: [{ question: 'Main income?', answer: 'Employment' }] });
  await createAccount(client);
  // The token still says hasSignedUp: false; the service answers it all the same.
  expect(client.tokenManager.hasSignedUp).toBe(false);
  await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
}

describe('a 401 about the token, for a wallet registered with its pre-registration token (hasSignedUp: false claim)', () => {
  it('the limit\'s TokenExpired says to sign in again, not to register (which would answer 409 AlreadyRegistered)', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await registeredWithPreRegistrationToken(client, privateKeyToAccount(generatePrivateKey()));
    sandbox.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'TokenExpired', message: expect.stringContaining('Sign in again with signInWithEthereum()') });
    expect((error as Error).message).not.toContain('POST /user');
    expect((error as Error).message).not.toContain('register');
  });

  it('is renewed through reauthenticate (the claim is stale), and the request retried', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    let prompts = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl: sandbox.baseUrl,
      tokenManager: new TokenManager({ reauthenticate: () => (prompts++, client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE })) }),
    });
    await registeredWithPreRegistrationToken(client, wallet);
    sandbox.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(prompts).toBe(1);
    expect(client.tokenManager.hasSignedUp).toBe(true);
  });

  it('a wallet that has not registered still gets the register advice, and its token is kept (UserNotRegistered)', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    let prompts = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl: sandbox.baseUrl,
      tokenManager: new TokenManager({ reauthenticate: () => (prompts++, client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE })) }),
    });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'UserNotRegistered', message: expect.stringContaining('register it with requestEmailVerification(), then registerUser()') });
    expect(prompts).toBe(0);
    expect(client.tokenManager.hasToken).toBe(true);
  });
});

describe('a refresh callback that resolves to the refusal\'s body instead of throwing', () => {
  async function revokedSession() {
    sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registeredAccount.address], smartWallets: [SMART_ACCOUNT] }] });
    const { baseUrl } = sandbox;
    const refreshAt = (refreshToken: string) => fetch(`${baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
    return { baseUrl, refreshAt };
  }

  it('is a TokenRenewalError token_renewal_failed saying what it returned and what it must do, not InvalidArgumentError invalid_tokens', async () => {
    const { baseUrl, refreshAt } = await revokedSession();
    // The callback as the README once showed it: no response.ok check.
    const tokenManager = new TokenManager({ refresh: async (refreshToken) => (await refreshAt(refreshToken)).json() as Promise<TokenSet> });
    const client = createPartnerClient({ baseUrl, tokenManager });
    const { refreshToken } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect((await refreshAt(refreshToken!)).status).toBe(200); // used elsewhere: the client's copy is now a reused one
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);

    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).not.toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'token_renewal_failed' });
    expect((error as Error).message).toContain('the refresh callback resolved to an object with code, message (code "RefreshTokenReused": an error body?), not tokens');
    expect((error as Error).message).toContain('It must resolve to { token, refreshToken, expiresAt? }, and throw when the service refuses (with fetch: if (!response.ok) throw ...)');
    expect((error as Error).cause).toMatchObject({ name: 'InvalidArgumentError', code: 'invalid_tokens' });
    expect(client.tokenManager.hasToken).toBe(false);
  });

  it('with reauthenticate, falls back to signing in, as for a refresh that throws', async () => {
    const { baseUrl, refreshAt } = await revokedSession();
    let prompts = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      tokenManager: new TokenManager({
        refresh: async (refreshToken) => (await refreshAt(refreshToken)).json() as Promise<TokenSet>,
        reauthenticate: () => (prompts++, client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE })),
      }),
    });
    const { refreshToken } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await refreshAt(refreshToken!);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(prompts).toBe(1);
  });
});

describe('a refused sign-in (401 at the challenge) advises a new sign-in and a signer check, never registration', () => {
  it('a signature by another key', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const impostor = { address: registeredAccount.address, signMessage: (message: string) => unregisteredAccount.signMessage({ message }) };
    const error = await client.signInWithEthereum({ ...impostor, ...SIGN_IN_PAGE }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('call signInWithEthereum again, which gets a new nonce');
    expect((error as Error).message).toContain('check that signMessage signs `message` exactly as given, with the key of `address`');
    expect((error as Error).message).not.toMatch(/registered account|register/);
  });

  it('a nonce that expired while the wallet prompt was open is named as such', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const slowWallet = {
      address: unregisteredAccount.address,
      signMessage: (message: string) => {
        sandbox!.advanceClock(NONCE_LIFETIME_MS + 1_000); // the user took too long
        return unregisteredAccount.signMessage({ message });
      },
    };
    const error = await client.signInWithEthereum({ ...slowWallet, ...SIGN_IN_PAGE }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('The nonce was refused (it expired before the signature came back: nonces live a few minutes): call signInWithEthereum again');
    expect((error as Error).message).not.toMatch(/registered account|register/);
    // A wallet without a user signs in fine with a fresh nonce (hasSignedUp: false).
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.hasSignedUp).toBe(false);
  });
});

describe('redaction keeps a placeholder of a hint readable', () => {
  it('the sandbox\'s MissingToken hint keeps "Authorization: Bearer <token>"', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'MissingToken' });
    // The service's sentence is serviceMessage (the message gives the client's advice instead).
    expect((error as AuthenticationError).serviceMessage).toContain('"Authorization: Bearer <token>"');
    expect((error as AuthenticationError).serviceMessage).not.toContain('[redacted token]');
    expect((error as Error).message).not.toContain('[redacted token]');
    expect((error as AuthenticationError).body).toMatchObject({ message: expect.stringContaining('Bearer <token>') });
  });
});

describe("a refusal the client has advice for says it once, in the SDK's terms; the service's own words stay in serviceMessage", () => {
  const messageOf = (error: unknown) => (error as Error).message;
  const serviceMessageOf = (error: unknown) => (error as { serviceMessage?: string }).serviceMessage;

  it('401 UserNotRegistered on the limit: the registration steps by method name, not the raw POST paths as well', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AuthenticationError', status: 401, code: 'UserNotRegistered' });
    expect(messageOf(error)).toMatch(/^Authentication failed \(HTTP 401 UserNotRegistered\): /);
    expect(messageOf(error)).toContain('requestEmailVerification(), then registerUser()');
    expect(messageOf(error)).not.toContain('POST /email/verification');
    expect(messageOf(error)).not.toContain('register first');
    expect(serviceMessageOf(error)).toContain('register first: POST /email/verification, then POST /user');
    expect((error as AuthenticationError).body).toMatchObject({ code: 'UserNotRegistered' });
  });

  it('401 UserNotRegistered of the onboarding operations (the status included), 409 AlreadyRegistered of registerUser', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    const notRegistered = await getOnboardingStatus(client).catch((caught: unknown) => caught);
    expect(notRegistered).toMatchObject({ name: 'AuthenticationError', status: 401, code: 'UserNotRegistered' });
    expect(messageOf(notRegistered)).toContain('requestEmailVerification(), then registerUser()');
    expect(messageOf(notRegistered)).not.toContain('POST /email/verification');
    expect(serviceMessageOf(notRegistered)).toContain('POST /email/verification');
    const unauthorized = await acceptTerms(client).catch((caught: unknown) => caught);
    expect(unauthorized).toMatchObject({ name: 'AuthenticationError', code: 'UserNotRegistered' });
    expect(messageOf(unauthorized)).not.toContain('POST /email/verification');

    await requestEmailVerification(client, { email: 'twice@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'twice@example.com')!.code;
    await registerUser(client, { email: 'twice@example.com', otp });
    const conflict = await registerUser(client, { email: 'twice@example.com', otp }).catch((caught: unknown) => caught);
    expect(conflict).toMatchObject({ name: 'ConflictError', code: 'AlreadyRegistered' });
    expect(messageOf(conflict)).toContain('read getOnboardingStatus()');
    expect(messageOf(conflict)).not.toContain('GET /user');
    expect(serviceMessageOf(conflict)).toContain('GET /user/onboarding');
  });

  it('409 OnboardingStepNotReached on the limit: finish onboarding up to createAccount(), not the raw steps as well', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registeredAccount.address] }] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    const error = await client.setDailyLimit({ amount: 100 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ConflictError', code: 'OnboardingStepNotReached' });
    expect(messageOf(error)).toContain('finish onboarding up to createAccount()');
    expect(messageOf(error)).not.toContain('POST /account');
    expect(serviceMessageOf(error)).toContain('POST /account');
  });

  it('any other 401 of a client operation (MissingToken, TokenExpired): sign in again with signInWithEthereum(), not the raw challenge as well', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registeredAccount.address], smartWallets: [SMART_ACCOUNT] }] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const missing = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(missing).toMatchObject({ name: 'AuthenticationError', code: 'MissingToken' });
    expect(messageOf(missing)).toBe(
      'Authentication failed (HTTP 401 MissingToken): Sign in again with signInWithEthereum(), or give the client a TokenManager with a reauthenticate callback so that it renews the token itself',
    );
    expect(serviceMessageOf(missing)).toContain('POST /api/v1/auth/challenge');
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    sandbox.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    const expired = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(expired).toMatchObject({ name: 'AuthenticationError', code: 'TokenExpired' });
    expect(messageOf(expired)).not.toContain('POST /api/v1/auth/challenge');
    expect(messageOf(expired)).toContain('Sign in again with signInWithEthereum()');
    expect(serviceMessageOf(expired)).toContain('The access token has expired');
  });

  it('errorFromResponse without advice (client.raw) keeps the service\'s words in the message, then the status\'s advice', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl });
    const { error, response } = await client.raw.GET('/user-api/user/account/limit');
    const built = errorFromResponse(response, error);
    expect(built).toMatchObject({ name: 'AuthenticationError', code: 'MissingToken' });
    expect(built.message).toContain('Authorization: Bearer <token>');
    expect(built.message).toContain('Sign in again with signInWithEthereum()');
    expect(built.serviceMessage).toContain('Authorization: Bearer <token>');
  });
});
