// The README's "several tabs" sample, run as written in real tabs: headless Chromium (through
// playwright-core) opens two pages of one origin, http://localhost:PORT, each running the
// sample's code block, taken from README.md as it stands, with the built client and the newer
// generation's sandbox. The free names of the sample (the refresh call, the client, the signer,
// the SIWE domain and URI) are defined around it; the counters of refreshes and sign-ins, and the
// gates that hold a refresh's answer, a wallet prompt or a sign-out message, are the only
// additions. The wallet holds two users' accounts, A and B. What the README promises is asserted: an expired access
// token in two tabs at once makes one refresh at the service, and both tabs go on in the same
// session; a session the service ended makes one sign-in (one wallet prompt) for both tabs; a
// sign-out in one tab signs the other out at once, even while that one is refreshing or has a
// wallet prompt open, and what they bring after it is not stored; after a user switch
// in one tab, a new tab restores the new account's session, and a tab still showing the first
// account gets session_changed rather than the new account's tokens; and, a limit the README
// states, a reload during a refresh costs one wallet prompt. An earlier version
// of the sample kept the tokens in localStorage: the second case then prompted the wallet in both
// tabs about one run in five (Chromium updates another tab's copy of localStorage a moment after
// a write, and the tab next in turn read the tokens just replaced).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeBlocks } from '@capi/codegen-kit/testing';
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from './support/browser-bundle.js';
import { privateKeyToAccount } from 'viem/accounts';
import { registeredAccount, TEST_PRIVATE_KEY } from './support/wallet.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The README's code block that keeps one session across tabs (the one with `navigator.locks`). */
function readmeTabsSample(): string {
  const sample = readmeBlocks(packageDir, 'ts').filter((block) => block.includes('navigator.locks'));
  if (sample.length !== 1) throw new Error(`expected one README code block using navigator.locks, found ${sample.length}`);
  return sample[0]!;
}

// A second registered user (Anvil's well-known account 2): the account a user switches to.
const OTHER_PRIVATE_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const otherAccount = privateKeyToAccount(OTHER_PRIVATE_KEY);

// Before the sample: its free names. refreshAtService is the README's refresh call (the one of
// "Newer generation", against the sandbox's refresh endpoint), counted; the signer is the
// wallet, on the account the page's ?wallet= names (0, A, by default) until the test switches it,
// whose signatures (wallet prompts) are counted.
const PRELUDE = `
import { createPartnerClient, signerFromViemAccount } from '@capi/client';
import { privateKeyToAccount } from 'viem/accounts';
const config = await (await fetch('/config')).json();
const walletAccounts = config.privateKeys.map((privateKey) => privateKeyToAccount(privateKey));
const walletNow = { account: walletAccounts[Number(new URLSearchParams(location.search).get('wallet') ?? 0)] };
const counts = { refreshes: 0, walletPrompts: 0 };
// The test can hold a refresh's answer back (read, the service having rotated the tokens), or a
// wallet prompt open (counted as shown), to act meanwhile.
const held = { answer: undefined, release: undefined, answersRead: 0, prompt: undefined, answerPrompt: undefined };
const signer = {
  get address() { return walletNow.account.address; },
  signMessage: async (message) => {
    const account = walletNow.account;
    counts.walletPrompts += 1;
    await held.prompt;
    return signerFromViemAccount(account).signMessage(message);
  },
};
const domain = location.host;
const uri = location.origin;
async function refreshAtService(refreshToken, signal) {
  counts.refreshes += 1;
  const response = await fetch(config.baseUrl + '/__sandbox/auth/refresh', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }), signal,
  });
  const tokens = response.ok ? await response.json() : undefined;
  held.answersRead += 1;
  await held.answer;
  if (!response.ok) throw new Error('refresh refused: HTTP ' + response.status);
  return tokens;
}
`;
// After it: the client of the tab, with the sample's TokenManager, and what the test drives.
const EPILOGUE = `
const client = createPartnerClient({ baseUrl: config.baseUrl, tokenManager, retries: 0 });
const handleSignOutMessage = signOuts.onmessage;
const outcome = (promise) => promise.then(
  (value) => ({ value }),
  (error) => ({ error: { name: error?.name, code: error?.code, status: error?.status, message: String(error?.message) } }),
);
window.tab = {
  counts,
  signIn: () => signIn(),
  switchWallet: (index) => { walletNow.account = walletAccounts[index]; },
  account: () => account,
  getDailyLimit: () => outcome(client.getDailyLimit()),
  signOut: () => signOut(),
  stored: () => stored(),
  holdRefreshAnswers: () => { held.answer = new Promise((resolve) => { held.release = resolve; }); },
  releaseRefreshAnswers: () => held.release(),
  refreshAnswersRead: () => held.answersRead,
  holdWalletPrompts: () => { held.prompt = new Promise((resolve) => { held.answerPrompt = resolve; }); },
  answerWalletPrompts: () => held.answerPrompt(),
  // A tab slow to run the sign-out's message (in the background): the sample's handler gets it when the test says.
  holdSignOutMessages: () => { held.messages = []; signOuts.onmessage = (event) => held.messages.push(event); },
  deliverSignOutMessages: () => { signOuts.onmessage = handleSignOutMessage; for (const event of held.messages) handleSignOutMessage.call(signOuts, event); },
};
`;

let sandbox: Sandbox;
let pageServer: Server;
let origin: string;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  const script = await bundleForBrowser(`${PRELUDE}\n${readmeTabsSample()}\n${EPILOGUE}`, 'ts');
  sandbox = await startSandbox({
    generation: 'newer',
    users: [
      { signInWallets: [registeredAccount.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] },
      { signInWallets: [otherAccount.address], smartWallets: [{ address: '0x00000000000000000000000000000000000b0B0b', chainId: '100' }] },
    ],
  });
  pageServer = createServer((request, response) => {
    const pages: Record<string, [string, string]> = {
      '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>partner front end</title><script type="module" src="/tab.js"></script>'],
      '/tab.js': ['text/javascript', script],
      '/config': ['application/json', JSON.stringify({ baseUrl: sandbox.baseUrl, privateKeys: [TEST_PRIVATE_KEY, OTHER_PRIVATE_KEY] })],
    };
    const page = pages[new URL(request.url ?? '', 'http://page').pathname];
    response.writeHead(page ? 200 : 404, { 'content-type': `${page?.[0] ?? 'text/plain'}; charset=utf-8` }).end(page?.[1]);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([sandbox?.close(), pageServer && new Promise<void>((resolve) => pageServer.close(() => resolve()))]);
});

afterEach(async () => {
  await context?.close();
});

interface TabOutcome { value?: unknown; error?: { name: string; code?: string; status?: number; message: string } }
interface StoredTokens { token: string; refreshToken?: string; address?: string }

/** A tab of the partner's page, its sample's module loaded (in a browser context of its own per test: one IndexedDB), its wallet on account `wallet` (0: A, 1: B). */
async function openTab(wallet = 0): Promise<Page> {
  const page = await context.newPage();
  await loaded(page, () => page.goto(`${origin}/?wallet=${wallet}`));
  return page;
}

/** Loads the tab (`navigate`: its first load, a reload) and waits for its sample's module. */
async function loaded(page: Page, navigate: () => Promise<unknown>): Promise<void> {
  const errors: string[] = [];
  const onError = (error: Error) => errors.push(String(error));
  page.on('pageerror', onError);
  await navigate();
  await page.waitForFunction(() => 'tab' in window, undefined, { timeout: 20_000 }).catch(() => {
    throw new Error(`the tab's module did not load: ${errors.join('; ') || 'no error reported'}`);
  });
  page.off('pageerror', onError);
}

type Tab = {
  counts: { refreshes: number; walletPrompts: number };
  signIn(): Promise<void>;
  switchWallet(index: number): void;
  account(): string | undefined;
  getDailyLimit(): Promise<TabOutcome>;
  signOut(): Promise<void>;
  stored(): Promise<StoredTokens | undefined>;
  holdRefreshAnswers(): void;
  releaseRefreshAnswers(): void;
  refreshAnswersRead(): number;
  holdWalletPrompts(): void;
  answerWalletPrompts(): void;
  holdSignOutMessages(): void;
  deliverSignOutMessages(): void;
};
// The page functions run in the browser: they name window.tab themselves (no helper of this file reaches them).
type TabWindow = { tab: Tab };
const getDailyLimit = (page: Page) => page.evaluate(() => (window as unknown as TabWindow).tab.getDailyLimit());
/** The account the tab shows (the sample's `account`). */
const shownAccount = (page: Page) => page.evaluate(() => (window as unknown as TabWindow).tab.account());
const counts = async (...pages: Page[]) => {
  const all = await Promise.all(pages.map((page) => page.evaluate(() => ({ ...(window as unknown as TabWindow).tab.counts }))));
  return { refreshes: all.reduce((sum, tab) => sum + tab.refreshes, 0), walletPrompts: all.reduce((sum, tab) => sum + tab.walletPrompts, 0) };
};

const stored = (page: Page) => page.evaluate(() => (window as unknown as TabWindow).tab.stored());
const signOut = (page: Page) => page.evaluate(() => (window as unknown as TabWindow).tab.signOut());
const lockRequests = (page: Page) => page.evaluate(async () => {
  const { held, pending } = await navigator.locks.query();
  return { held: held?.length ?? 0, pending: pending?.length ?? 0 };
});

/**
 * Whether `action` settles before any tab of the origin waits for the lock, told by the order of
 * the two events (no time limit): a sign-out that waited behind a renewal would show up as a
 * pending lock request while the renewal holds the lock.
 */
async function settlesBeforeAnyLockWait(page: Page, action: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void action.then(() => (settled = true), () => (settled = true));
  while (!settled) if ((await lockRequests(page)).pending > 0) return false;
  await action;
  return true;
}

/** Someone offers the stored refresh token twice (a stale copy): the service ends the session. */
async function endSessionAtService(page: Page): Promise<void> {
  const { refreshToken } = (await stored(page))!;
  const refresh = () => fetch(`${sandbox.baseUrl}/__sandbox/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) });
  expect((await refresh()).status).toBe(200);
  expect((await refresh()).status).toBe(401);
}

/**
 * A wallet prompt open in `page`, held until the test answers it: the session ended at the
 * service, the tab's request meets it, its refresh is refused, and its reauthenticate prompts the
 * wallet while holding the lock. Returns that request's outcome, to come (in an object: an async
 * function's returned promise would be awaited).
 */
async function walletPromptOpen(page: Page): Promise<{ request: Promise<TabOutcome> }> {
  await endSessionAtService(page);
  const before = (await counts(page)).walletPrompts;
  await page.evaluate(() => (window as unknown as TabWindow).tab.holdWalletPrompts());
  const request = getDailyLimit(page);
  await expect.poll(async () => (await counts(page)).walletPrompts, { timeout: 10_000 }).toBe(before + 1);
  expect(await lockRequests(page)).toEqual({ held: 1, pending: 0 });
  return { request };
}

/** Two tabs of one signed-in user: the first signed in, the second opened after (it restores the stored tokens). */
async function twoSignedInTabs(): Promise<[Page, Page]> {
  context = await browser.newContext();
  const first = await openTab();
  await first.evaluate(() => (window as unknown as TabWindow).tab.signIn());
  const second = await openTab();
  for (const page of [first, second]) expect(await getDailyLimit(page)).toMatchObject({ value: { amount: 1_000_000 } });
  expect(await counts(first, second)).toEqual({ refreshes: 0, walletPrompts: 1 });
  return [first, second];
}

describe("the README's several-tabs sample in two Chromium tabs against the sandbox", () => {
  it('an access token expired in both tabs at once: one refresh at the service, and both tabs stay in the session', async () => {
    const [first, second] = await twoSignedInTabs();
    const before = await stored(first);
    // The sandbox's clock passes the access token's 15 minutes; the tabs learn it from a 401.
    await sandbox.advanceClock(16 * 60_000);
    const [inFirst, inSecond] = await Promise.all([getDailyLimit(first), getDailyLimit(second)]);
    expect(inFirst).toMatchObject({ value: { amount: 1_000_000 } });
    expect(inSecond).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first, second)).toEqual({ refreshes: 1, walletPrompts: 1 });
    // One new pair, stored once: the session was not ended by a reused refresh token.
    const after = await stored(second);
    expect(after?.refreshToken).toBeDefined();
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    for (const page of [first, second]) expect(await getDailyLimit(page)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first, second)).toEqual({ refreshes: 1, walletPrompts: 1 });
  }, 90_000);

  it('a session the service ended: one sign-in for both tabs, not a wallet prompt in each', async () => {
    const [first, second] = await twoSignedInTabs();
    await endSessionAtService(first);
    // Both tabs meet the ended session, in this order: the first tab's refresh holds the lock
    // (its answer held back) until the second tab's refresh waits for it, so that the second
    // offers its refresh token too (refused: the session has ended) before the first signs in
    // again. The second must then take the first one's new tokens, not prompt the wallet.
    await first.evaluate(() => (window as unknown as TabWindow).tab.holdRefreshAnswers());
    const inFirst = getDailyLimit(first);
    await expect.poll(async () => (await counts(first)).refreshes, { timeout: 10_000 }).toBe(1);
    const inSecond = getDailyLimit(second);
    await expect.poll(() => second.evaluate(async () => (await navigator.locks.query()).pending?.length), { timeout: 10_000 }).toBe(1);
    await first.evaluate(() => (window as unknown as TabWindow).tab.releaseRefreshAnswers());
    expect(await inFirst).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await inSecond).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first, second)).toEqual({ refreshes: 2, walletPrompts: 2 });
    for (const page of [first, second]) expect(await getDailyLimit(page)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first, second)).toEqual({ refreshes: 2, walletPrompts: 2 });
  }, 90_000);

  it('a sign-out in one tab signs the other out: its next request fails and stores nothing', async () => {
    const [first, second] = await twoSignedInTabs();
    await signOut(first);
    // The broadcast reaches the other tab (asynchronously): its TokenManager is cleared, and its
    // next request asks reauthenticate, which finds the entry gone and prompts no wallet.
    await expect.poll(async () => (await getDailyLimit(second)).error?.code, { timeout: 10_000 }).toBe('token_renewal_failed');
    expect(await getDailyLimit(second)).toMatchObject({ error: { name: 'TokenRenewalError', message: expect.stringContaining('Signed out: sign in again.') } });
    expect(await stored(second)).toBeUndefined();
    expect(await stored(first)).toBeUndefined();
    expect(await counts(first, second)).toEqual({ refreshes: 0, walletPrompts: 1 });
  }, 90_000);

  it('a sign-out in one tab while the other refreshes: it does not wait for the refresh, whose answer does not sign the user back in', async () => {
    const [first, second] = await twoSignedInTabs();
    await sandbox.advanceClock(16 * 60_000);
    // The service rotates the tokens, and the answer is held back: the refresh holds the lock.
    await second.evaluate(() => (window as unknown as TabWindow).tab.holdRefreshAnswers());
    const request = getDailyLimit(second);
    await expect.poll(async () => (await counts(second)).refreshes, { timeout: 10_000 }).toBe(1);
    // The sign-out is done before the refresh's answer comes: it waits for no lock.
    expect(await settlesBeforeAnyLockWait(first, signOut(first))).toBe(true);
    await second.evaluate(() => (window as unknown as TabWindow).tab.releaseRefreshAnswers());
    // Refused: session_changed when the sign-out's message came first, else signed out.
    expect(await request).toMatchObject({ error: { name: 'TokenRenewalError' } });
    // The refresh's result did not outlive the sign-out: the entry is gone for both tabs, the
    // other tab is signed out too, and no wallet was prompted.
    for (const page of [first, second]) expect(await stored(page)).toBeUndefined();
    await expect.poll(async () => (await getDailyLimit(second)).error?.code, { timeout: 10_000 }).toBe('token_renewal_failed');
    expect(await getDailyLimit(second)).toMatchObject({ error: { name: 'TokenRenewalError', message: expect.stringContaining('Signed out') } });
    expect(await counts(first, second)).toEqual({ refreshes: 1, walletPrompts: 1 });
  }, 90_000);

  it('a user switch in one tab: a new tab with the wallet on the new account restores its session without a prompt, and a tab still showing the first account gets session_changed', async () => {
    const [first, second] = await twoSignedInTabs();
    // In the first tab the user switches the wallet to B and signs in (the sample's sign-in button).
    await first.evaluate(() => {
      (window as unknown as TabWindow).tab.switchWallet(1);
      return (window as unknown as TabWindow).tab.signIn();
    });
    expect(await shownAccount(first)).toBe(otherAccount.address);
    // A new tab, its wallet on B: B's session, restored from the entry, without a wallet prompt.
    const third = await openTab(1);
    expect(await getDailyLimit(third)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await shownAccount(third)).toBe(otherAccount.address);
    expect(await counts(third)).toEqual({ refreshes: 0, walletPrompts: 0 });
    // The second tab still shows A, with A's tokens. When they expire, its renewal finds B's in the
    // entry: its request, made for A, fails with session_changed (naming both accounts) instead
    // of being answered with B's data, and the tab now shows B.
    expect(await shownAccount(second)).toBe(registeredAccount.address);
    await sandbox.advanceClock(16 * 60_000);
    const inSecond = await getDailyLimit(second);
    expect(inSecond).toMatchObject({ error: { name: 'TokenRenewalError', code: 'session_changed' } });
    expect(inSecond.error?.message).toContain(registeredAccount.address);
    expect(inSecond.error?.message).toContain(otherAccount.address);
    expect(await shownAccount(second)).toBe(otherAccount.address);
    // B's session goes on in every tab: one refresh at the service, no wallet prompt since the switch.
    for (const page of [second, third, first]) expect(await getDailyLimit(page)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first, second, third)).toEqual({ refreshes: 1, walletPrompts: 2 });
    expect((await stored(third))?.address).toBe(otherAccount.address);
  }, 90_000);

  it('a sign-out in one tab while a wallet prompt is open in the other: it does not wait for the prompt, whose answer stores nothing', async () => {
    const [first, second] = await twoSignedInTabs();
    const { request: inFirst } = await walletPromptOpen(first);
    // The second tab signs out while the prompt is still open (it is answered only below).
    expect(await settlesBeforeAnyLockWait(second, signOut(second))).toBe(true);
    // Its message reaches the first tab, whose clear() ends the sign-in waiting for the wallet.
    expect(await inFirst).toMatchObject({ error: { name: 'TokenRenewalError', code: 'session_changed' } });
    await first.evaluate(() => (window as unknown as TabWindow).tab.answerWalletPrompts());
    for (const page of [first, second]) expect(await stored(page)).toBeUndefined();
    expect(await getDailyLimit(first)).toMatchObject({ error: { name: 'TokenRenewalError', message: expect.stringContaining('Signed out: sign in again.') } });
    expect(await counts(first, second)).toEqual({ refreshes: 1, walletPrompts: 2 });
  }, 90_000);

  it('a sign-out while a wallet prompt is open in a tab that has not run its message yet: the answer, given then, is not stored', async () => {
    const [first, second] = await twoSignedInTabs();
    await first.evaluate(() => (window as unknown as TabWindow).tab.holdSignOutMessages());
    const { request: inFirst } = await walletPromptOpen(first);
    expect(await settlesBeforeAnyLockWait(second, signOut(second))).toBe(true);
    // The user answers the prompt before the first tab runs the sign-out's message (a tab in the
    // background): the sign-in completes, but the entry it renews is gone, so its tokens are not
    // stored, and the first tab signs itself out.
    await first.evaluate(() => (window as unknown as TabWindow).tab.answerWalletPrompts());
    expect(await inFirst).toMatchObject({ error: { name: 'TokenRenewalError', code: 'session_changed' } });
    for (const page of [first, second]) expect(await stored(page)).toBeUndefined();
    await first.evaluate(() => (window as unknown as TabWindow).tab.deliverSignOutMessages());
    expect(await getDailyLimit(first)).toMatchObject({ error: { name: 'TokenRenewalError', message: expect.stringContaining('Signed out: sign in again.') } });
    expect(await counts(first, second)).toEqual({ refreshes: 1, walletPrompts: 2 });
  }, 90_000);

  it('a reload during a refresh loses the rotated refresh token: one wallet prompt after it, for both tabs (a limit the README states)', async () => {
    const [first, second] = await twoSignedInTabs();
    const before = await stored(first);
    await sandbox.advanceClock(16 * 60_000);
    // The service has rotated the tokens, and the answer is held back: the tab reloads meanwhile.
    await second.evaluate(() => (window as unknown as TabWindow).tab.holdRefreshAnswers());
    const request = getDailyLimit(second).catch(() => 'its page is gone');
    await expect.poll(() => second.evaluate(() => (window as unknown as TabWindow).tab.refreshAnswersRead()), { timeout: 10_000 }).toBe(1);
    await loaded(second, () => second.reload());
    expect(await request).toBe('its page is gone');
    // The entry keeps the spent refresh token, which the reloaded tab restored.
    expect((await stored(second))?.refreshToken).toBe(before?.refreshToken);
    // Its first request: the refresh is refused (the service ends the session), and the user signs
    // in again (one wallet prompt); the other tab takes that sign-in's tokens, without a prompt.
    expect(await getDailyLimit(second)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(second)).toEqual({ refreshes: 1, walletPrompts: 1 });
    expect(await getDailyLimit(first)).toMatchObject({ value: { amount: 1_000_000 } });
    expect(await counts(first)).toEqual({ refreshes: 0, walletPrompts: 1 });
  }, 90_000);
});
