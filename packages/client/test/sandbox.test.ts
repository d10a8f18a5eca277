// The same client behaviours against @capi/sandbox, the repository's stateful stand-in for the
// live service (its own SIWE checks, JWTs, limit store and webhook key service). The daily
// limit is the newer generation's (spec x-generation, service facts), so the sandbox runs the
// newer generation unless a test says otherwise; the older one answers the limit 404.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '@capi/sandbox';
import { recoverMessageAddress } from 'viem';
import {
  AuthenticationError,
  createPartnerClient,
  NotFoundError,
  errorFromResponse,
  ForbiddenError,
  LimitSupersededError,
  PartnerClientError,
  signerFromViemAccount,
  TokenManager,
  ValidationError,
  type PartnerClient,
  type TokenSet,
} from '../src/index.js';
import { checkLegacyPhoneVerification, requestEmailVerification, requestLegacyPhoneVerification } from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE, unregisteredAccount } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

/** The smart account of the registered wallet's user: on the newer generation the limit is the account's. */
const SMART_ACCOUNT = { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' };

/** A newer-generation sandbox (the limit's) whose registered wallet's user has its account, unless `options` says otherwise. */
async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registeredAccount.address], smartWallets: [SMART_ACCOUNT] }], limitSyncDelayMs: 50, ...options });
  return sandbox;
}

/** A client that signs in again through the sandbox when its TokenManager asks. */
function renewingClient(baseUrl: string, refresh?: (refreshToken: string) => Promise<TokenSet>) {
  const calls = { reauthenticate: 0, refresh: 0 };
  let client: PartnerClient;
  const tokenManager = new TokenManager({
    reauthenticate: () => {
      calls.reauthenticate += 1;
      return client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    },
    refresh: refresh
      ? (refreshToken) => {
          calls.refresh += 1;
          return refresh(refreshToken);
        }
      : undefined,
  });
  client = createPartnerClient({ baseUrl, tokenManager });
  return { client, calls };
}

describe('signs in, reads, sets and waits for the limit against the sandbox', () => {
  it('runs the whole partner flow', async () => {
    const { baseUrl, webhooksUrl, publicKey } = await start();
    const client = createPartnerClient({ baseUrl, webhooksUrl });
    const { token, expiresAt } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect(token.split('.')).toHaveLength(3);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000); // newer generation: 15 minutes

    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000, syncStatus: 'synced' });
    await expect(client.setDailyLimit({ amount: 42_000 })).resolves.toMatchObject({ amount: 42_000, syncStatus: 'pending' });
    await expect(client.waitForLimitSync({ pollIntervalMs: 10 })).resolves.toMatchObject({ amount: 42_000, syncStatus: 'synced' });
    await expect(client.getWebhookPublicKey()).resolves.toEqual({ success: true, publicKey });
  });
});

describe('waitForLimitSync({ amount }): the wait for this caller\'s own change', () => {
  async function twoTabs(limitSyncDelayMs = 50) {
    const { baseUrl } = await start({ limitSyncDelayMs });
    const tab = async () => {
      const client = createPartnerClient({ baseUrl });
      await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
      return client;
    };
    return [await tab(), await tab()] as const;
  }

  it('another tab set another amount after this one: the tab whose amount synced gets it, the other LimitSupersededError with the limit in force', async () => {
    const [first, second] = await twoTabs();
    const { amount } = await first.setDailyLimit({ amount: 10_000 });
    await second.setDailyLimit({ amount: 20_000 });
    const superseded = await first.waitForLimitSync({ amount, pollIntervalMs: 10 }).catch((caught: unknown) => caught);
    expect(superseded).toBeInstanceOf(LimitSupersededError);
    expect(superseded).toBeInstanceOf(PartnerClientError);
    expect(superseded).toMatchObject({ code: 'limit_superseded', limit: { amount: 20_000, currency: 'USD', syncStatus: 'synced' } });
    expect((superseded as Error).message).toContain('The daily limit synced is 20000 cents, not the 10000 cents this wait was for');
    await expect(second.waitForLimitSync({ amount: 20_000, pollIntervalMs: 10 })).resolves.toEqual({ amount: 20_000, currency: 'USD', syncStatus: 'synced' });
    // Without amount, as before: any synced limit.
    await expect(first.waitForLimitSync({ pollIntervalMs: 10 })).resolves.toMatchObject({ amount: 20_000, syncStatus: 'synced' });
  });

  it('while the other amount is still pending at the deadline: limit_sync_timeout saying so', async () => {
    const [first, second] = await twoTabs(60_000);
    await first.setDailyLimit({ amount: 10_000 });
    await second.setDailyLimit({ amount: 20_000 });
    const error = await first.waitForLimitSync({ amount: 10_000, timeoutMs: 300, pollIntervalMs: 50 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'limit_sync_timeout', message: expect.stringContaining('was 20000 cents, not the 10000 cents this wait was for, and still pending') });
  });

  it('refuses an amount that is not a whole number of cents before polling', async () => {
    const [client] = await twoTabs();
    for (const amount of ['10000', 1.5, null, new Number(5)]) {
      await expect(client.waitForLimitSync({ amount: amount as never })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'amount', code: 'invalid_option' });
    }
  });
});

describe('waitForLimitSync polls one last time at its timeoutMs, never giving up before it', () => {
  it('resolves with synced when the sync lands between the last regular poll and the deadline', async () => {
    const { baseUrl } = await start({ limitSyncDelayMs: 2_000 });
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await client.setDailyLimit({ amount: 42_000 });
    // The first poll answers pending; the next regular one (4 s) would land after the 3.5 s
    // deadline, the sync at 2 s: only a poll at the deadline reads it.
    await expect(client.waitForLimitSync({ timeoutMs: 3_500, pollIntervalMs: 4_000 })).resolves.toMatchObject({ amount: 42_000, syncStatus: 'synced' });
  });

  it('a limit still pending is reported only once timeoutMs has passed', async () => {
    const { baseUrl } = await start({ limitSyncDelayMs: 60_000 });
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await client.setDailyLimit({ amount: 42_000 });
    const started = Date.now();
    const error = await client.waitForLimitSync({ timeoutMs: 1_000, pollIntervalMs: 5_000 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'limit_sync_timeout', timeoutMs: 1_000, message: expect.stringContaining('was still pending after 1000 ms') });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });
});

describe('maps the sandbox refusals to typed errors', () => {
  it('signs in a wallet without an account (hasSignedUp false), and answers its limit read with AuthenticationError', async () => {
    const { baseUrl } = await start();
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.hasSignedUp).toBe(false);
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('the 401 on the limit of an unregistered wallet says to register (the email one-time password, then POST /user) and finish onboarding', async () => {
    const { baseUrl } = await start();
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.generation).toBe('newer');
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('register it with requestEmailVerification(), then registerUser() with the one-time password it emails (POST /user), then finish onboarding up to createAccount()');
  });

  // Reference 5 rule 1 and 9: the older generation answers only a signer that owns a registered
  // account, and has neither requestEmailVerification nor registerUser (it answers them 404).
  it('older generation: the 401 UserNotRegistered of an unregistered wallet says to use a registered wallet or have it registered out-of-band, never the newer registration', async () => {
    const { baseUrl } = await start({ generation: 'older', users: [{ signInWallets: [registeredAccount.address] }] });
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.generation).toBe('older');
    for (const call of [() => requestLegacyPhoneVerification(client, { phone: '+15555550123' }), () => checkLegacyPhoneVerification(client, { phone: '+15555550123', otp: '731904' })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: 'UserNotRegistered' });
      expect((error as Error).message).not.toContain('requestEmailVerification(), then registerUser()');
      expect((error as Error).message).not.toMatch(/requestEmailVerification|registerUser|POST \/user\b/);
      expect((error as Error).message).toContain('the older generation has no registration operation');
      expect((error as Error).message).toContain('sign in with a wallet that owns a registered account');
    }
    // The newer registration it does not advise is indeed missing there.
    const registration = await requestEmailVerification(client, { email: 'ada@example.com' }).catch((caught: unknown) => caught);
    expect(registration).toMatchObject({ name: 'NotFoundError', status: 404, code: 'NotFound' });
  });

  it('older generation: a wrong SMS one-time password says to ask for a new one with requestLegacyPhoneVerification(), not a newer-generation operation', async () => {
    const { baseUrl } = await start({ generation: 'older', users: [{ signInWallets: [registeredAccount.address] }] });
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await requestLegacyPhoneVerification(client, { phone: '+15555550123' });
    const error = await checkLegacyPhoneVerification(client, { phone: '+15555550199', otp: '000000' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, code: 'InvalidOneTimePassword' });
    expect((error as Error).message).toContain('Ask for a new one-time password (requestLegacyPhoneVerification())');
    expect((error as Error).message).not.toMatch(/requestEmailVerification|requestPhoneVerification\(\)/);
  });

  // Service facts: the limit endpoint belongs to the newer generation; reference 9: on the
  // older one the user sets the onchain daily limit with an onchain signature.
  it('older generation: every limit operation is a NotFoundError saying the limit is newer-generation and set onchain on the older one; the token is kept', async () => {
    const { baseUrl } = await start({ generation: 'older', users: [{ signInWallets: [registeredAccount.address] }] });
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect(client.tokenManager.generation).toBe('older');
    const says = 'the daily limit is a newer-generation operation; on the older generation the user sets it onchain';
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 42_000 }), () => client.waitForLimitSync({ timeoutMs: 1_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NotFound' });
      expect((error as Error).message.toLowerCase()).toContain(says);
    }
    // The token is kept: a 404 is no reason to sign in again.
    expect(client.tokenManager.hasToken).toBe(true);
  });

  it('answers a domain that is not whitelisted with ForbiddenError DomainNotWhitelisted', async () => {
    const { baseUrl } = await start();
    const client = createPartnerClient({ baseUrl });
    const error = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), domain: 'evil.example.org', uri: 'https://evil.example.org', chainId: 100 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).code).toBe('DomainNotWhitelisted');
  });

  it('answers an out-of-range amount sent through raw with ValidationError', async () => {
    const { baseUrl } = await start();
    const client = createPartnerClient({ baseUrl });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    const { error, response } = await client.raw.PUT('/user-api/user/account/limit', { body: { amount: 0, currency: 'USD' } });
    expect(response.status).toBe(422);
    expect(errorFromResponse(response, error)).toBeInstanceOf(ValidationError);
  });
});

describe('renews an expired token once and retries (sandbox clock moved past exp)', () => {
  it('older generation: signs in again', async () => {
    // The older generation has no limit: its own authenticated operation, the SMS verification.
    const { baseUrl } = await start({ generation: 'older', users: [{ signInWallets: [registeredAccount.address] }] });
    const { client, calls } = renewingClient(baseUrl);
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE, ttlInSeconds: 3600 });
    sandbox!.advanceClock(2 * 3_600_000);
    await Promise.all(Array.from({ length: 10 }, () => requestLegacyPhoneVerification(client, { phone: '+15555550123' })));
    expect(calls).toEqual({ reauthenticate: 1, refresh: 0 });
  });

  it('newer generation: refreshes with rotation', async () => {
    // With its account (a smart wallet): before createAccount the newer limit answers 409.
    const { baseUrl } = await start();
    const refresh = async (refreshToken: string): Promise<TokenSet> => {
      const response = await fetch(`${baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
      if (!response.ok) throw new Error(`refresh refused with ${response.status}`);
      return (await response.json()) as TokenSet;
    };
    const { client, calls } = renewingClient(baseUrl, refresh);
    const first = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect(first.refreshToken).toEqual(expect.any(String));
    sandbox!.advanceClock(16 * 60_000);
    await Promise.all(Array.from({ length: 10 }, () => client.getDailyLimit()));
    sandbox!.advanceClock(16 * 60_000);
    await client.getDailyLimit();
    expect(calls).toEqual({ reauthenticate: 0, refresh: 2 });
  });
});

describe('signs in with a smart account (EIP-1271) as with an EOA', () => {
  it('sends the smart account address and the signature its owner makes', async () => {
    const smartAccountAddress = '0x000000000000000000000000000000000000dEaD';
    const { baseUrl } = await start({
      users: [{ signInWallets: [smartAccountAddress], smartWallets: [{ address: smartAccountAddress, chainId: '100' }] }],
      // Stands in for the on-chain isValidSignature call: the owner key signed for this account.
      verifySmartAccountSignature: async ({ address, message, signature }) =>
        address.toLowerCase() === smartAccountAddress.toLowerCase() && (await recoverMessageAddress({ message, signature })) === registeredAccount.address,
    });
    const client = createPartnerClient({ baseUrl });
    const smartAccount = { address: smartAccountAddress, signMessage: ({ message }: { message: string }) => registeredAccount.signMessage({ message }) };
    await expect(client.signInWithEthereum({ ...signerFromViemAccount(smartAccount), ...SIGN_IN_PAGE })).resolves.toMatchObject({ token: expect.any(String) });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
  });
});
