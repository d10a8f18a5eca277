// Reference 5 (rules 2, 5, 6, 7) and 9: sign-in, token lifetime and renewal, in the middle of
// a user's journey, through @capi/client against the sandbox over loopback HTTP.
import { AuthenticationError, createPartnerClient, ForbiddenError, InvalidArgumentError, signerFromViemAccount, TokenManager, type PartnerClient, type TokenSet } from '@capi/client';
import { acceptTerms, getOnboardingStatus, getUser, readTokenClaims, registerUser, requestEmailVerification, requestLegacyPhoneVerification } from '@capi/client/onboarding';
import type { Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { admin, apiUser, expectNewEvents, lastOneTimePassword, newWallet, SIGN_IN_PAGE, startJourney, type Journey } from './support/journey.js';

let journey: Journey | undefined;
afterEach(async () => {
  await journey?.close();
  journey = undefined;
});

/** The sandbox's refresh operation (the reference leaves it out; the client takes it as a callback). */
function sandboxRefresh(sandbox: Sandbox, calls: { refresh: number }) {
  return async (refreshToken: string): Promise<TokenSet> => {
    calls.refresh += 1;
    return admin<TokenSet>(sandbox, 'POST', '/__sandbox/auth/refresh', { refreshToken });
  };
}

/** A client whose TokenManager renews as a partner's app would: refresh first, else a new sign-in by the wallet. */
function renewingClient(sandbox: Sandbox, account: PrivateKeyAccount) {
  const calls = { refresh: 0, reauthenticate: 0, signatures: 0 };
  const nonces: string[] = [];
  const signer = signerFromViemAccount(account);
  const signMessage = (message: string) => {
    calls.signatures += 1;
    nonces.push(/^Nonce: (.+)$/m.exec(message)![1]!);
    return signer.signMessage(message);
  };
  const signIn = () => client.signInWithEthereum({ ...signer, signMessage, ...SIGN_IN_PAGE, ttlInSeconds: 3600 });
  const tokenManager = new TokenManager({
    refresh: sandboxRefresh(sandbox, calls),
    reauthenticate: () => ((calls.reauthenticate += 1), signIn()),
  });
  const client: PartnerClient = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager });
  return { client, calls, nonces, signIn };
}

describe('newer generation: the 15-minute access token is refreshed in the middle of onboarding (reference 5 rule 7)', () => {
  it('registration refreshes the token (no wallet prompt) into one that names the user; when that one expires mid-journey it is refreshed again', async () => {
    journey = await startJourney({});
    const { sandbox } = journey;
    const account = privateKeyToAccount(generatePrivateKey());
    const { client, calls, signIn } = renewingClient(sandbox, account);
    const seen = { count: 0 };

    const before = Date.now();
    const first = await signIn();
    const after = Date.now();
    expect(readTokenClaims(first.token)).toMatchObject({ hasSignedUp: false });
    // A 15-minute token, counted on this device's clock from its arrival.
    const claims = readTokenClaims(first.token) as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBe(15 * 60);
    expect(first.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 15 * 60_000);
    expect(first.expiresAt.getTime()).toBeLessThanOrEqual(after + 15 * 60_000);
    await requestEmailVerification(client, { email: 'mid@example.com' });
    const user = await registerUser(client, { email: 'mid@example.com', otp: await lastOneTimePassword(sandbox, 'mid@example.com') });
    await expectNewEvents(journey, seen, client, ['user.created']);
    // The token the wallet signed for says hasSignedUp: false; registerUser refreshed it.
    expect(calls).toEqual({ refresh: 1, reauthenticate: 0, signatures: 1 });
    expect(client.tokenManager.hasSignedUp).toBe(true);
    expect(readTokenClaims((await client.tokenManager.getToken())!)).toMatchObject({ hasSignedUp: true, userId: user.id });

    // 16 minutes later on the service's clock: the token it issued has expired.
    await admin(sandbox, 'POST', '/__sandbox/clock', { advanceSeconds: 16 * 60 });
    expect(await acceptTerms(client)).toEqual(await apiUser(client));
    expect(calls).toEqual({ refresh: 2, reauthenticate: 0, signatures: 1 });
    expect(client.tokenManager.hasSignedUp).toBe(true);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_complete_kyc' });
    expect((await getUser(client)).id).toBe(user.id);
    await expectNewEvents(journey, seen, client, []);
  });

  it('before registration, the 401 that means "register first" never prompts the wallet, and registration follows', async () => {
    journey = await startJourney({});
    const { sandbox } = journey;
    const { client, calls, signIn } = renewingClient(sandbox, privateKeyToAccount(generatePrivateKey()));
    await signIn();
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(getUser(client)).rejects.toBeInstanceOf(AuthenticationError);
    // A refresh per refused call (no user interaction); no new sign-in.
    expect(calls).toEqual({ refresh: 2, reauthenticate: 0, signatures: 1 });
    await requestEmailVerification(client, { email: 'early@example.com' });
    const user = await registerUser(client, { email: 'early@example.com', otp: await lastOneTimePassword(sandbox, 'early@example.com') });
    // Registration refreshed the token once more, still without a signature.
    expect(calls).toEqual({ refresh: 3, reauthenticate: 0, signatures: 1 });
    expect(client.tokenManager.hasSignedUp).toBe(true);
    expect(await getUser(client)).toEqual(user);
  });
});

describe('older generation: the token lives ttlInSeconds; once expired, the client signs in again (reference 5 rules 2, 5, 6)', () => {
  it('asks the wallet for a new signature over a new nonce, once, and carries on', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    journey = await startJourney({ generation: 'older', users: [{ signInWallets: [account.address] }] });
    const { sandbox } = journey;
    const { client, calls, nonces, signIn } = renewingClient(sandbox, account);
    const first = await signIn();
    const claims = readTokenClaims(first.token);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(first.refreshToken).toBeUndefined();
    // The older generation's own authenticated operation (it has no limit endpoint): the SMS verification.
    const phone = '+15555550190';
    expect(await requestLegacyPhoneVerification(client, { phone })).toMatchObject({ sentTo: phone });

    await admin(sandbox, 'POST', '/__sandbox/clock', { advanceSeconds: 3601 });
    // Ten requests at once after expiry: one new sign-in for all of them.
    const sent = await Promise.all(Array.from({ length: 10 }, () => requestLegacyPhoneVerification(client, { phone })));
    expect(sent.every((answer) => answer.sentTo === phone)).toBe(true);
    expect(calls).toEqual({ refresh: 0, reauthenticate: 1, signatures: 2 });
    // Each sign-in used a new nonce (rule 2).
    expect(nonces).toHaveLength(2);
    expect(new Set(nonces).size).toBe(2);
  });
});

describe('where a wallet may sign in from (reference 5 rules 3 and 4, section 7)', () => {
  it('localhost on any port and a whitelisted domain sign in; another domain is refused (ForbiddenError); 127.0.0.1 is refused before the wallet is asked', async () => {
    journey = await startJourney({ whitelist: ['app.partner.example'] });
    const { account, client } = newWallet(journey.sandbox);
    const signer = signerFromViemAccount(account);
    for (const page of [{ domain: 'localhost', uri: 'http://localhost/' }, { domain: 'localhost:5173', uri: 'http://localhost:5173/' }, { domain: 'app.partner.example', uri: 'https://app.partner.example/login' }]) {
      await expect(client.signInWithEthereum({ ...signer, ...page, chainId: 100 })).resolves.toMatchObject({ token: expect.any(String) });
    }
    const foreign = await client.signInWithEthereum({ ...signer, domain: 'evil.example', uri: 'https://evil.example/', chainId: 100 }).catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(ForbiddenError);
    expect(foreign).toMatchObject({ status: 403, code: 'DomainNotWhitelisted' });
    // The service's firewall would answer WAFForbidden (WafForbiddenError, tested in the client's
    // errors.test.ts against a raw message); the client refuses it first, so no wallet prompt is wasted.
    let prompted = false;
    const loopback = await client.signInWithEthereum({ ...signer, signMessage: (message) => ((prompted = true), signer.signMessage(message)), domain: '127.0.0.1:3000', uri: 'http://127.0.0.1:3000/', chainId: 100 }).catch((error: unknown) => error);
    expect(loopback).toBeInstanceOf(InvalidArgumentError);
    expect(loopback).toMatchObject({ code: 'domain_blocked_by_waf' });
    expect(prompted).toBe(false);
  });
});
