import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { inspect } from 'node:util';
import {
  AuthenticationError,
  createPartnerClient,
  createTokenManager,
  errorFromResponse,
  InvalidArgumentError,
  receivedTokensExpiry,
  signerFromViemAccount,
  TokenManager,
  TokenRenewalError,
  type PartnerClient,
  type TokenSet,
} from '../src/index.js';
import { requestLegacyPhoneVerification } from '../src/onboarding.js';
import { LEGACY_PHONE_VERIFICATION_PATH, REFRESH_PATH, startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
const CHALLENGE_PATH = '/api/v1/auth/challenge';
let service: PartnerService;
afterEach(() => service?.close());

/** A client whose TokenManager signs in again through the real SIWE flow when asked. */
function clientWithReauthentication(options: { renewBeforeMs?: number; refreshTimeoutMs?: number; refresh?: (refreshToken: string, options: { signal: AbortSignal }) => Promise<TokenSet> } = {}) {
  const calls = { reauthenticate: 0, refresh: 0 };
  let client: PartnerClient;
  const tokenManager = new TokenManager({
    renewBeforeMs: options.renewBeforeMs,
    refreshTimeoutMs: options.refreshTimeoutMs,
    reauthenticate: () => {
      calls.reauthenticate += 1;
      return client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    },
    refresh: options.refresh
      ? (refreshToken, callbackOptions) => {
          calls.refresh += 1;
          return options.refresh!(refreshToken, callbackOptions);
        }
      : undefined,
  });
  client = createPartnerClient({ baseUrl: service.url, tokenManager, retries: { baseDelayMs: 1 } });
  return { client, tokenManager, calls };
}

/**
 * An authenticated request on the older generation, which has no limit endpoint (404): its own
 * authenticated operation, the SMS phone verification (`requestLegacyPhoneVerification`).
 */
const olderGenerationRequest = (client: PartnerClient) => requestLegacyPhoneVerification(client, { phone: '+15555550123' });

/** The newer generation's refresh call, which is outside the reference: here the test service's. */
async function refreshAtTestService(refreshToken: string): Promise<TokenSet> {
  const response = await fetch(`${service.url}${REFRESH_PATH}`, { method: 'POST', body: JSON.stringify({ refreshToken }) });
  if (!response.ok) throw new Error(`refresh refused with ${response.status}`);
  return (await response.json()) as TokenSet;
}

// The limit stands for any authenticated route: on the newer generation, whose operation it is
// (without a refresh callback, the newer generation's tokens are renewed by reauthenticate too).
describe('on 401, runs exactly one reauthentication however many requests failed, then retries each once', () => {
  it('20 concurrent requests hitting 401 cause one sign-in and 20 retries', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication();
    const first = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.revokeAccessTokens();

    const limits = await Promise.all(Array.from({ length: 20 }, () => client.getDailyLimit()));

    expect(limits).toHaveLength(20);
    expect(limits.every((limit) => limit.amount === 1_000_000)).toBe(true);
    expect(calls.reauthenticate).toBe(1);
    expect(service.count('POST', CHALLENGE_PATH)).toBe(2); // the first sign-in and the one renewal
    const limitRequests = service.requests.filter((request) => request.path === LIMIT_PATH);
    expect(limitRequests).toHaveLength(40);
    expect(limitRequests.filter((request) => request.authorization === `Bearer ${first.token}`)).toHaveLength(20);
    const retried = limitRequests.filter((request) => request.authorization !== `Bearer ${first.token}`);
    expect(retried).toHaveLength(20);
    expect(new Set(retried.map((request) => request.authorization)).size).toBe(1);
  });

  it('throws AuthenticationError when the retried request gets a 401 again', async () => {
    service = await startPartnerService({ generation: 'newer' });
    let reauthentications = 0;
    const tokenManager = createTokenManager({
      tokens: 'rejected-token-1',
      reauthenticate: async () => {
        reauthentications += 1;
        return 'rejected-token-2';
      },
    });
    const client = createPartnerClient({ baseUrl: service.url, tokenManager });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(reauthentications).toBe(1);
    expect(service.count('GET', LIMIT_PATH)).toBe(2);
  });

  it('throws AuthenticationError at once when nothing can renew the token', async () => {
    service = await startPartnerService({ generation: 'newer' });
    const client = createPartnerClient({ baseUrl: service.url });
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
    expect(service.count('GET', LIMIT_PATH)).toBe(1);
  });

  it('retries a PUT once after the renewal too, since the service never processed it', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication();
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.revokeAccessTokens();
    await expect(client.setDailyLimit({ amount: 25_000 })).resolves.toMatchObject({ amount: 25_000, syncStatus: 'pending' });
    expect(calls.reauthenticate).toBe(1);
    expect(service.count('PUT', LIMIT_PATH)).toBe(2);
  });

  it('wraps a failing reauthenticate callback in TokenRenewalError with the cause', async () => {
    service = await startPartnerService({ generation: 'newer' });
    const refusal = new Error('User rejected the request.');
    const client = createPartnerClient({
      baseUrl: service.url,
      tokenManager: new TokenManager({ tokens: 'stale-token-value', reauthenticate: () => Promise.reject(refusal) }),
    });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect((error as TokenRenewalError).cause).toBe(refusal);
    expect((error as Error).message).toMatch(/reauthenticate callback failed \(User rejected the request\.\)/);
  });
});

// Renewal through reauthenticate ahead of exp, the older generation's (1 h to 24 h tokens; the
// newer one refreshes, below): on the older generation, with its own authenticated operation.
describe('renews the token ahead of its expiry', () => {
  it('signs in again before a request when the token expires within renewBeforeMs', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const { client, tokenManager, calls } = clientWithReauthentication({ renewBeforeMs: 60_000 });
    const shortLived = service.issueAccessToken(registeredAccount.address, 30);
    tokenManager.setTokens(shortLived);

    await olderGenerationRequest(client);

    expect(calls.reauthenticate).toBe(1);
    const authenticatedRequest = service.requests.find((request) => request.path === LEGACY_PHONE_VERIFICATION_PATH)!;
    expect(authenticatedRequest.authorization).not.toBe(`Bearer ${shortLived}`);
    expect(tokenManager.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
  });

  it('keeps a token that is not yet due', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const { client, tokenManager, calls } = clientWithReauthentication({ renewBeforeMs: 60_000 });
    const token = service.issueAccessToken(registeredAccount.address, 600);
    tokenManager.setTokens(token);
    await olderGenerationRequest(client);
    expect(calls.reauthenticate).toBe(0);
    expect(service.requests[0]!.authorization).toBe(`Bearer ${token}`);
  });

  it('renews by default 3 minutes before exp: a token with 150 s left is renewed, one with 240 s is kept', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const { client, tokenManager, calls } = clientWithReauthentication();
    const kept = service.issueAccessToken(registeredAccount.address, 240);
    tokenManager.setTokens(kept);
    await olderGenerationRequest(client);
    expect(calls.reauthenticate).toBe(0);
    expect(service.requests.at(-1)!.authorization).toBe(`Bearer ${kept}`);

    tokenManager.setTokens(service.issueAccessToken(registeredAccount.address, 150));
    await olderGenerationRequest(client);
    expect(calls.reauthenticate).toBe(1);
    expect(tokenManager.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
  });

  it('signs in lazily when there is no token yet', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication();
    await olderGenerationRequest(client);
    expect(calls.reauthenticate).toBe(1);
    expect(service.requests.map((request) => request.path)).toEqual(['/api/v1/auth/nonce', CHALLENGE_PATH, LEGACY_PHONE_VERIFICATION_PATH]);
  });

  it('uses the still-valid token when an early renewal fails', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const token = service.issueAccessToken(registeredAccount.address, 30);
    const tokenManager = new TokenManager({ tokens: token, reauthenticate: () => Promise.reject(new Error('wallet closed')) });
    const client = createPartnerClient({ baseUrl: service.url, tokenManager });
    await expect(olderGenerationRequest(client)).resolves.toMatchObject({ sentTo: '+15555550123', expiresAt: expect.any(String) });
    expect(service.requests[0]!.authorization).toBe(`Bearer ${token}`);
  });
});

describe('newer generation: refreshes the 15-minute access token with a rotating refresh token', () => {
  it('infers the generation from the refresh token and refreshes once on 401, with rotation', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const seen: string[] = [];
    const { client, tokenManager, calls } = clientWithReauthentication({
      refresh: (refreshToken) => {
        seen.push(refreshToken);
        return refreshAtTestService(refreshToken);
      },
    });
    const signedIn = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect(signedIn.refreshToken).toEqual(expect.any(String));
    expect(tokenManager.generation).toBe('newer');
    // 15-minute access token.
    expect(signedIn.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(900_000);

    service.revokeAccessTokens();
    await Promise.all(Array.from({ length: 5 }, () => client.getDailyLimit()));
    service.revokeAccessTokens();
    await client.getDailyLimit();

    expect(calls.refresh).toBe(2);
    expect(calls.reauthenticate).toBe(0);
    // Each refresh used the newest refresh token: the first from sign-in, the second from the first refresh.
    expect(seen[0]).toBe(signedIn.refreshToken);
    expect(seen[1]).not.toBe(seen[0]);
    expect(service.count('POST', REFRESH_PATH)).toBe(2);
  });

  it('refreshes ahead of expiry', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address], accessTokenLifetimeSeconds: 30 });
    const { client, calls } = clientWithReauthentication({ refresh: refreshAtTestService });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await client.getDailyLimit();
    expect(calls.refresh).toBe(1);
    expect(service.requests.filter((request) => request.path === LIMIT_PATH && request.authorization === undefined)).toHaveLength(0);
  });

  it('falls back to signing in when the refresh token is refused, and never offers it again', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication({ refresh: () => Promise.reject(new Error('refresh token reused')) });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.revokeAccessTokens();
    await client.getDailyLimit();
    expect(calls.refresh).toBe(1);
    expect(calls.reauthenticate).toBe(1);
  });

  it('uses reauthenticate for the older generation even when refresh is configured', async () => {
    service = await startPartnerService({ generation: 'older', registeredAddresses: [registeredAccount.address] });
    const { client, tokenManager, calls } = clientWithReauthentication({ refresh: refreshAtTestService });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    expect(tokenManager.generation).toBe('older');
    service.revokeAccessTokens();
    await expect(olderGenerationRequest(client)).resolves.toMatchObject({ sentTo: '+15555550123' });
    expect(service.count('POST', LEGACY_PHONE_VERIFICATION_PATH)).toBe(2); // refused with the revoked token, then sent again
    expect(calls).toEqual({ reauthenticate: 1, refresh: 0 });
  });
});

/**
 * The refresh call as the README writes it (fetch, throw when the answer is not ok), over a
 * network the test switches: `up` (the test service), `down` (a closed port: fetch rejects with
 * TypeError 'fetch failed', no answer) or `hanging` (a server that accepts and never answers).
 */
async function switchableNetwork() {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const hanging: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const hangingUrl = `http://127.0.0.1:${(hanging.address() as { port: number }).port}`;
  const network = {
    state: 'up' as 'up' | 'down' | 'hanging',
    offered: [] as string[],
    refresh: async (refreshToken: string, { signal }: { signal: AbortSignal }): Promise<TokenSet> => {
      network.offered.push(refreshToken);
      const base = { up: service.url, down: closedUrl, hanging: hangingUrl }[network.state];
      const response = await fetch(`${base}${REFRESH_PATH}`, { method: 'POST', body: JSON.stringify({ refreshToken }), signal });
      if (!response.ok) throw new Error(`refresh refused: HTTP ${response.status}`);
      return (await response.json()) as TokenSet;
    },
    close: () => (hanging.closeAllConnections(), new Promise<void>((resolve) => hanging.close(() => resolve()))),
  };
  return network;
}

describe('a refresh that gets no answer keeps its refresh token; one the service refuses drops it', () => {
  // The partner's refresh endpoint, behind a network the test takes down, hangs or brings back.
  let network: Awaited<ReturnType<typeof switchableNetwork>>;
  beforeEach(async () => {
    network = await switchableNetwork();
  });
  afterEach(() => network.close());

  it('no answer (fetch to a closed port): no wallet prompt, the request fails with token_refresh_unreachable, and the next request refreshes with the SAME refresh token', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication({ refresh: network.refresh });
    const signedIn = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.revokeAccessTokens(); // the access token has expired
    network.state = 'down';

    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'token_refresh_unreachable' });
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/could not be reached/);
    expect((error as Error).message).toMatch(/refresh token is kept/);
    expect(calls.reauthenticate).toBe(0);

    network.state = 'up';
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(network.offered).toEqual([signedIn.refreshToken, signedIn.refreshToken]);
    expect(service.count('POST', REFRESH_PATH)).toBe(1);
    expect(calls.reauthenticate).toBe(0);
  });

  it('no answer ahead of expiry: the still-valid token serves, and the kept refresh token renews it after the 401', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address], accessTokenLifetimeSeconds: 60 }); // due at once, still valid
    const { client, calls } = clientWithReauthentication({ refresh: network.refresh });
    const signedIn = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    network.state = 'down';
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(service.requests.filter((request) => request.path === LIMIT_PATH).at(-1)!.authorization).toBe(`Bearer ${signedIn.token}`);

    network.state = 'up';
    service.revokeAccessTokens();
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(network.offered).toEqual([signedIn.refreshToken, signedIn.refreshToken]);
    expect(calls.reauthenticate).toBe(0);
  });

  it('refreshTimeoutMs running out is not taken for no answer (the service may have rotated the token and answered late): the refresh token is dropped and reauthenticate signs in', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication({ refresh: network.refresh, refreshTimeoutMs: 100 });
    const signedIn = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.revokeAccessTokens();
    network.state = 'hanging';

    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(calls.reauthenticate).toBe(1);
    network.state = 'up';
    service.revokeAccessTokens();
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    // The refresh token of the abandoned refresh was never offered again.
    expect(network.offered).toHaveLength(2);
    expect(network.offered[1]).not.toBe(signedIn.refreshToken);
    expect(calls.reauthenticate).toBe(1);
  });

  it('refused (401: another party spent the refresh token, ending the session): it is dropped and reauthenticate signs in again', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const { client, calls } = clientWithReauthentication({ refresh: network.refresh });
    const signedIn = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    await refreshAtTestService(signedIn.refreshToken!); // spent elsewhere: offering it again ends the session
    service.revokeAccessTokens();

    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(calls).toEqual({ refresh: 1, reauthenticate: 1 });
    service.revokeAccessTokens();
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(network.offered).toHaveLength(2);
    expect(network.offered[1]).not.toBe(signedIn.refreshToken); // the refused one was never offered again
    expect(calls.reauthenticate).toBe(1);
  });
});

describe('tells a wallet that has not registered to register', () => {
  const unsigned = (claims: Record<string, unknown>) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3_600, ...claims })).toString('base64url')}.c2ln`;

  it('a 401 on the limit with hasSignedUp false says to register; with hasSignedUp true it says to sign in again', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    service.script('GET', LIMIT_PATH, { status: 401, body: { message: 'Unauthorized' } });
    const client = createPartnerClient({ baseUrl: service.url });
    client.tokenManager.setTokens(unsigned({ hasSignedUp: false }));
    expect(client.tokenManager.hasSignedUp).toBe(false);
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    // The limit is the newer generation's (an older deployment answers it 404): register with POST /user.
    expect((error as Error).message).toContain('has not registered a user yet (hasSignedUp: false): register it with requestEmailVerification(), then registerUser() with the one-time password it emails (POST /user), then finish onboarding up to createAccount()');
    // Still known after the 401 dropped the token.
    expect(client.tokenManager.hasSignedUp).toBe(false);

    service.script('PUT', LIMIT_PATH, { status: 401, body: { message: 'Unauthorized' } });
    client.tokenManager.setTokens(unsigned({ hasSignedUp: true, userId: 'u1' }));
    const registered = await client.setDailyLimit({ amount: 100 }).catch((caught: unknown) => caught);
    expect(registered).toBeInstanceOf(AuthenticationError);
    expect((registered as Error).message).not.toContain('register');
    client.tokenManager.clear();
    expect(client.tokenManager.hasSignedUp).toBeUndefined();

    // The same 401 for a client that knows it is on the newer generation.
    service.script('GET', LIMIT_PATH, { status: 401, body: { message: 'Unauthorized' } });
    const newer = createPartnerClient({ baseUrl: service.url, tokenManager: new TokenManager({ generation: 'newer' }) });
    newer.tokenManager.setTokens(unsigned({ hasSignedUp: false }));
    const unregistered = await newer.getDailyLimit().catch((caught: unknown) => caught);
    expect(unregistered).toBeInstanceOf(AuthenticationError);
    expect((unregistered as Error).message).toContain('has not registered a user yet (hasSignedUp: false): register it with requestEmailVerification(), then registerUser() with the one-time password it emails (POST /user), then finish onboarding up to createAccount()');
  });
});

describe('refreshAfterRegistration: a token that names the new user, through refresh only (registerUser calls it)', () => {
  const jwt = (claims: Record<string, unknown>) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 900, ...claims })).toString('base64url')}.c2ln`;

  it('newer generation: trades the refresh token for tokens with hasSignedUp true; reauthenticate is never called', async () => {
    const calls = { reauthenticate: 0, refresh: [] as string[] };
    const tokenManager = createTokenManager({
      reauthenticate: async () => (calls.reauthenticate++, jwt({ hasSignedUp: true })),
      refresh: async (refreshToken) => (calls.refresh.push(refreshToken), { token: jwt({ hasSignedUp: true, userId: 'u1' }), refreshToken: 'rt-2' }),
      tokens: { token: jwt({ hasSignedUp: false }), refreshToken: 'rt-1' },
    });
    await tokenManager.refreshAfterRegistration();
    expect(calls).toEqual({ reauthenticate: 0, refresh: ['rt-1'] });
    expect(tokenManager.hasSignedUp).toBe(true);
  });

  it('a failed refresh keeps the current token; without refresh, or on the older generation, nothing happens', async () => {
    const before = jwt({ hasSignedUp: false });
    let reauthenticated = 0;
    const failing = createTokenManager({
      reauthenticate: async () => (reauthenticated++, jwt({ hasSignedUp: true })),
      refresh: async () => {
        throw new Error('refresh endpoint down');
      },
      tokens: { token: before, refreshToken: 'rt-1' },
    });
    await expect(failing.refreshAfterRegistration()).resolves.toBeUndefined();
    expect(await failing.getToken()).toBe(before);
    expect(failing.hasSignedUp).toBe(false);

    const older = createTokenManager({ reauthenticate: async () => (reauthenticated++, jwt({ hasSignedUp: true })), tokens: before });
    await older.refreshAfterRegistration();
    expect(await older.getToken()).toBe(before);
    expect(reauthenticated).toBe(0);
  });
});

describe('never shows tokens in logs or error messages', () => {
  it('keeps tokens out of the TokenManager JSON, string and inspect output', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const client = createPartnerClient({ baseUrl: service.url });
    const { token, refreshToken } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    for (const output of [JSON.stringify(client.tokenManager), String(client.tokenManager), inspect(client.tokenManager, { depth: 5 }), inspect(client, { depth: 5 })]) {
      expect(output).not.toContain(token);
      expect(output).not.toContain(refreshToken!);
    }
    expect(JSON.parse(JSON.stringify(client.tokenManager))).toMatchObject({ generation: 'newer', hasToken: true });
  });

  it('redacts a token that the service echoes in an error body', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const client = createPartnerClient({ baseUrl: service.url });
    const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.script('GET', LIMIT_PATH, { status: 401, body: { message: `Token ${token} expired`, detail: { authorization: `Bearer ${token}` } } });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    for (const output of [(error as Error).message, String(error), JSON.stringify(error), inspect(error, { depth: 10 }), (error as Error).stack ?? '']) {
      expect(output).not.toContain(token);
    }
    // The service's sentence is serviceMessage (the message gives the client's advice instead).
    expect((error as AuthenticationError).serviceMessage).toBe('Token [redacted token] expired');
  });

  it('redacts the tokens it holds wherever the service echoes them: percent-encoded, base64, in x-request-id, a part alone', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const client = createPartnerClient({ baseUrl: service.url, retries: 0 });
    const { token, refreshToken } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    const [, payload, signature] = token.split('.');
    const echoes = [
      `Bearer%20${token}`,
      `authorization=Bearer%2520${encodeURIComponent(encodeURIComponent(token))}`,
      `x-${token}`,
      `basic ${btoa(token)}`,
      `payload ${payload} signature ${signature}`,
      `refresh ${refreshToken} or ${encodeURIComponent(encodeURIComponent(refreshToken!))} or ${btoa(refreshToken!)}`,
    ];
    service.script('GET', LIMIT_PATH, { status: 401, headers: { 'x-request-id': `req-${token}-${refreshToken}` }, body: { message: echoes.join(' | '), echoes, errors: { [token]: 'invalid', [refreshToken!]: 'reused' } } });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    const outputs = [(error as Error).message, JSON.stringify(error), inspect(error, { depth: 10 }), (error as AuthenticationError).requestId!];
    for (const output of outputs) {
      for (const secret of [token, payload!, signature!, btoa(token), refreshToken!, btoa(refreshToken!)]) expect(output).not.toContain(secret);
    }
    expect((error as AuthenticationError).requestId).toBe('req-[redacted token]-[redacted token]');
    expect((error as AuthenticationError).body).toMatchObject({ echoes: [
      'Bearer%20[redacted token]',
      'authorization=Bearer%2520[redacted token]',
      'x-[redacted token]',
      'basic [redacted token]',
      'payload [redacted token] signature [redacted token]',
      'refresh [redacted token] or [redacted token] or [redacted token]',
    ] });
    // A token used as a key of the body: the key is redacted too, and two such keys stay two.
    expect(((error as AuthenticationError).body as { errors: object }).errors).toEqual({ '[redacted token]': 'invalid', '[redacted token] #2': 'reused' });
  });

  it('redacts a JWT it never held after "-" or a percent escape', () => {
    const stranger = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
    const error = new AuthenticationError({ status: 401, code: 'unauthorized', message: `x-${stranger} and Bearer%20${stranger}`, body: {}, requestId: `id-${stranger}` });
    expect(error.message).toBe('x-[redacted token] and Bearer%20[redacted token]');
    expect(error.requestId).toBe('id-[redacted token]');
    const opaque = new AuthenticationError({ status: 401, code: 'unauthorized', message: 'a Bearer%20abc%2Fdef123 b Bearer%2520ghi%252Fjkl456', body: {} });
    expect(opaque.message).toBe('a Bearer%20[redacted token] b Bearer%2520[redacted token]');
  });

  it('redacts a bearer credential once, so the message stays readable', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const client = createPartnerClient({ baseUrl: service.url });
    await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    service.script('GET', LIMIT_PATH, { status: 401, body: { code: 'MissingToken', message: 'The proxy got "Authorization: Bearer opaque9f3c2a7d".' } });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    const { serviceMessage } = error as AuthenticationError;
    expect(serviceMessage).toBe('The proxy got "Authorization: Bearer [redacted token]".');
    expect(serviceMessage).not.toContain('token] token]');
    // Through errorFromResponse without advice (client.raw), the sentence is in the message too.
    const raw = errorFromResponse(new Response(null, { status: 401 }), { code: 'MissingToken', message: 'The proxy got "Authorization: Bearer opaque9f3c2a7d".' });
    expect(raw.message).toContain('The proxy got "Authorization: Bearer [redacted token]".');
    expect(raw.message).not.toContain('token] token]');
    expect(raw.message).not.toContain('..');
    expect((error as AuthenticationError).body).toEqual({ code: 'MissingToken', message: 'The proxy got "Authorization: Bearer [redacted token]".' });
  });
});

describe('checks TokenManager options', () => {
  it.each([
    [{ renewBeforeMs: -1 }, 'renewBeforeMs'],
    [{ renewBeforeMs: Number.NaN }, 'renewBeforeMs'],
    [{ reauthenticate: 'sign in' }, 'reauthenticate'],
    [{ generation: 'v2' }, 'generation'],
    [{ tokens: '' }, 'tokens'],
  ])('rejects %o', (options, argument) => {
    expect(() => new TokenManager(options as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });

  it('quotes a string given for renewBeforeMs in the message', () => {
    expect(() => new TokenManager({ renewBeforeMs: '120000' as never })).toThrow(expect.objectContaining({ argument: 'renewBeforeMs', message: expect.stringContaining('got "120000"') }));
  });

  it('reads the expiry from the JWT and forgets everything on clear()', () => {
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.sig`;
    const tokenManager = new TokenManager({ tokens: jwt });
    expect(tokenManager.expiresAt?.getTime()).toBe(exp * 1000);
    tokenManager.clear();
    expect(tokenManager.hasToken).toBe(false);
    expect(() => tokenManager.setTokens({ token: 42 } as never)).toThrow(InvalidArgumentError);
  });

  it('accepts expiresAt as a Date, an ISO string or epoch milliseconds, and rejects anything else', () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const tokenManager = new TokenManager();
    for (const expiresAt of [at, at.toISOString(), at.getTime()]) {
      tokenManager.setTokens({ token: 'opaque-token', expiresAt } as never);
      expect(tokenManager.expiresAt?.getTime()).toBe(at.getTime());
    }
    expect(() => tokenManager.setTokens({ token: 'opaque-token', expiresAt: 'tomorrow' } as never)).toThrow(
      expect.objectContaining({ argument: 'expiresAt', code: 'invalid_tokens' }),
    );
  });

  it('receivedTokensExpiry: a just-received token expires its lifetime from now, as the TokenManager counts it; a given expiresAt is taken as it is', () => {
    // Issued by a service whose clock is an hour behind this device's: exp - iat = 15 minutes.
    const iat = Math.floor(Date.now() / 1000) - 3600;
    const token = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ iat, exp: iat + 900 })).toString('base64url')}.c2ln`;
    const expiresAt = receivedTokensExpiry({ token, refreshToken: 'rt' })!;
    expect(Math.abs(expiresAt.getTime() - (Date.now() + 900_000))).toBeLessThan(5_000);
    const tokenManager = new TokenManager({ refresh: async () => ({ token, refreshToken: 'rt-2' }) });
    tokenManager.setTokens({ token, refreshToken: 'rt', expiresAt });
    expect(tokenManager.expiresAt).toEqual(expiresAt);
    expect(receivedTokensExpiry({ token, expiresAt: '2030-01-01T00:00:00Z' as never })).toEqual(new Date('2030-01-01T00:00:00Z'));
  });
});
