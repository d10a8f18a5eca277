// Token renewals that never settle, fail ahead of expiry, or fail in the background, over real
// HTTP on loopback (the partner-service double, and @capi/sandbox for registration). Callbacks
// are held on gates the tests open, and the bounds are options given small values: the order of
// events is fixed without asserting any timing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  AbortError,
  createPartnerClient,
  InvalidArgumentError,
  signerFromViemAccount,
  TimeoutError,
  TokenManager,
  TokenRenewalError,
  type PartnerClient,
  type TokenSet,
} from '../src/index.js';
import { registerUser, requestEmailVerification, requestLegacyPhoneVerification } from '../src/onboarding.js';
import { LEGACY_PHONE_VERIFICATION_PATH, LIMIT_PATH, REFRESH_PATH, startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let service: PartnerService | undefined;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await service?.close();
  await sandbox?.close();
  service = undefined;
  sandbox = undefined;
});

const never = <T>() => new Promise<T>(() => undefined);
const caught = (promise: Promise<unknown>) => promise.then((value) => value, (error: unknown) => error);
const signIn = (client: PartnerClient) => client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
const limitRequests = () => service!.requests.filter((request) => request.path === LIMIT_PATH);

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function newerService(options: { accessTokenLifetimeSeconds?: number } = {}): Promise<PartnerService> {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address], ...options });
  return service;
}

describe('a renewal that never settles does not block the client', () => {
  it('a request waits for a wallet prompt longer than its timeoutMs (a person reads it); the prompt itself is bounded by reauthenticateTimeoutMs', async () => {
    const { url, issueAccessToken } = await newerService();
    const prompt = gate();
    let prompted!: () => void;
    const opened = new Promise<void>((resolve) => (prompted = resolve));
    const client = createPartnerClient({
      baseUrl: url,
      timeoutMs: 50,
      tokenManager: new TokenManager({ reauthenticate: async () => (prompted(), await prompt.opened, issueAccessToken(registeredAccount.address, 3600)) }),
    });
    const limit = client.getDailyLimit();
    await opened;
    // Longer than timeoutMs: the wait is for the person, not for the service.
    await new Promise((resolve) => setTimeout(resolve, 120));
    prompt.open();
    await expect(limit).resolves.toMatchObject({ amount: 1_000_000 });
  });

  it('getToken({ signal }) ends its own wait with an AbortError that says it waited for a token renewal; the renewal goes on', async () => {
    const { issueAccessToken } = await newerService();
    const done = gate();
    const tokenManager = new TokenManager({ reauthenticate: async () => (await done.opened, issueAccessToken(registeredAccount.address, 3600)) });
    const error = await caught(tokenManager.getToken({ signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).message).toMatch(/waiting for a token renewal.*goes on/);
    const next = tokenManager.getToken();
    done.open();
    await expect(next).resolves.toEqual(expect.any(String));
  });

  it("the caller's signal ends the wait with an AbortError that says it waited for a token renewal", async () => {
    const { url } = await newerService();
    const controller = new AbortController();
    const client = createPartnerClient({ baseUrl: url, tokenManager: new TokenManager({ reauthenticate: () => (controller.abort(), never()) }) });
    const error = await caught(client.getDailyLimit({ signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).message).toMatch(/waiting for a token renewal/);
  });

  it('a reauthenticate that does not settle within reauthenticateTimeoutMs is abandoned with TokenRenewalError; the next request starts a new renewal', async () => {
    const { url, issueAccessToken } = await newerService();
    const signals: AbortSignal[] = [];
    const tokenManager = new TokenManager({
      reauthenticateTimeoutMs: 50,
      reauthenticate: async ({ signal }) => (signals.push(signal), signals.length === 1 ? never() : issueAccessToken(registeredAccount.address, 3600)),
    });
    const client = createPartnerClient({ baseUrl: url, tokenManager });
    const first = await caught(client.getDailyLimit());
    expect(first).toBeInstanceOf(TokenRenewalError);
    expect(first).toMatchObject({ code: 'token_renewal_timeout' });
    expect((first as Error).message).toMatch(/reauthenticate callback did not settle within 50 ms/);
    expect((first as Error).message).toMatch(/reauthenticateTimeoutMs/);
    expect(signals[0]!.aborted).toBe(true); // the abandoned callback is told so
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(signals).toHaveLength(2);
  });

  it('a refresh that does not settle within refreshTimeoutMs is abandoned, its refresh token is not offered again, and reauthenticate is tried', async () => {
    const { url } = await newerService();
    const calls = { refresh: 0, reauthenticate: 0 };
    let client: PartnerClient;
    const tokenManager = new TokenManager({
      refreshTimeoutMs: 50,
      refresh: () => (calls.refresh++, never<TokenSet>()),
      reauthenticate: () => (calls.reauthenticate++, signIn(client)),
    });
    client = createPartnerClient({ baseUrl: url, tokenManager });
    await signIn(client);
    service!.revokeAccessTokens();
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(calls).toEqual({ refresh: 1, reauthenticate: 1 });
  });

  it('without reauthenticate, the abandoned refresh is the request\'s TokenRenewalError, naming refreshTimeoutMs', async () => {
    const { url } = await newerService();
    const client = createPartnerClient({ baseUrl: url, tokenManager: new TokenManager({ refreshTimeoutMs: 50, refresh: never }) });
    await signIn(client);
    service!.revokeAccessTokens();
    const error = await caught(client.getDailyLimit());
    expect(error).toMatchObject({ name: 'TokenRenewalError', code: 'token_renewal_timeout', message: expect.stringMatching(/refresh callback did not settle within 50 ms.*refreshTimeoutMs/) });
  });

  it('registerUser returns the registered user when its signal fires during the refresh that follows', async () => {
    sandbox = await startSandbox({ generation: 'newer', users: [] });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const controller = new AbortController();
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager: new TokenManager({ refresh: () => (controller.abort(), never()) }) });
    await client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
    await requestEmailVerification(client, { email: 'ada@example.com' });
    const otp = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'ada@example.com')!.code;
    await expect(registerUser(client, { email: 'ada@example.com', otp }, { signal: controller.signal })).resolves.toMatchObject({ email: 'ada@example.com' });
  });

  it.each([
    [{ refreshTimeoutMs: 0 }, 'refreshTimeoutMs'],
    [{ reauthenticateTimeoutMs: -1 }, 'reauthenticateTimeoutMs'],
    [{ reauthenticateTimeoutMs: '300000' }, 'reauthenticateTimeoutMs'],
  ])('checks the bounds: rejects %o', (options, argument) => {
    expect(() => new TokenManager(options as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});

describe('a renewal and its callbacks, where the caller or the session has moved on', () => {
  it('a request whose signal has already aborted starts no renewal (no wallet prompt) and leaves no unhandled rejection', async () => {
    const { url } = await newerService();
    let prompts = 0;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const tokenManager = new TokenManager({ reauthenticate: async () => { prompts++; throw new Error('user rejected'); } });
      const client = createPartnerClient({ baseUrl: url, tokenManager });
      expect(await caught(client.getDailyLimit({ signal: AbortSignal.abort() }))).toBeInstanceOf(AbortError);
      expect(await caught(tokenManager.renewAfterUnauthorized(undefined, 'TokenExpired', { signal: AbortSignal.abort() }))).toBeInstanceOf(AbortError);
      await tokenManager.refreshAfterRegistration({ signal: AbortSignal.abort() });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(prompts).toBe(0);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a callback that honours its signal and outlasts its bound is reported as token_renewal_timeout, not as its own abort', async () => {
    const { url } = await newerService();
    const tokenManager = new TokenManager({
      refreshTimeoutMs: 50,
      // As the README's refresh does: fetch with the signal, which rejects with an AbortError when aborted.
      refresh: (_refreshToken, { signal }) => new Promise<TokenSet>((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')));
      }),
    });
    const client = createPartnerClient({ baseUrl: url, tokenManager });
    await signIn(client);
    service!.revokeAccessTokens();
    const error = await caught(client.getDailyLimit());
    expect(error).toMatchObject({ name: 'TokenRenewalError', code: 'token_renewal_timeout', message: expect.stringMatching(/refreshTimeoutMs/) });
  });

  it("clear() aborts the signal of the callback still running, so that it can tell its tokens will be discarded (and not persist them)", async () => {
    const { url } = await newerService();
    const returned = gate();
    let signalOfRefresh: AbortSignal | undefined;
    const tokenManager = new TokenManager({
      refresh: async (_refreshToken, { signal }) => {
        signalOfRefresh = signal;
        await returned.opened;
        return { token: 'header.eyJ9.sig', refreshToken: 'rotated' };
      },
    });
    const client = createPartnerClient({ baseUrl: url, tokenManager });
    await signIn(client);
    const renewing = caught(tokenManager.refreshAfterRegistration());
    while (signalOfRefresh === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(signalOfRefresh.aborted).toBe(false);
    tokenManager.clear();
    expect(signalOfRefresh.aborted).toBe(true);
    returned.open();
    await renewing;
    expect(tokenManager.hasToken).toBe(false);
  });
});

describe('a failed renewal ahead of expiry is not tried again for the same token', () => {
  it('one wallet prompt, not one per request: the still-valid token is used until a 401', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const token = service.issueAccessToken(registeredAccount.address, 120); // within the default 3 minutes
    const rejected = Object.assign(new Error('User rejected the request.'), { name: 'UserRejectedRequestError' });
    let prompts = 0;
    const client = createPartnerClient({ baseUrl: service.url, tokenManager: new TokenManager({ tokens: token, reauthenticate: () => (prompts++, Promise.reject(rejected)) }) });
    for (let request = 0; request < 4; request += 1) await requestLegacyPhoneVerification(client, { phone: '+15555550123' });
    expect(prompts).toBe(1);
    expect(service.requests.map((request) => request.authorization)).toEqual(Array(4).fill(`Bearer ${token}`));

    service.revokeAccessTokens(); // a 401 renews again
    const error = await caught(requestLegacyPhoneVerification(client, { phone: '+15555550123' }));
    expect(error).toMatchObject({ name: 'TokenRenewalError', cause: rejected });
    expect(prompts).toBe(2);
    expect(service.count('POST', LEGACY_PHONE_VERIFICATION_PATH)).toBe(5);
  });
});

describe('a request that joins a refresh-only renewal of a still-valid token which fails uses that token', () => {
  it('refreshAfterRegistration fails while a request waits: the request goes with the old token, no wallet prompt', async () => {
    const { url, issueAccessToken } = await newerService();
    const token = issueAccessToken(registeredAccount.address, 60); // due, still valid
    const started = gate();
    const release = gate();
    let prompts = 0;
    const tokenManager = new TokenManager({
      tokens: { token, refreshToken: 'refresh-1' },
      refresh: async () => (started.open(), await release.opened, Promise.reject(new Error('refresh endpoint 503'))),
      reauthenticate: async () => (prompts++, issueAccessToken(registeredAccount.address, 3600)),
    });
    const client = createPartnerClient({ baseUrl: url, tokenManager });
    const registration = tokenManager.refreshAfterRegistration();
    await started.opened;
    const limit = client.getDailyLimit();
    release.open();
    await expect(limit).resolves.toMatchObject({ amount: 1_000_000 });
    await registration;
    expect(limitRequests().map((request) => request.authorization)).toEqual([`Bearer ${token}`]);
    expect(prompts).toBe(0);
  });
});

describe('a refresh that failed is not forgotten', () => {
  it('the 401 at expiry is a TokenRenewalError whose cause is the refresh failure, saying that the refresh failed and why', async () => {
    const { url } = await newerService({ accessTokenLifetimeSeconds: 60 }); // due at once, still valid
    // Refused (an answer that was not ok): a refresh that got no answer keeps its refresh token (token-lifecycle.test.ts).
    const lost = new Error('refresh refused: HTTP 401');
    let refreshes = 0;
    const client = createPartnerClient({ baseUrl: url, tokenManager: new TokenManager({ refresh: () => (refreshes++, Promise.reject(lost)) }) });
    const { token } = await signIn(client);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 }); // the early refresh failed: the valid token serves
    expect(limitRequests().at(-1)!.authorization).toBe(`Bearer ${token}`);

    service!.revokeAccessTokens(); // the token has expired on the service
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'token_renewal_failed', cause: lost });
    expect((error as Error).message).toMatch(/refresh callback failed \(refresh refused: HTTP 401\)/);
    expect((error as Error).message).not.toMatch(/give the client a TokenManager with a reauthenticate callback/);
    expect(refreshes).toBe(1); // its refresh token was never offered again
  });
});

describe('refuses a refresh result it would misread', () => {
  it.each([
    ['no refreshToken (snake_case refresh_token)', (set: TokenSet) => ({ token: set.token, refresh_token: set.refreshToken }), 'refreshToken'],
    ['expiresAt in epoch seconds', (set: TokenSet) => ({ ...set, expiresAt: Math.floor(Date.now() / 1000) + 900 }), 'expiresAt'],
  ])('%s: TokenRenewalError whose cause names the field', async (_case, reshape, field) => {
    const { url } = await newerService();
    const refresh = async (refreshToken: string) => {
      const response = await fetch(`${url}${REFRESH_PATH}`, { method: 'POST', body: JSON.stringify({ refreshToken }) });
      return reshape((await response.json()) as TokenSet) as TokenSet;
    };
    const client = createPartnerClient({ baseUrl: url, tokenManager: new TokenManager({ refresh }) });
    await signIn(client);
    service!.revokeAccessTokens();
    const error = await caught(client.getDailyLimit());
    expect(error).toMatchObject({ name: 'TokenRenewalError', code: 'token_renewal_failed' });
    expect((error as Error).cause).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).cause).toMatchObject({ argument: field });
    expect((error as Error).message).toContain('{ token, refreshToken, expiresAt? }');
  });
});

describe('an Authorization header given on a raw call is sent as given', () => {
  it('the TokenManager\'s token does not replace it', async () => {
    const { url, issueAccessToken } = await newerService();
    const held = issueAccessToken(registeredAccount.address, 3600);
    const given = issueAccessToken(registeredAccount.address, 3600);
    const client = createPartnerClient({ baseUrl: url, tokenManager: new TokenManager({ tokens: held }) });
    const { response } = await client.raw.GET('/user-api/user/account/limit', { headers: { Authorization: `Bearer ${given}` } });
    expect(response.status).toBe(200);
    expect(limitRequests().map((request) => request.authorization)).toEqual([`Bearer ${given}`]);
  });
});

describe('a newer-generation token without exp', () => {
  it('is taken to expire after the newer generation\'s 15 minutes, not ttlInSeconds', async () => {
    const { url, script } = await newerService();
    const payload = Buffer.from(JSON.stringify({ signerAddress: registeredAccount.address, hasSignedUp: true })).toString('base64url');
    script('POST', '/api/v1/auth/challenge', { status: 200, body: { token: `eyJhbGciOiJIUzI1NiJ9.${payload}.c2ln`, refreshToken: 'refresh-1' } });
    const client = createPartnerClient({ baseUrl: url });
    const { expiresAt } = await signIn(client);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 10 * 60_000);
  });

  // The same rule as sign-in for tokens from elsewhere: setTokens() (and the tokens option) and
  // what a refresh callback resolves to, without expiresAt. Before, those were renewed only
  // after a 401.
  const withoutExp = (n: number) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ hasSignedUp: true, n })).toString('base64url')}.c2ln`;
  const lastsFifteenMinutes = (expiresAt: Date | undefined) => {
    expect(expiresAt).toBeDefined();
    expect(expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
    expect(expiresAt!.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
  };
  afterEach(() => {
    vi.useRealTimers();
  });

  it('from setTokens() or the tokens option, with a refresh token: 15 minutes, and refreshed ahead of time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let refreshes = 0;
    const tokenManager = new TokenManager({
      tokens: { token: withoutExp(0), refreshToken: 'refresh-0' },
      refresh: async () => ((refreshes += 1), { token: withoutExp(refreshes), refreshToken: `refresh-${refreshes}`, expiresAt: new Date(Date.now() + 15 * 60_000) }),
    });
    lastsFifteenMinutes(tokenManager.expiresAt);
    tokenManager.setTokens({ token: withoutExp(0), refreshToken: 'refresh-0' });
    lastsFifteenMinutes(tokenManager.expiresAt);
    vi.setSystemTime(Date.now() + 13 * 60_000); // within renewBeforeMs (3 minutes) of the 15
    await expect(tokenManager.getToken()).resolves.toBe(withoutExp(1));
    expect(refreshes).toBe(1);
  });

  it('from a refresh callback, without expiresAt: 15 minutes, and refreshed ahead of time again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let refreshes = 0;
    const tokenManager = new TokenManager({
      tokens: { token: withoutExp(0), refreshToken: 'refresh-0', expiresAt: new Date(Date.now() - 1_000) }, // expired: the first request refreshes
      refresh: async () => ((refreshes += 1), { token: withoutExp(refreshes), refreshToken: `refresh-${refreshes}` }),
    });
    await expect(tokenManager.getToken()).resolves.toBe(withoutExp(1));
    lastsFifteenMinutes(tokenManager.expiresAt);
    vi.setSystemTime(Date.now() + 13 * 60_000);
    await expect(tokenManager.getToken()).resolves.toBe(withoutExp(2));
    expect(refreshes).toBe(2);
  });

  it('an older-generation token without exp (no refresh token) still has no expiry: renewed after a 401, as before', () => {
    const tokenManager = new TokenManager({ tokens: withoutExp(0) });
    expect(tokenManager.expiresAt).toBeUndefined();
    tokenManager.setTokens({ token: withoutExp(1) });
    expect(tokenManager.expiresAt).toBeUndefined();
  });
});
