// The built package after a deploy replaced its lazily loaded chunks while a page was open (or
// with the network down): a copy of dist/ without them. Errors callers catch by class stay this
// package's typed errors, built without the chunk's advice; an operation whose code is in a
// missing chunk fails with PartnerClientError client_code_unavailable. And with a network that
// holds a chunk's request without ever answering: a second copy whose error chunks never finish
// loading (a top-level await that never settles); the errors come all the same, unworded.
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signerFromViemAccount } from '../src/index.js';
import { LIMIT_PATH, REFRESH_PATH, startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

type Client = typeof import('../src/index.js');

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAZY_CHUNK = /^(sign-in|limit-sync|webhook-public-key|renewal-errors|limit-errors|request-errors)-.*\.js$/;
let copy: string;
let client: Client;
let service: PartnerService | undefined;

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'capi-client-deployed-'));
  cpSync(join(packageDir, 'dist'), join(copy, 'dist'), { recursive: true });
  symlinkSync(join(packageDir, 'node_modules'), join(copy, 'node_modules'), 'dir'); // openapi-fetch, viem
  const removed = readdirSync(join(copy, 'dist')).filter((file) => LAZY_CHUNK.test(file));
  expect(removed.map((file) => file.replace(/-[A-Z0-9]+\.js$/, '')).sort()).toEqual(['limit-errors', 'limit-sync', 'renewal-errors', 'request-errors', 'sign-in', 'webhook-public-key']);
  for (const file of removed) rmSync(join(copy, 'dist', file));
  client = (await import(pathToFileURL(join(copy, 'dist', 'index.js')).href)) as Client;
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));
afterEach(async () => {
  await service?.close();
  service = undefined;
});

const caught = (promise: Promise<unknown>) => promise.then((value) => value, (error: unknown) => error);

async function signedInClient(options: Partial<ConstructorParameters<Client['TokenManager']>[0]> = {}) {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
  const token = service.issueAccessToken(registeredAccount.address, 900);
  const tokenManager = new client.TokenManager({ tokens: token, ...options });
  return { token, tokenManager, partnerClient: client.createPartnerClient({ baseUrl: service.url, tokenManager, webhooksUrl: service.url, retries: 0 }) };
}

describe('errors built by a chunk that cannot load are built without its advice, with the same class and code', () => {
  it('a 401 of getDailyLimit is still an AuthenticationError', async () => {
    const { partnerClient } = await signedInClient();
    service!.revokeAccessTokens();
    const error = await caught(partnerClient.getDailyLimit());
    expect(error).toBeInstanceOf(client.AuthenticationError);
    expect(error).toMatchObject({ status: 401 });
  });

  it.each([
    [{ amount: 0 }, 'amount', 'amount_out_of_range'],
    [{ amount: 12.5 }, 'amount', 'amount_not_integer'],
    [{ amount: 5000, currency: 'EUR' }, 'currency', 'currency_not_supported'],
  ])('setDailyLimit(%o) is refused before sending with InvalidArgumentError, argument %s, code %s', async (params, argument, code) => {
    const { partnerClient } = await signedInClient();
    const error = await caught(partnerClient.setDailyLimit(params as never));
    expect(error).toBeInstanceOf(client.InvalidArgumentError);
    expect(error).toMatchObject({ argument, code, message: expect.stringContaining(code) });
    expect(service!.requests).toHaveLength(0);
  });

  it('a refresh that got no answer is still TokenRenewalError token_refresh_unreachable, its cause the network error; a rejected wallet prompt token_renewal_failed', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const lost = new TypeError('fetch failed');
    const offline = new client.TokenManager({ tokens: { token: service.issueAccessToken(registeredAccount.address, 900), refreshToken: 'kept' }, refresh: () => Promise.reject(lost) });
    service.revokeAccessTokens();
    const unreachable = await caught(client.createPartnerClient({ baseUrl: service.url, tokenManager: offline }).getDailyLimit());
    expect(unreachable).toBeInstanceOf(client.TokenRenewalError);
    expect(unreachable).toMatchObject({ code: 'token_refresh_unreachable', cause: lost });

    const rejected = new Error('User rejected the request.');
    const prompt = new client.TokenManager({ reauthenticate: () => Promise.reject(rejected) });
    const failed = await caught(client.createPartnerClient({ baseUrl: service.url, tokenManager: prompt }).getDailyLimit());
    expect(failed).toBeInstanceOf(client.TokenRenewalError);
    expect(failed).toMatchObject({ code: 'token_renewal_failed', cause: rejected });
    expect(service.count('POST', REFRESH_PATH)).toBe(0);
  });

  it.each([
    [{ token: 'next', refresh_token: 'rotated' }, 'refreshToken'],
    [{ token: 'next', refreshToken: 'rotated', expiresAt: 1_700_000_000 }, 'expiresAt'],
  ])('a refresh result that would be misread (%o) is still refused: TokenRenewalError, its cause InvalidArgumentError %s invalid_tokens', async (result, argument) => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const tokenManager = new client.TokenManager({ tokens: { token: service.issueAccessToken(registeredAccount.address, 900), refreshToken: 'kept' }, refresh: async () => result as never });
    service.revokeAccessTokens();
    const error = await caught(client.createPartnerClient({ baseUrl: service.url, tokenManager, retries: 0 }).getDailyLimit());
    expect(error).toBeInstanceOf(client.TokenRenewalError);
    expect(error).toMatchObject({ code: 'token_renewal_failed', cause: { name: 'InvalidArgumentError', argument, code: 'invalid_tokens' } });
  });

  it('a request without an answer is still a ConnectionError connection_failed (its cause the network error), or a TimeoutError request_timeout with its timeoutMs', async () => {
    const lost = new TypeError('fetch failed');
    const offline = client.createPartnerClient({ baseUrl: 'http://127.0.0.1:1', retries: 0, fetch: () => Promise.reject(lost) });
    const unreachable = await caught(offline.getDailyLimit());
    expect(unreachable).toBeInstanceOf(client.ConnectionError);
    expect(unreachable).toMatchObject({ code: 'connection_failed', cause: lost, message: expect.stringContaining('GET http://127.0.0.1:1/user-api/user/account/limit') });
    const denied = Object.assign(new Error('Requires net access'), { name: 'NotCapable' });
    const deno = client.createPartnerClient({ baseUrl: 'http://127.0.0.1:1', fetch: () => Promise.reject(denied) });
    expect(await caught(deno.getDailyLimit())).toMatchObject({ name: 'ConnectionError', code: 'network_permission_denied', cause: denied });

    const { partnerClient } = await signedInClient();
    service!.script('GET', LIMIT_PATH, { hang: true });
    const timedOut = await caught(partnerClient.getDailyLimit({ timeoutMs: 50 }));
    expect(timedOut).toBeInstanceOf(client.TimeoutError);
    expect(timedOut).toMatchObject({ code: 'request_timeout', timeoutMs: 50 });
  });

  it.each([
    [null, 'options'],
    [{ headers: { authorization: 'Bearer other' } }, 'headers'],
    [{ auth: 'no' }, 'auth'],
  ])('per-call options %o are still refused with InvalidArgumentError invalid_option, argument %s, and nothing is sent', async (options, argument) => {
    const { partnerClient } = await signedInClient();
    const error = await caught(partnerClient.getDailyLimit(options as never));
    expect(error).toBeInstanceOf(client.InvalidArgumentError);
    expect(error).toMatchObject({ argument, code: 'invalid_option' });
    expect(service!.requests).toHaveLength(0);
  });
});

describe('an operation whose code is in a chunk that cannot load fails with PartnerClientError client_code_unavailable', () => {
  it.each([
    ['signInWithEthereum', (partnerClient: ReturnType<Client['createPartnerClient']>) => partnerClient.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE })],
    ['waitForLimitSync', (partnerClient: ReturnType<Client['createPartnerClient']>) => partnerClient.waitForLimitSync()],
    ['getWebhookPublicKey', (partnerClient: ReturnType<Client['createPartnerClient']>) => partnerClient.getWebhookPublicKey()],
  ])('%s', async (operation, call) => {
    const { partnerClient } = await signedInClient();
    const error = await caught(call(partnerClient));
    expect(error).toBeInstanceOf(client.PartnerClientError);
    expect(error).toMatchObject({ code: 'client_code_unavailable', cause: expect.anything() });
    expect((error as Error).message).toBe(`The client's code for ${operation} could not be loaded (a deploy replaced it, or the network is down): reload the page.`);
    expect(service!.requests).toHaveLength(0);
  });
});

describe('an error is not held up by its chunk when the network holds the chunk\'s request for ever', () => {
  let held: Client;
  let heldCopy: string;
  beforeAll(async () => {
    heldCopy = mkdtempSync(join(tmpdir(), 'capi-client-held-'));
    cpSync(join(packageDir, 'dist'), join(heldCopy, 'dist'), { recursive: true });
    symlinkSync(join(packageDir, 'node_modules'), join(heldCopy, 'node_modules'), 'dir');
    const chunks = readdirSync(join(heldCopy, 'dist')).filter((file) => /^(renewal-errors|limit-errors|request-errors)-.*\.js$/.test(file));
    expect(chunks).toHaveLength(3);
    // An import of it never settles, as a request the network never answers; each says it was asked for.
    for (const file of chunks) writeFileSync(join(heldCopy, 'dist', file), `(globalThis.capiHeldChunks ??= []).push(${JSON.stringify(file.replace(/-[A-Z0-9]+\.js$/, ''))});\nawait new Promise(() => {});\n`);
    held = (await import(pathToFileURL(join(heldCopy, 'dist', 'index.js')).href)) as Client;
  });
  afterAll(() => rmSync(heldCopy, { recursive: true, force: true }));
  const requested = () => (globalThis as { capiHeldChunks?: string[] }).capiHeldChunks ?? [];

  // First in this block: a chunk asked for once is not asked for again.
  it('a good refresh asks for no chunk (its result is checked in the main entry): the request it renewed for succeeds', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const refreshedWith: string[] = [];
    const tokenManager = new held.TokenManager({
      tokens: { token: service.issueAccessToken(registeredAccount.address, 900), refreshToken: 'kept' },
      refresh: async (refreshToken) => (refreshedWith.push(refreshToken), { token: service!.issueAccessToken(registeredAccount.address, 900), refreshToken: 'rotated' }),
    });
    service.revokeAccessTokens();
    expect(requested()).toEqual([]);
    await expect(held.createPartnerClient({ baseUrl: service.url, tokenManager, retries: 0 }).getDailyLimit()).resolves.toMatchObject({ amount: expect.any(Number) });
    expect(refreshedWith).toEqual(['kept']);
    expect(requested()).toEqual([]);
  });

  it('a refresh that outlives refreshTimeoutMs fails the renewal (TokenRenewalError, its cause token_renewal_timeout); a caller\'s signal ends its wait with AbortError; a 401 of the limit is an AuthenticationError', async () => {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const silent = new held.TokenManager({
      tokens: { token: service.issueAccessToken(registeredAccount.address, 900), refreshToken: 'kept' },
      refresh: () => new Promise(() => {}), // the refresh endpoint never answers either
      refreshTimeoutMs: 50,
    });
    service.revokeAccessTokens();
    const timedOut = await caught(held.createPartnerClient({ baseUrl: service.url, tokenManager: silent, retries: 0 }).getDailyLimit());
    expect(timedOut).toBeInstanceOf(held.TokenRenewalError);
    // No reauthenticate to fall back on: the renewal failed, for the refresh's timeout.
    expect(timedOut).toMatchObject({ code: 'token_renewal_failed', cause: { name: 'TokenRenewalError', code: 'token_renewal_timeout' } });

    const waiting = new held.TokenManager({ reauthenticate: () => new Promise(() => {}) });
    const controller = new AbortController();
    const wait = caught(waiting.getToken({ signal: controller.signal }));
    controller.abort();
    expect(await wait).toMatchObject({ name: 'AbortError', code: 'aborted' });

    const tokenManager = new held.TokenManager({ tokens: service.issueAccessToken(registeredAccount.address, 900) });
    service.revokeAccessTokens();
    const refused = await caught(held.createPartnerClient({ baseUrl: service.url, tokenManager, retries: 0 }).getDailyLimit());
    expect(refused).toBeInstanceOf(held.AuthenticationError);
    expect(refused).toMatchObject({ status: 401 });

    const lost = new TypeError('fetch failed');
    const offline = held.createPartnerClient({ baseUrl: service.url, retries: 0, fetch: () => Promise.reject(lost) });
    expect(await caught(offline.getDailyLimit())).toMatchObject({ name: 'ConnectionError', code: 'connection_failed', cause: lost });
  });
});
