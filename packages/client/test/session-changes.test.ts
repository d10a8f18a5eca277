// Sign-out (clear()) and a switch to another user (a sign-in, setTokens()) while a token renewal,
// a sign-in or a request is in flight, against @capi/sandbox over loopback HTTP. Work begun for
// the earlier session never stores its tokens afterwards, and a request of that session is never
// sent again with the new session's token. The callbacks are held on gates the tests open, so
// the order of events is fixed without any timing.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AuthenticationError, createPartnerClient, signerFromViemAccount, TokenManager, TokenRenewalError, type FetchFunction, type PartnerClient, type TokenSet } from '../src/index.js';
import { getUser, readTokenClaims, requestLegacyPhoneVerification, waitForOnboardingStatus } from '../src/onboarding.js';
import { signerChanged } from '../src/renewal-errors.js';
import { SIGN_IN_PAGE } from './support/wallet.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

const walletA = privateKeyToAccount(generatePrivateKey());
const walletB = privateKeyToAccount(generatePrivateKey());
const ACCESS_TOKEN_LIFETIME_MS = 15 * 60_000;

/** A newer-generation sandbox with two users, A and B, each with its account (so each has a limit). */
async function startTwoUsers(): Promise<Sandbox> {
  sandbox = await startSandbox({
    generation: 'newer',
    users: [
      { signInWallets: [walletA.address], email: 'a@example.com', smartWallets: [{ address: '0x00000000000000000000000000000000000000a1', chainId: '100' }] },
      { signInWallets: [walletB.address], email: 'b@example.com', smartWallets: [{ address: '0x00000000000000000000000000000000000000b1', chainId: '100' }] },
    ],
  });
  return sandbox;
}

/** A promise and its resolver: `open()` lets whoever awaits `opened` go on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** The sandbox's refresh, held until `release` opens; `started` opens when it is called. */
function gatedRefresh(baseUrl: string) {
  const started = gate();
  const release = gate();
  const refresh = async (refreshToken: string): Promise<TokenSet> => {
    started.open();
    await release.opened;
    const response = await fetch(`${baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
    if (!response.ok) throw new Error(`refresh refused with ${response.status}`);
    return (await response.json()) as TokenSet;
  };
  return { refresh, started, release };
}

const signIn = (client: PartnerClient, wallet: typeof walletA) => client.signInWithEthereum({ ...signerFromViemAccount(wallet), ...SIGN_IN_PAGE });
const signerOf = async (client: PartnerClient) => readTokenClaims((await client.tokenManager.getToken())!).signerAddress;

describe('clear() during a renewal is a sign-out that stays one', () => {
  it('a refresh that finishes after clear() stores nothing: the waiting request rejects with TokenRenewalError session_changed, and the client stays signed out', async () => {
    const { baseUrl } = await startTwoUsers();
    const { refresh, started, release } = gatedRefresh(baseUrl);
    const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ refresh }) });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // A's access token has expired on the service

    const pending = client.getDailyLimit().catch((error: unknown) => error); // 401, then the refresh
    await started.opened;
    client.tokenManager.clear(); // the user signs out while the refresh runs
    release.open();

    const error = await pending;
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'session_changed', message: expect.stringContaining('clear() (a sign-out)') });
    expect(client.tokenManager.hasToken).toBe(false);
    expect(client.tokenManager.hasSignedUp).toBeUndefined();
    // Nothing acts for A any more: the next request goes without a token.
    await expect(client.getDailyLimit()).rejects.toMatchObject({ name: 'AuthenticationError', code: 'MissingToken' });
  });

  it('older flow: a re-sign-in (reauthenticate) whose wallet prompt is answered after clear() stores nothing, and does not hold up the next sign-in', async () => {
    const { baseUrl } = await startTwoUsers();
    const promptShown = gate();
    const answerPrompt = gate();
    let prompts = 0;
    const slowWalletA = {
      address: walletA.address,
      signMessage: async (message: string) => {
        prompts += 1;
        promptShown.open();
        await answerPrompt.opened;
        return walletA.signMessage({ message });
      },
    };
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      tokenManager: new TokenManager({ reauthenticate: () => client.signInWithEthereum({ ...slowWalletA, ...SIGN_IN_PAGE }) }),
    });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);

    const pending = client.getDailyLimit().catch((error: unknown) => error); // 401, then reauthenticate: the wallet prompt
    await promptShown.opened;
    client.tokenManager.clear();
    // B signs in on the same device while A's prompt is still open: not refused as "in progress".
    await signIn(client, walletB);
    answerPrompt.open(); // A's wallet answers late

    const error = await pending;
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'session_changed' });
    expect(prompts).toBe(1);
    expect(await signerOf(client)).toBe(walletB.address);
    await expect(getUser(client)).resolves.toMatchObject({ email: 'b@example.com' });
  });

  it('a sign-in the app started is not stored when clear() comes before its wallet prompt is answered', async () => {
    const { baseUrl } = await startTwoUsers();
    const promptShown = gate();
    const answerPrompt = gate();
    const client = createPartnerClient({ baseUrl });
    const slowWalletA = { address: walletA.address, signMessage: async (message: string) => (promptShown.open(), await answerPrompt.opened, walletA.signMessage({ message })) };
    const signingIn = client.signInWithEthereum({ ...slowWalletA, ...SIGN_IN_PAGE }).catch((error: unknown) => error);
    await promptShown.opened;
    client.tokenManager.clear(); // "cancel" / sign-out while the wallet prompt is open
    answerPrompt.open();
    await expect(signingIn).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed', message: expect.stringContaining('it stored nothing') });
    expect(client.tokenManager.hasToken).toBe(false);
  });
});

describe('a switch to another user during a renewal keeps the new user', () => {
  it('clear() and a sign-in of B while A\'s refresh runs: A\'s refreshed tokens are discarded, A\'s request is not answered with B\'s data', async () => {
    const { baseUrl } = await startTwoUsers();
    const { refresh, started, release } = gatedRefresh(baseUrl);
    const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ refresh }) });
    await signIn(client, walletA);
    await client.setDailyLimit({ amount: 111 });
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);

    const pending = client.getDailyLimit().catch((error: unknown) => error);
    await started.opened;
    client.tokenManager.clear();
    await signIn(client, walletB);
    release.open();

    await expect(pending).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed' });
    expect(await signerOf(client)).toBe(walletB.address);
    await expect(getUser(client)).resolves.toMatchObject({ email: 'b@example.com' });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 }); // B's own limit
  });

  it('setTokens() with B\'s tokens (no clear()) while A\'s refresh runs: B\'s tokens stay', async () => {
    const { baseUrl } = await startTwoUsers();
    const other = createPartnerClient({ baseUrl });
    const tokensOfB = await signIn(other, walletB); // B signed in elsewhere, e.g. restored from storage
    const { refresh, started, release } = gatedRefresh(baseUrl);
    const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ refresh }) });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    const fresh = await signIn(other, walletB); // valid on the moved clock
    expect(fresh.token).not.toBe(tokensOfB.token);

    const pending = client.getDailyLimit().catch((error: unknown) => error);
    await started.opened;
    client.tokenManager.setTokens(fresh);
    release.open();

    await expect(pending).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed' });
    expect(await client.tokenManager.getToken()).toBe(fresh.token);
    await expect(getUser(client)).resolves.toMatchObject({ email: 'b@example.com' });
  });

  it('setTokens() with B\'s tokens while A\'s reauthenticate (wallet prompt open) runs: B\'s tokens stay, requests act for B, A\'s sign-in stores nothing', async () => {
    const { baseUrl } = await startTwoUsers();
    const promptShown = gate();
    const answerPrompt = gate();
    const slowWalletA = {
      address: walletA.address,
      signMessage: async (message: string) => (promptShown.open(), await answerPrompt.opened, walletA.signMessage({ message })),
    };
    // The bearer token each request to the user route was sent with.
    const userRouteTokens: (string | null)[] = [];
    const recordingFetch: FetchFunction = (url, init) => {
      if (new URL(url).pathname.endsWith('/user')) userRouteTokens.push(new Headers(init?.headers).get('authorization'));
      return fetch(url, init);
    };
    let signInOfA: Promise<unknown> | undefined;
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      fetch: recordingFetch,
      tokenManager: new TokenManager({
        reauthenticate: () => {
          const signingIn = client.signInWithEthereum({ ...slowWalletA, ...SIGN_IN_PAGE });
          signInOfA = signingIn.catch((error: unknown) => error);
          return signingIn;
        },
      }),
    });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // A's token: 401, then reauthenticate
    const tokensOfB = await signIn(createPartnerClient({ baseUrl }), walletB); // B signed in elsewhere

    const pending = client.getDailyLimit().catch((error: unknown) => error);
    await promptShown.opened;
    client.tokenManager.setTokens(tokensOfB); // the app switches to B while A's prompt is open
    const afterSwitch = getUser(client);
    answerPrompt.open(); // A's wallet answers

    await expect(afterSwitch).resolves.toMatchObject({ email: 'b@example.com' });
    expect(userRouteTokens).toEqual([`Bearer ${tokensOfB.token}`]); // sent at once with B's token, not after A's sign-in
    await expect(pending).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed' });
    await expect(signInOfA).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed', message: expect.stringContaining('it stored nothing') });
    expect(await client.tokenManager.getToken()).toBe(tokensOfB.token);
    expect(await signerOf(client)).toBe(walletB.address);
    await expect(getUser(client)).resolves.toMatchObject({ email: 'b@example.com' });
  });

  it('a request of A answered 401 after B signed in is not sent again with B\'s token', async () => {
    const { baseUrl } = await startTwoUsers();
    // Holds A's limit request after its token is set, until B has signed in.
    const sent = gate();
    const hold = gate();
    let holdNext = false;
    const holdingFetch: FetchFunction = async (url, init) => {
      if (holdNext && url.endsWith('/user-api/user/account/limit')) {
        holdNext = false;
        sent.open();
        await hold.opened;
      }
      return fetch(url, init);
    };
    let reauthentications = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      fetch: holdingFetch,
      tokenManager: new TokenManager({ reauthenticate: () => (reauthentications++, client.signInWithEthereum({ ...signerFromViemAccount(walletA), ...SIGN_IN_PAGE })) }),
    });
    await signIn(client, walletA);
    await client.setDailyLimit({ amount: 111 });
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // A's token: 401 TokenExpired

    holdNext = true;
    const pending = client.getDailyLimit().catch((error: unknown) => error);
    await sent.opened;
    client.tokenManager.clear();
    await signIn(client, walletB);
    hold.open();

    const outcome = await pending;
    expect(outcome).toBeInstanceOf(TokenRenewalError);
    expect(outcome).toMatchObject({ code: 'session_changed', message: expect.stringContaining("not sent again with the new session's token") });
    expect(reauthentications).toBe(0); // no wallet prompt for A after the switch either
    expect(await signerOf(client)).toBe(walletB.address);
  });
  it('a write of A sent with no token (A\'s was dropped) and answered 401 after setTokens(B) is not sent again with B\'s token', async () => {
    const { baseUrl } = await startTwoUsers();
    const sent = gate();
    const hold = gate();
    const puts: (string | null)[] = [];
    const holdingFetch: FetchFunction = async (url, init) => {
      if (init.method === 'PUT') {
        puts.push(new Headers(init.headers).get('authorization'));
        if (puts.length === 1) {
          sent.open();
          await hold.opened;
        }
      }
      return fetch(url, init);
    };
    const client = createPartnerClient({ baseUrl, fetch: holdingFetch }); // nothing can renew
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError); // A's token is dropped
    expect(client.tokenManager.hasToken).toBe(false);
    const tokensOfB = await signIn(createPartnerClient({ baseUrl }), walletB); // valid on the moved clock

    const pending = client.setDailyLimit({ amount: 222 }).catch((error: unknown) => error); // A's write, with no token
    await sent.opened;
    client.tokenManager.setTokens(tokensOfB); // B signs in on the same client
    hold.open();

    const outcome = await pending;
    expect(outcome).toBeInstanceOf(TokenRenewalError);
    expect(outcome).toMatchObject({ code: 'session_changed', message: expect.stringContaining("not sent again with the new session's token") });
    expect(puts).toEqual([null]);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 }); // B's limit untouched
  });
});

describe('a reauthenticate that signs in as another wallet starts that wallet\'s session', () => {
  it.each([
    ['through the client\'s signInWithEthereum (which stores the tokens itself)', (client: PartnerClient) => signIn(client, walletB)],
    ['through a sign-in of its own, returning the tokens', (_client: PartnerClient, baseUrl: string) => signIn(createPartnerClient({ baseUrl }), walletB)],
  ])('%s: A\'s write answered 401 is not sent again with B\'s token; B\'s tokens stay', async (_name, signInB) => {
    const { baseUrl } = await startTwoUsers();
    const puts: (string | null)[] = [];
    const recordingFetch: FetchFunction = async (url, init) => {
      if (init.method === 'PUT') puts.push(readTokenClaims((new Headers(init.headers).get('authorization') ?? '').replace(/^Bearer /, '')).signerAddress as string);
      return fetch(url, init);
    };
    // The user switched to account B in the wallet: the re-sign-in signs as B.
    const client: PartnerClient = createPartnerClient({ baseUrl, fetch: recordingFetch, tokenManager: new TokenManager({ reauthenticate: () => signInB(client, baseUrl) }) });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // A's token: 401 TokenExpired

    const outcome = await client.setDailyLimit({ amount: 333 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(TokenRenewalError);
    expect(outcome).toMatchObject({ code: 'session_changed', message: expect.stringMatching(new RegExp(`signed in ${walletB.address} \\(user [^)]+\\), not ${walletA.address} \\(user [^)]+\\)`)) });
    expect(puts).toEqual([walletA.address]); // sent once, with A's token
    expect(await signerOf(client)).toBe(walletB.address);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 }); // B's limit untouched
  });
});

describe('a renewal\'s sign-in of another account, found when it is stored (the review of the switch above)', () => {
  it('a callback whose sign-in stored B\'s tokens and then failed: A\'s write answered 401 afterwards is not sent again with B\'s token', async () => {
    const { baseUrl } = await startTwoUsers();
    const puts: string[] = [];
    const putAnswered = gate();
    const recordingFetch: FetchFunction = async (url, init) => {
      if (init.method !== 'PUT') return fetch(url, init);
      puts.push(readTokenClaims((new Headers(init.headers).get('authorization') ?? '').replace(/^Bearer /, '')).signerAddress as string);
      const response = await fetch(url, init);
      if (puts.length === 1) await putAnswered.opened; // A's PUT: its 401 comes back late
      return response;
    };
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      fetch: recordingFetch,
      // The sign-in stores B's tokens, then saving them elsewhere fails.
      tokenManager: new TokenManager({ reauthenticate: async () => { await signIn(client, walletB); throw new Error('saving the tokens failed'); } }),
    });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    const put = client.setDailyLimit({ amount: 333 }).catch((error: unknown) => error);
    while (puts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Meanwhile a read of A's gets 401 and runs the renewal: B signs in, the callback fails.
    await expect(client.getDailyLimit()).rejects.toMatchObject({ code: 'session_changed', message: expect.stringContaining(`signed in ${walletB.address}`) });
    putAnswered.open();
    expect(await put).toMatchObject({ name: 'TokenRenewalError', code: 'session_changed' });
    expect(puts).toEqual([walletA.address]);
    expect(await signerOf(client)).toBe(walletB.address);
  });

  it('a switch that brings a token already due to renew prompts the wallet once, not again at the next request', async () => {
    const { baseUrl } = await startTwoUsers();
    let prompts = 0;
    // renewBeforeMs above the 15-minute lifetime: every token is due at once.
    const client: PartnerClient = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ renewBeforeMs: 16 * 60_000, reauthenticate: () => (prompts++, signIn(client, walletB)) }) });
    client.tokenManager.setTokens(await signIn(createPartnerClient({ baseUrl }), walletA));
    await expect(client.getDailyLimit()).rejects.toMatchObject({ code: 'session_changed' });
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(prompts).toBe(1);
    expect(await signerOf(client)).toBe(walletB.address);
  });

  it('older generation: a re-sign-in with another wallet of the same user (same userId) is that user\'s renewal', async () => {
    const walletA2 = privateKeyToAccount(generatePrivateKey());
    sandbox = await startSandbox({ users: [{ signInWallets: [walletA.address, walletA2.address], email: 'a@example.com' }] });
    const client: PartnerClient = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager: new TokenManager({ reauthenticate: () => signIn(client, walletA2) }) });
    await signIn(client, walletA);
    sandbox.advanceClock(25 * 3_600_000); // past the older token's 24 hours at most
    await expect(requestLegacyPhoneVerification(client, { phone: '+15555550123' })).resolves.toBeDefined();
    expect(await signerOf(client)).toBe(walletA2.address);
  });
});

describe('the message of an account switch says which kind it is', () => {
  it('another wallet: a switch in the wallet; the same wallet naming another user: another deployment, or a sandbox that restarted', () => {
    const token = (claims: Record<string, string>) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
    expect(signerChanged(token({ signerAddress: '0xAbC1', userId: 'usr_a' }), token({ signerAddress: '0xDeF2', userId: 'usr_b' })).message).toContain('signed in 0xDeF2 (user usr_b), not 0xAbC1 (user usr_a), the account of the session it renewed (the user switched accounts in the wallet?)');
    expect(signerChanged(token({ signerAddress: '0xAbC1', userId: 'usr_a' }), token({ signerAddress: '0xabc1', userId: 'usr_c' })).message).toContain('the same wallet, but the service names another user for it now (another deployment at baseUrl, or a sandbox that restarted?)');
  });
});

describe('a wait begun in a session stops when the session ends (a partner journey trial)', () => {
  /** A fetch that records the token of each limit or onboarding-status poll, and opens `polled` at the first. */
  function pollRecordingFetch() {
    const polled = gate();
    const pollTokens: (string | null)[] = [];
    const recordingFetch: FetchFunction = (url, init) => {
      const path = new URL(url).pathname;
      if ((init?.method ?? 'GET') === 'GET' && (path.endsWith('/account/limit') || path.endsWith('/onboarding'))) {
        pollTokens.push(new Headers(init?.headers).get('authorization'));
        polled.open();
      }
      return fetch(url, init);
    };
    return { recordingFetch, polled, pollTokens };
  }

  it("A's waitForLimitSync, when B signs in on the same client, stops with session_changed: it never reports B's limit as A's", async () => {
    sandbox = await startSandbox({
      generation: 'newer',
      limitSyncDelayMs: 'manual', // A's change stays pending until the test syncs it
      users: [
        { signInWallets: [walletA.address], email: 'a@example.com', smartWallets: [{ address: '0x00000000000000000000000000000000000000a1', chainId: '100' }] },
        { signInWallets: [walletB.address], email: 'b@example.com', smartWallets: [{ address: '0x00000000000000000000000000000000000000b1', chainId: '100' }] },
      ],
    });
    const { recordingFetch, polled, pollTokens } = pollRecordingFetch();
    const client = createPartnerClient({ baseUrl: sandbox.baseUrl, fetch: recordingFetch });
    const tokensOfA = await signIn(client, walletA);
    await client.setDailyLimit({ amount: 5_000 });
    const waiting = client.waitForLimitSync({ amount: 5_000, pollIntervalMs: 10, maxPollIntervalMs: 10, timeoutMs: 10_000 }).catch((error: unknown) => error);
    await polled.opened;
    await signIn(client, walletB); // the app switches to B; B's limit is the default, synced

    const error = await waiting;
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'session_changed', message: expect.stringMatching(/^waitForLimitSync was overtaken: .*it stopped, and read nothing in the new session/) });
    // Every poll went out with A's token: none read B's limit.
    expect(new Set(pollTokens)).toEqual(new Set([`Bearer ${tokensOfA.token}`]));
    // A's change is still pending on the service: nothing replaced it.
    const asA = createPartnerClient({ baseUrl: sandbox.baseUrl });
    await signIn(asA, walletA);
    await expect(asA.getDailyLimit()).resolves.toMatchObject({ amount: 5_000, syncStatus: 'pending' });
  });

  it('waitForOnboardingStatus begun before clear() stops with session_changed, and never asks for a sign-in', async () => {
    const { baseUrl } = await startTwoUsers();
    const { recordingFetch, polled } = pollRecordingFetch();
    let reauthentications = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      fetch: recordingFetch,
      tokenManager: new TokenManager({ reauthenticate: () => (reauthentications++, signIn(client, walletA)) }),
    });
    await signIn(client, walletA);
    // A status the user does not reach: the wait would poll until its timeout.
    const waiting = waitForOnboardingStatus(client, 'action_complete_sof', { pollIntervalMs: 10, maxPollIntervalMs: 10, timeoutMs: 10_000 }).catch((error: unknown) => error);
    await polled.opened;
    client.tokenManager.clear(); // the user signs out

    await expect(waiting).resolves.toMatchObject({ name: 'TokenRenewalError', code: 'session_changed', message: expect.stringContaining('waitForOnboardingStatus was overtaken') });
    expect(reauthentications).toBe(0); // no wallet prompt for a user who just signed out
    expect(client.tokenManager.hasToken).toBe(false);
  });

  it('a refresh is the same session: a wait goes on through it and resolves', async () => {
    sandbox = await startSandbox({
      generation: 'newer',
      limitSyncDelayMs: 'manual',
      users: [{ signInWallets: [walletA.address], email: 'a@example.com', smartWallets: [{ address: '0x00000000000000000000000000000000000000a1', chainId: '100' }] }],
    });
    const { baseUrl } = sandbox;
    const { recordingFetch, polled } = pollRecordingFetch();
    let refreshes = 0;
    const refresh = async (refreshToken: string): Promise<TokenSet> => {
      refreshes += 1;
      const response = await fetch(`${baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
      return (await response.json()) as TokenSet;
    };
    const client = createPartnerClient({ baseUrl, fetch: recordingFetch, tokenManager: new TokenManager({ refresh }) });
    await signIn(client, walletA);
    await client.setDailyLimit({ amount: 7_000 });
    const waiting = client.waitForLimitSync({ amount: 7_000, pollIntervalMs: 10, maxPollIntervalMs: 10, timeoutMs: 10_000 });
    await polled.opened;
    sandbox.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // the next poll's 401 refreshes the token
    while (refreshes === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    sandbox.syncLimits();
    await expect(waiting).resolves.toMatchObject({ amount: 7_000, syncStatus: 'synced' });
  });
});

describe('a refresh that returns another account\'s tokens starts that account\'s session (a browser tabs trial)', () => {
  it("A's request refreshed with B's tokens (another tab signed in as B into the shared store) is not sent with them: session_changed, naming both", async () => {
    const { baseUrl } = await startTwoUsers();
    const tokensOfB = await signIn(createPartnerClient({ baseUrl }), walletB); // B signed in in another tab
    // The bearer token of each limit request this client sent.
    const limitTokens: (string | null)[] = [];
    const recordingFetch: FetchFunction = (url, init) => {
      if (new URL(url).pathname.endsWith('/account/limit')) limitTokens.push(new Headers(init?.headers).get('authorization'));
      return fetch(url, init);
    };
    // The shared store's entry now holds B's tokens: the refresh finds them "already refreshed elsewhere".
    const client = createPartnerClient({ baseUrl, fetch: recordingFetch, tokenManager: new TokenManager({ refresh: async () => tokensOfB }) });
    const tokensOfA = await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000); // A's access token has expired: 401, then the refresh

    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenRenewalError);
    expect(error).toMatchObject({ code: 'session_changed', message: expect.stringMatching(new RegExp(`^The refresh callback returned tokens of ${walletB.address}.*, not ${walletA.address}.*another tab or process signed in as that account`)) });
    // A's request went out with A's token only, never again with B's.
    expect(limitTokens).toEqual([`Bearer ${tokensOfA.token}`]);
    // B's tokens are the session now, a new one: the page learns of it from the error.
    expect(await signerOf(client)).toBe(walletB.address);
  });

  it('a refresh that returns the same account\'s new tokens renews the session as before', async () => {
    const { baseUrl } = await startTwoUsers();
    const { refresh, release } = gatedRefresh(baseUrl);
    release.open();
    const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ refresh }) });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    await expect(client.getDailyLimit()).resolves.toMatchObject({ amount: 1_000_000 });
    expect(await signerOf(client)).toBe(walletA.address);
  });
});

describe('renewals of the same session still work as before', () => {
  it('reauthenticate through signInWithEthereum (which stores the tokens itself) renews once for concurrent requests', async () => {
    const { baseUrl } = await startTwoUsers();
    let reauthentications = 0;
    const client: PartnerClient = createPartnerClient({
      baseUrl,
      tokenManager: new TokenManager({ reauthenticate: () => (reauthentications++, signIn(client, walletA)) }),
    });
    await signIn(client, walletA);
    sandbox!.advanceClock(ACCESS_TOKEN_LIFETIME_MS + 60_000);
    const limits = await Promise.all(Array.from({ length: 5 }, () => client.getDailyLimit()));
    expect(limits.every((limit) => limit.amount === 1_000_000)).toBe(true);
    expect(reauthentications).toBe(1);
    expect(await signerOf(client)).toBe(walletA.address);
  });

  it('an explicit sign-in after clear() with no renewal in flight is unaffected', async () => {
    const { baseUrl } = await startTwoUsers();
    const client = createPartnerClient({ baseUrl });
    await signIn(client, walletA);
    client.tokenManager.clear();
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
    await signIn(client, walletB);
    await expect(getUser(client)).resolves.toMatchObject({ email: 'b@example.com' });
  });
});
