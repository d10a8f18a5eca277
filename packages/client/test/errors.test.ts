import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  createPartnerClient,
  errorFromResponse,
  ForbiddenError,
  NotFoundError,
  PartnerClientError,
  RateLimitError,
  ServerError,
  signerFromViemAccount,
  TimeoutError,
  ValidationError,
  WafForbiddenError,
  type PartnerClient,
} from '../src/index.js';
import { buildSiweMessage } from '../src/siwe.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
let service: PartnerService;
let client: PartnerClient;

// The limit stands for an authenticated route: on the newer generation, whose operation it is
// (the older one answers it 404 before reading the token).
beforeEach(async () => {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
  client = createPartnerClient({ baseUrl: service.url, retries: 0 });
});
afterEach(() => service.close());

const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('maps each error status of the service to its error class', () => {
  it('401 without a token is an AuthenticationError', async () => {
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(PartnerClientError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', body: { message: 'Unauthorized' }, requestId: 'req-1' });
    expect((error as Error).message).toMatch(/^Authentication failed \(HTTP 401\): Sign in again with signInWithEthereum\(\)/);
    expect(error).toMatchObject({ serviceMessage: 'Unauthorized' });
  });

  it('400 for a body that is not JSON is a ValidationError', async () => {
    await signIn();
    const { error, response } = await client.raw.PUT(LIMIT_PATH, { body: 'not json' as never, bodySerializer: (body: unknown) => body as string });
    const typed = errorFromResponse(response, error);
    expect(typed).toBeInstanceOf(ValidationError);
    expect(typed).toMatchObject({ status: 400, code: 'validation_failed', body: { error: 'Body must be JSON' } });
  });

  it('422 for an out-of-range amount is a ValidationError with the service code', async () => {
    await signIn();
    // raw skips the client's own range check, so the service's answer is what is tested.
    const { error, response } = await client.raw.PUT(LIMIT_PATH, { body: { amount: 2_000_000, currency: 'USD' } });
    const typed = errorFromResponse(response, error);
    expect(typed).toBeInstanceOf(ValidationError);
    expect(typed).toMatchObject({ status: 422, code: 'ValidationError' });
    expect(typed.message).toContain('amount must be an integer between 1 and 1000000');
  });

  it('403 WAFForbidden for a SIWE message on 127.0.0.1 is a WafForbiddenError', async () => {
    const { data: nonce } = await client.raw.GET('/api/v1/auth/nonce', { parseAs: 'text' });
    const message = buildSiweMessage({ address: registeredAccount.address, chainId: 100, domain: '127.0.0.1:3000', uri: 'http://127.0.0.1:3000', nonce: String(nonce) });
    const signature = await registeredAccount.signMessage({ message });
    const { error, response } = await client.raw.POST('/api/v1/auth/challenge', { body: { message, signature, ttlInSeconds: 3600 } });
    const typed = errorFromResponse(response, error);
    expect(typed).toBeInstanceOf(WafForbiddenError);
    expect(typed).toBeInstanceOf(ForbiddenError);
    expect(typed).toMatchObject({ status: 403, code: 'WAFForbidden' });
    expect(typed.message).toMatch(/use localhost/);
  });

  it('404 from a wrong base URL is a NotFoundError', async () => {
    const wrong = createPartnerClient({ baseUrl: `${service.url}/v2`, retries: 0 });
    const error = await caught(wrong.getDailyLimit());
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toMatch(/Check baseUrl/);
  });

  it('409 is a ConflictError with the service\'s code, and says to read the current state (on the limit: to create the account)', async () => {
    const body = { code: 'OnboardingStepNotReached', message: 'The user is at action_accept_tos; accept the terms first' };
    const generic = errorFromResponse(new Response(null, { status: 409 }), body);
    expect(generic).toBeInstanceOf(ConflictError);
    expect(generic.message).toBe(
      'The request conflicts with the current state (HTTP 409 OnboardingStepNotReached): The user is at action_accept_tos; accept the terms first. Read the current state (for onboarding: the onboarding status) and act on it',
    );
    service.script('PUT', LIMIT_PATH, { status: 409, body });
    const error = await caught(client.setDailyLimit({ amount: 5_000 }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'ConflictError', status: 409, code: 'OnboardingStepNotReached' });
    // The operation's advice stands in place of the service's sentence, which is serviceMessage.
    expect((error as Error).message).toMatch(
      /^The request conflicts with the current state \(HTTP 409 OnboardingStepNotReached\): The limit is on the account, not created yet: finish onboarding up to createAccount\(\)/,
    );
    expect(error).toMatchObject({ serviceMessage: 'The user is at action_accept_tos; accept the terms first' });
    expect(generic.serviceMessage).toBe('The user is at action_accept_tos; accept the terms first');
    service.script('PUT', LIMIT_PATH, { status: 409, body: 'busy' });
    expect(await caught(client.setDailyLimit({ amount: 5_000 }))).toMatchObject({ name: 'ConflictError', code: 'conflict' });
    // Given advice, errorFromResponse says it in place of the service's sentence; without, both.
    const advised = errorFromResponse(new Response(null, { status: 409 }), body, { advice: 'Call getOnboardingStatus()' });
    expect(advised.message).toBe('The request conflicts with the current state (HTTP 409 OnboardingStepNotReached): Call getOnboardingStatus()');
    expect(advised.serviceMessage).toBe(body.message);
  });

  it('429 is a RateLimitError with retryAfterMs', async () => {
    service.script('GET', LIMIT_PATH, { status: 429, headers: { 'retry-after': '120' }, body: { message: 'Slow down' } });
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 120_000, code: 'rate_limited' });
    expect((error as Error).message).toMatch(/Retry after 120 s/);
  });

  it.each([500, 502, 503, 504])('%i is a ServerError', async (status) => {
    service.script('GET', LIMIT_PATH, { status, body: { error: 'upstream failed' } });
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status, code: 'server_error' });
  });

  it('another status is a plain ApiError', async () => {
    service.script('GET', LIMIT_PATH, { status: 418, body: { message: 'I am a teapot' } });
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 418, code: 'api_error' });
  });
});

describe('reads error bodies of every shape the service uses', () => {
  it.each([
    ['{error}', { error: 'Invalid signature' }, 'Invalid signature', 'server_error'],
    ['{message}', { message: 'Something broke' }, 'Something broke', 'server_error'],
    ['{code, message}', { code: 'UpstreamDown', message: 'Card processor unavailable' }, 'Card processor unavailable', 'UpstreamDown'],
    ['plain text', 'Bad gateway from proxy', 'Bad gateway from proxy', 'server_error'],
    ['an empty body', '', undefined, 'server_error'],
  ])('%s', async (_shape, body, message, code) => {
    service.script('GET', LIMIT_PATH, { status: 502, body });
    const error = (await caught(client.getDailyLimit())) as ServerError;
    expect(error).toBeInstanceOf(ServerError);
    expect(error.code).toBe(code);
    if (message === undefined) expect(error.message).toMatch(/^The service failed \(HTTP 502\)\. Retry later/);
    else expect(error.message).toContain(`: ${message}.`);
  });
});

describe('reports a request that got no response as ConnectionError, TimeoutError or AbortError', () => {
  it('a refused connection is a ConnectionError with the cause', async () => {
    const closed = await startPartnerService();
    const url = closed.url;
    await closed.close();
    const offline = createPartnerClient({ baseUrl: url, retries: 0 });
    const error = await caught(offline.getDailyLimit());
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).code).toBe('connection_failed');
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("ends the cause's sentence once: Bun's question mark is not followed by a full stop, undici's cause is in brackets", async () => {
    const bun = createPartnerClient({ baseUrl: 'http://127.0.0.1:1', retries: 0, fetch: async () => { throw new TypeError('Unable to connect. Is the computer able to access the url?'); } });
    const message = ((await caught(bun.getDailyLimit())) as Error).message;
    expect(message).toBe('Could not get a response to GET http://127.0.0.1:1/user-api/user/account/limit: Unable to connect. Is the computer able to access the url? Check baseUrl/webhooksUrl and the network (in a browser, also CORS).');
    const undici = createPartnerClient({ baseUrl: 'http://127.0.0.1:1', retries: 0, fetch: async () => { throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }); } });
    expect(((await caught(undici.getDailyLimit())) as Error).message).toMatch(/: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:1\)\. Check baseUrl/);
  });

  it('a dropped connection is a ConnectionError (a GET: nothing about having been applied)', async () => {
    service.script('GET', LIMIT_PATH, { dropConnection: true });
    const error = await caught(client.getDailyLimit({ retries: 0 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).not.toMatch(/may have been applied/);
  });

  it('no answer within timeoutMs is a TimeoutError', async () => {
    service.script('GET', LIMIT_PATH, { hang: true });
    const error = await caught(client.getDailyLimit({ timeoutMs: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'request_timeout', timeoutMs: 50 });
  });

  it('an aborted signal is an AbortError', async () => {
    service.script('GET', LIMIT_PATH, { hang: true });
    const controller = new AbortController();
    const pending = caught(client.getDailyLimit({ signal: controller.signal }));
    while (service.count('GET', LIMIT_PATH) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).code).toBe('aborted');
  });
});

describe('errors serialize for structured logs', () => {
  it('toJSON holds name, code, message, status, request id, the service\'s message and body; inspect shows the class', async () => {
    const error = (await caught(client.getDailyLimit())) as AuthenticationError;
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'AuthenticationError',
      code: 'unauthorized',
      message: error.message,
      status: 401,
      requestId: 'req-1',
      serviceMessage: 'Unauthorized',
      body: { message: 'Unauthorized' },
    });
    expect(inspect(error)).toContain('AuthenticationError');
    expect(String(error)).toMatch(/^AuthenticationError: Authentication failed/);
  });
});
