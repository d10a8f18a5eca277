// A device clock that is off from the service's: a token's expiry is anchored to this device's
// clock when the token arrives (the local receipt time plus its lifetime, exp - iat), so that a
// clock running fast does not make a just-issued token look due (a second wallet prompt right
// after each sign-in), and tokens restored by the app are read sensibly. Also: the renewal
// ahead of expiry of a wallet that has not registered yet (hasSignedUp: false) never prompts the
// wallet. All against @capi/sandbox over loopback HTTP, its clock set apart from this device's
// with its `now` option; the device's own clock is moved with vitest's faked Date only.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createPartnerClient, readJwtExpiry, signerFromViemAccount, TokenManager, type PartnerClient, type TokenSet } from '../src/index.js';
import { registerUser, requestEmailVerification, requestLegacyPhoneVerification } from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await sandbox?.close();
  sandbox = undefined;
});

const MINUTE = 60_000;
const ACCESS_TOKEN_LIFETIME_MS = 15 * MINUTE;
const SMART_ACCOUNT = { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' };

/** A sandbox whose clock is `deviceAheadByMs` behind this device's (a device clock running fast; negative: running slow). */
async function skewedSandbox(generation: 'older' | 'newer', deviceAheadByMs: number, users = [{ signInWallets: [registeredAccount.address], smartWallets: [SMART_ACCOUNT] }]) {
  sandbox = await startSandbox({ generation, users, now: () => Date.now() - deviceAheadByMs });
  return sandbox;
}

const refreshAt = (baseUrl: string, calls: { refresh: number }) => async (refreshToken: string, { signal }: { signal: AbortSignal }): Promise<TokenSet> => {
  calls.refresh += 1;
  const response = await fetch(`${baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }), signal });
  if (!response.ok) throw new Error(`refresh refused: HTTP ${response.status}`);
  return (await response.json()) as TokenSet;
};

/** A client whose TokenManager signs `wallet` in again (a wallet prompt, counted) and, given `refresh`, refreshes. */
function countingClient(baseUrl: string, wallet = registeredAccount, options: { refresh?: (refreshToken: string, options: { signal: AbortSignal }) => Promise<TokenSet>; tokens?: TokenSet; ttlInSeconds?: number } = {}) {
  const calls = { prompts: 0, refresh: 0 };
  const signer = signerFromViemAccount(wallet);
  const params = { address: signer.address, signMessage: (message: string) => ((calls.prompts += 1), signer.signMessage(message)), ...SIGN_IN_PAGE, ttlInSeconds: options.ttlInSeconds };
  let client: PartnerClient;
  const tokenManager = new TokenManager({ tokens: options.tokens, refresh: options.refresh, reauthenticate: ({ signal }) => client.signInWithEthereum({ ...params, signal }) });
  client = createPartnerClient({ baseUrl, tokenManager, retries: { baseDelayMs: 1 } });
  return { client, tokenManager, calls, signIn: () => client.signInWithEthereum(params) };
}

/** That `date` lies `ms` from now on this device's clock, give or take the test's own run time (never asserted as a timing). */
const expectFromNow = (date: Date | undefined, ms: number) => {
  expect(date).toBeInstanceOf(Date);
  expect(date!.getTime()).toBeGreaterThan(Date.now() + ms - MINUTE);
  expect(date!.getTime()).toBeLessThanOrEqual(Date.now() + ms);
};

describe("a device clock running fast: a token's expiry is counted on this device's clock from its arrival", () => {
  it('newer generation, 13 minutes fast: the sign-in lasts its 15 minutes, and reads prompt no second sign-in', async () => {
    const { baseUrl } = await skewedSandbox('newer', 13 * MINUTE);
    const { client, tokenManager, calls, signIn } = countingClient(baseUrl);
    const result = await signIn();
    // Its exp read on this device's clock is 2 minutes away; its lifetime (exp - iat) is 15 minutes.
    expect(readJwtExpiry(result.token)!.getTime()).toBeLessThan(Date.now() + 3 * MINUTE);
    expectFromNow(result.expiresAt, ACCESS_TOKEN_LIFETIME_MS);
    expect(tokenManager.expiresAt).toEqual(result.expiresAt);
    for (let call = 0; call < 3; call += 1) await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(calls.prompts).toBe(1); // the sign-in only
  });

  it('older generation, 58 minutes fast: a one-hour token lasts its hour, and requests prompt no second sign-in', async () => {
    const { baseUrl } = await skewedSandbox('older', 58 * MINUTE);
    const { client, calls, signIn } = countingClient(baseUrl, registeredAccount, { ttlInSeconds: 3600 });
    const { expiresAt } = await signIn();
    expectFromNow(expiresAt, 3_600_000);
    for (let call = 0; call < 3; call += 1) await expect(requestLegacyPhoneVerification(client, { phone: '+15555550123' })).resolves.toBeDefined();
    expect(calls.prompts).toBe(1);
  });

  it('a refreshed token is anchored too: refreshed once ahead of expiry, then used for its 15 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { baseUrl } = await skewedSandbox('newer', 13 * MINUTE);
    const calls = { refresh: 0 };
    const { client, tokenManager, calls: prompts, signIn } = countingClient(baseUrl, registeredAccount, { refresh: refreshAt(baseUrl, calls) });
    await signIn();
    await client.getDailyLimit();
    expect(calls.refresh).toBe(0);
    vi.setSystemTime(Date.now() + 13 * MINUTE); // both clocks move: within renewBeforeMs of the local expiry
    await client.getDailyLimit();
    expect(calls.refresh).toBe(1);
    expectFromNow(tokenManager.expiresAt, ACCESS_TOKEN_LIFETIME_MS);
    for (let call = 0; call < 3; call += 1) await client.getDailyLimit();
    expect(calls.refresh).toBe(1);
    expect(prompts.prompts).toBe(1);
  });

  it('a received token without iat, or with one not before exp, falls back to exp', async () => {
    const jwt = (claims: Record<string, unknown>) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
    const exp = Math.floor(Date.now() / 1000) + 600;
    for (const claims of [{ exp }, { iat: 'yesterday', exp }, { iat: exp + 60, exp }]) {
      const tokenManager = new TokenManager({
        tokens: { token: jwt({ exp: 1 }), refreshToken: 'refresh-0' }, // expired: the first getToken refreshes
        refresh: async () => ({ token: jwt(claims), refreshToken: 'refresh-1' }),
      });
      await tokenManager.getToken();
      expect(tokenManager.expiresAt).toEqual(new Date(exp * 1000));
    }
  });
});

describe('tokens the app restores (setTokens(), the tokens option)', () => {
  it('an expiresAt given with them is taken as given: the app\'s own figure on this device\'s clock', async () => {
    const { baseUrl } = await skewedSandbox('newer', 13 * MINUTE);
    const { signIn } = countingClient(baseUrl);
    const saved = await signIn();
    const restored = new TokenManager({ tokens: { ...saved, expiresAt: new Date(saved.expiresAt.getTime()).toISOString() as never } });
    expect(restored.expiresAt).toEqual(saved.expiresAt);
    const other = new TokenManager();
    other.setTokens(saved);
    expect(other.expiresAt).toEqual(saved.expiresAt);
  });

  it('without expiresAt: its exp, but never later than its lifetime from now (a device clock running slow)', async () => {
    // The device is 20 minutes behind the service: the token's exp reads 35 minutes away.
    const { baseUrl } = await skewedSandbox('newer', -20 * MINUTE);
    const { signIn } = countingClient(baseUrl);
    const { token, refreshToken } = await signIn();
    expect(readJwtExpiry(token)!.getTime()).toBeGreaterThan(Date.now() + 30 * MINUTE);
    const restored = new TokenManager({ tokens: { token, refreshToken } });
    expectFromNow(restored.expiresAt, ACCESS_TOKEN_LIFETIME_MS);
  });

  it('without expiresAt, on a device clock running fast: its exp (the token may be older than this restore)', async () => {
    const { baseUrl } = await skewedSandbox('newer', 13 * MINUTE);
    const { signIn } = countingClient(baseUrl);
    const { token, refreshToken } = await signIn();
    const restored = new TokenManager({ tokens: { token, refreshToken } });
    expect(restored.expiresAt).toEqual(readJwtExpiry(token));
  });
});

describe('a wallet that has not registered yet (hasSignedUp: false), its token near expiry', () => {
  it('is not renewed ahead of time by reauthenticate (no wallet prompt): the token is kept for registration', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const first = countingClient(sandbox.baseUrl, wallet);
    const saved = await first.signIn();
    // Restored with 2 minutes left, within renewBeforeMs (3 minutes).
    const { client, tokenManager, calls } = countingClient(sandbox.baseUrl, wallet, { tokens: { ...saved, expiresAt: new Date(Date.now() + 2 * MINUTE) } });
    await requestEmailVerification(client, { email: 'near@example.com' });
    expect(calls.prompts).toBe(0);
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'near@example.com')!.code;
    await expect(registerUser(client, { email: 'near@example.com', otp })).resolves.toMatchObject({ id: expect.any(String) });
    expect(calls.prompts).toBe(0);
    expect(await tokenManager.getToken()).toBe(saved.token);
  });

  it('is renewed ahead of time by refresh when there is one (no wallet prompt)', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const saved = await countingClient(sandbox.baseUrl, wallet).signIn();
    const refreshes = { refresh: 0 };
    const { client, tokenManager, calls } = countingClient(sandbox.baseUrl, wallet, { refresh: refreshAt(sandbox.baseUrl, refreshes), tokens: { ...saved, expiresAt: new Date(Date.now() + 2 * MINUTE) } });
    await requestEmailVerification(client, { email: 'near@example.com' });
    expect(refreshes.refresh).toBe(1);
    expect(calls.prompts).toBe(0);
    expect(tokenManager.hasSignedUp).toBe(false);
    expectFromNow(tokenManager.expiresAt, ACCESS_TOKEN_LIFETIME_MS);
  });

  it('once it has expired on this device\'s clock, it is renewed as any other (reauthenticate)', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const saved = await countingClient(sandbox.baseUrl, wallet).signIn();
    const { tokenManager, calls } = countingClient(sandbox.baseUrl, wallet, { tokens: { ...saved, expiresAt: new Date(Date.now() - 1_000) } });
    const token = await tokenManager.getToken();
    expect(calls.prompts).toBe(1);
    expect(token).not.toBe(saved.token);
  });
});
