// The client against broken and hostile servers: a real node:http server on loopback whose
// every answer is scripted per test (no mocked fetch), so that each case meets undici's real
// behaviour on truncated bodies, resets, stalls and redirects.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  createPartnerClient,
  RateLimitError,
  ServerError,
  signerFromViemAccount,
  TimeoutError,
  TokenManager,
  UnexpectedResponseError,
  type FetchFunction,
  type PartnerClient,
  type PartnerClientOptions,
} from '../src/index.js';
import { acceptTerms, createAccount, getOnboardingStatus, getUser, registerUser, waitForOnboardingStatus } from '../src/onboarding.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const LIMIT_PATH = '/user-api/user/account/limit';
const SYNCED = { amount: 5_000, currency: 'USD', syncStatus: 'synced' };
let handler: Handler = (_req, res) => res.end();
let requests: { method: string; path: string; authorization: string | undefined }[] = [];
let server: Server;
let baseUrl: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
// A server (so an origin, so a connection pool) per test: a socket one test's server cut is
// never picked up by the next test's first request.
beforeEach(async () => {
  server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: new URL(req.url ?? '/', 'http://localhost').pathname, authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  requests = [];
  expect(unhandled).toEqual([]);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

const answerJson = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
const jwt = (claims: Record<string, unknown>) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const validToken = () => jwt({ iat: nowSeconds(), exp: nowSeconds() + 3600 });
const signedInClient = (options: Partial<PartnerClientOptions> = {}): PartnerClient =>
  createPartnerClient({ baseUrl, timeoutMs: 2_000, retries: { count: 2, baseDelayMs: 1 }, tokenManager: new TokenManager({ tokens: validToken() }), ...options });
const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
const count = (method: string, path: string) => requests.filter((request) => request.method === method && request.path === path).length;
// Sends the headers and part of a body announced longer, then cuts the socket.
const truncatedBody: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"amount":');
  setTimeout(() => res.destroy(), 10);
};
// Sends the headers and part of the body, then nothing until the test ends.
const stalledBody: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"amount":');
};
// A sign-in service: nonce as given, challenge answering the given body.
const signInService = (nonceBody: string, challengeBody: unknown): Handler => (req, res) => {
  if (req.url?.startsWith('/api/v1/auth/nonce')) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(nonceBody);
  } else answerJson(200, challengeBody)(req, res);
};
const signInParams = () => ({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });

describe('answers that are not the documented body end in UnexpectedResponseError', () => {
  it.each([
    ['text that is not JSON', 'hello'],
    ['JSON of the wrong shape', { amount: '5000', syncStatus: 'synced' }],
    ['a JSON array', [SYNCED]],
    ['JSON null', 'null'],
    ['an HTML page with a JSON content-type', '<!doctype html><html><body>Maintenance</body></html>'],
    ['an empty 200 body', ''],
  ])('%s', async (_case, body) => {
    handler = answerJson(200, body);
    const error = await caught(signedInClient().getDailyLimit());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_limit_body', message: expect.stringMatching(/expected \{amount, syncStatus\}.*Check baseUrl/) });
    expect(count('GET', LIMIT_PATH)).toBe(1);
  });

  it('a seeded run of random bodies gives an AccountLimit or UnexpectedResponseError, nothing else', async () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
    const values = [0, -1, 1.5, 1_000_000, 'x', '', null, true, [], {}, { amount: 1 }, '<html>'];
    const client = signedInClient({ retries: 0 });
    for (let run = 0; run < 40; run += 1) {
      const body = random() < 0.3 ? pick(['', '{', '}{', '"', '[1,', '\u0000', '<html>', 'null', '{"amount":1,"syncStatus":"synced"}']) : { amount: pick(values), syncStatus: pick([...values, 'pending', 'synced']) };
      handler = answerJson(200, body);
      const outcome = await client.getDailyLimit().then((limit) => limit, (error: unknown) => error);
      if (outcome instanceof Error) expect(outcome).toBeInstanceOf(UnexpectedResponseError);
      else expect(outcome).toMatchObject({ amount: expect.any(Number), syncStatus: expect.any(String) });
    }
  });

  it('an HTML error page with a JSON content-type is the typed error of its status, with the page as the message', async () => {
    handler = answerJson(502, '<html><title>502 Bad Gateway</title></html>');
    const error = await caught(signedInClient({ retries: 0 }).getDailyLimit());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, code: 'server_error', message: expect.stringContaining('502 Bad Gateway') });
  });

  it('a status beyond 599 (a bot wall\'s 999) is a plain ApiError, not a ServerError, and not retried', async () => {
    handler = answerJson(999, 'Request denied');
    const error = await caught(signedInClient().getDailyLimit());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 999, code: 'api_error', message: expect.stringContaining('Request denied') });
    expect(count('GET', LIMIT_PATH)).toBe(1);
  });

  it('a 204 answer to the PUT is an UnexpectedResponseError, not an empty success', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    await expect(signedInClient().setDailyLimit({ amount: 100 })).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_limit_body' });
  });
});

describe('the onboarding functions read the status before the body', () => {
  // openapi-fetch gives an error answer without a body (Content-Length: 0) as `error: undefined`.
  const emptyAnswer = (status: number): Handler => (_req, res) => res.writeHead(status, { 'content-length': '0' }).end();

  it.each([
    ['getOnboardingStatus', 401, AuthenticationError, (client: PartnerClient) => getOnboardingStatus(client)],
    ['registerUser', 503, ServerError, (client: PartnerClient) => registerUser(client, { email: 'ada@example.com', otp: '123456' })],
    ['acceptTerms', 409, ApiError, (client: PartnerClient) => acceptTerms(client)],
    ['createAccount', 500, ServerError, (client: PartnerClient) => createAccount(client)],
  ] as const)('%s: an empty %i answer is the typed error of its status, not an unexpected body', async (_operation, status, ErrorClass, run) => {
    handler = emptyAnswer(status);
    const error = await caught(run(signedInClient({ retries: 0 })));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).not.toBeInstanceOf(UnexpectedResponseError);
  });

  it('waitForOnboardingStatus polls on through empty 503 answers, and ends on the status once the service answers', async () => {
    let polls = 0;
    handler = (req, res) => (++polls <= 2 ? emptyAnswer(503)(req, res) : answerJson(200, { status: 'action_accept_tos' })(req, res));
    await expect(waitForOnboardingStatus(signedInClient({ retries: 0 }), 'action_accept_tos', { timeoutMs: 10_000, pollIntervalMs: 10 })).resolves.toEqual({ status: 'action_accept_tos' });
    expect(polls).toBe(3);
  });

  it.each([
    ['getUser', 'GET', (client: PartnerClient) => getUser(client), '<html>login</html>'],
    ['createAccount', 'POST', (client: PartnerClient) => createAccount(client), '{"id": "u1", '],
  ] as const)('%s: a 2xx body that is not JSON is UnexpectedResponseError unexpected_onboarding_body, never a bare SyntaxError', async (operation, method, run, body) => {
    handler = answerJson(200, body);
    const error = await caught(run(signedInClient({ retries: 0 })));
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_onboarding_body', message: expect.stringContaining(`${operation} answered 2xx with a body that is not JSON`) });
    if (method === 'POST') expect((error as Error).message).toMatch(/may have been applied: read the user's state/);
    else expect((error as Error).message).not.toMatch(/may have been applied/);
  });

  it('a SyntaxError thrown before anything is sent (a token manager reading corrupt storage) stays what it is, not a 2xx body that is not JSON', async () => {
    class StoredTokenManager extends TokenManager {
      override async getToken(): Promise<string> {
        return (JSON.parse('{"token": "eyJ') as { token: string }).token; // corrupt storage
      }
    }
    const error = await caught(acceptTerms(createPartnerClient({ baseUrl, tokenManager: new StoredTokenManager() })));
    expect(error).toBeInstanceOf(SyntaxError);
    expect(requests).toEqual([]);
  });
});

describe('a body nested thousands of levels deep ends in the typed error, which can still be logged', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;

  it('as a 200 answer of the limit or the public key: UnexpectedResponseError, not a RangeError', async () => {
    handler = answerJson(200, deep);
    const client = signedInClient({ webhooksUrl: baseUrl });
    await expect(client.getDailyLimit()).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_limit_body', message: expect.stringContaining('nested too deeply') });
    await expect(client.getWebhookPublicKey()).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'public_key_unavailable' });
  });

  it('as an error body: the typed error, whose JSON cuts the nesting and redacts a token at any depth', async () => {
    const token = validToken();
    let nested: unknown = { echoed: `Bearer ${token}` };
    for (let level = 0; level < 40; level += 1) nested = { level: nested };
    for (const body of [deep, nested]) {
      handler = answerJson(500, body);
      const error = await caught(signedInClient({ retries: 0 }).getDailyLimit());
      expect(error).toBeInstanceOf(ServerError);
      const logged = JSON.stringify(error);
      expect(logged).toContain('[nested too deep]');
      expect(logged).not.toContain(token);
    }
  });
});

describe('token redaction stays linear on a hostile error body and still catches every token', () => {
  // With the former `\b` pattern this body blocked the event loop for about twenty minutes.
  it('two megabytes of "eyJ-" build the error at once', async () => {
    handler = answerJson(500, 'eyJ-'.repeat(500_000));
    await expect(signedInClient({ retries: 0 }).getDailyLimit()).rejects.toBeInstanceOf(ServerError);
  });

  it('a seeded run of tokens among random text and separators: none survives in the error', async () => {
    let seed = 23;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = (items: string) => items[Math.floor(random() * items.length)]!;
    const noise = () => Array.from({ length: Math.floor(random() * 12) }, () => pick('eyJa.-_ Z9')).join('');
    const client = signedInClient({ retries: 0 });
    for (let run = 0; run < 30; run += 1) {
      const token = jwt({ run, exp: nowSeconds() + run });
      const body = `${noise()}${pick(' "=:,/\n.')}${token}${pick(' "=:,;\n.')}${noise()}`;
      handler = answerJson(500, { message: body });
      const error = await caught(client.getDailyLimit());
      expect(error).toBeInstanceOf(ServerError);
      expect(JSON.stringify(error)).not.toContain(token.split('.')[1]);
      expect((error as Error).message).not.toContain(token.split('.')[1]);
    }
  });
});

describe('a connection cut before or during the answer is a ConnectionError, retried for GET only', () => {
  it.each([
    ['reset before the headers', ((req) => req.socket.destroy()) as Handler],
    ['reset after the headers', ((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      setTimeout(() => res.socket?.destroy(), 10);
    }) as Handler],
    ['a body shorter than its content-length', truncatedBody],
  ])('%s', async (_case, cut) => {
    handler = cut;
    const error = await caught(signedInClient().getDailyLimit());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'connection_failed', message: expect.stringMatching(/Could not get a response to GET .*Check baseUrl/) });
    expect(count('GET', LIMIT_PATH)).toBe(3);

    const put = await caught(signedInClient().setDailyLimit({ amount: 100 }));
    expect(put).toBeInstanceOf(ConnectionError);
    expect(count('PUT', LIMIT_PATH)).toBe(1);
    // As a timed-out PUT: the new limit may have been set, and the message says how to find out.
    expect(put).toMatchObject({ code: 'connection_failed', cause: expect.any(Error), message: expect.stringMatching(/^Could not get a response to PUT http:\/\/\S+\/user-api\/user\/account\/limit: .+\. If the request was sent, the new limit may have been set.*read the limit with getDailyLimit\(\) to see whether it applied.*Check baseUrl/) });
  });
});

describe('a body that stalls after the headers times out', () => {
  it('with the global fetch, for the client methods and for raw', async () => {
    handler = stalledBody;
    const client = signedInClient({ timeoutMs: 200, retries: 0 });
    await expect(client.getDailyLimit()).rejects.toMatchObject({ name: 'TimeoutError', code: 'request_timeout', timeoutMs: 200 });
    await expect(client.raw.GET(LIMIT_PATH)).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('times out with a custom fetch that ignores the AbortSignal', () => {
  // A fetch wrapper that drops the signal, as some instrumentation and polyfills do.
  const fetchIgnoringSignal: FetchFunction = (url, init) => {
    const { signal: _ignored, ...rest } = init;
    return fetch(url, rest);
  };

  it('when the server never sends the headers', async () => {
    handler = () => undefined;
    const client = signedInClient({ fetch: fetchIgnoringSignal, timeoutMs: 200, retries: { count: 1, baseDelayMs: 1 } });
    const error = await caught(client.getDailyLimit());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'request_timeout', timeoutMs: 200 });
    expect(count('GET', LIMIT_PATH)).toBe(2);
  });

  it('when the body stalls after the headers, for the client methods and for raw', async () => {
    handler = stalledBody;
    const client = signedInClient({ fetch: fetchIgnoringSignal, timeoutMs: 200, retries: 0 });
    await expect(client.getDailyLimit()).rejects.toMatchObject({ name: 'TimeoutError', timeoutMs: 200 });
    await expect(client.raw.GET(LIMIT_PATH)).rejects.toBeInstanceOf(TimeoutError);
  });

  it("when the caller's signal aborts", async () => {
    handler = () => undefined;
    const client = signedInClient({ fetch: fetchIgnoringSignal, timeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = caught(client.getDailyLimit({ signal: controller.signal }));
    while (count('GET', LIMIT_PATH) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(AbortError);
  });

  it('and still returns what such a fetch answers in time', async () => {
    handler = answerJson(200, SYNCED);
    await expect(signedInClient({ fetch: fetchIgnoringSignal }).getDailyLimit()).resolves.toEqual(SYNCED);
  });
});

describe('timeouts and waits beyond what a timer holds are not cut to 1 ms', () => {
  it('a timeoutMs above 2^31-1 ms lets a slow answer arrive', async () => {
    handler = (req, res) => setTimeout(() => answerJson(200, SYNCED)(req, res), 50);
    await expect(signedInClient({ timeoutMs: 3e9, retries: 0 }).getDailyLimit()).resolves.toEqual(SYNCED);
  });

  it('a Retry-After above 2^31-1 ms is not waited out even when maxRetryAfterMs is Infinity', async () => {
    handler = answerJson(429, { error: 'slow down' }, { 'retry-after': '3000000' });
    const error = await caught(signedInClient({ retries: { count: 1, maxRetryAfterMs: Infinity } }).getDailyLimit());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterMs: 3_000_000_000 });
    expect(count('GET', LIMIT_PATH)).toBe(1);
  });
});

describe('waitForLimitSync gives up at its timeoutMs, even while a poll is being retried', () => {
  it('a service that never answers the polls', async () => {
    handler = () => undefined;
    const client = signedInClient({ timeoutMs: 600, retries: { count: 2, baseDelayMs: 1 } });
    const error = await caught(client.waitForLimitSync({ timeoutMs: 1_000 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'limit_sync_timeout', timeoutMs: 1_000, message: expect.stringContaining('could not be read (no answer to the last poll) after 1000 ms') });
    // Each attempt is allowed 600 ms: a third could only start after the 1,000 ms deadline.
    expect(count('GET', LIMIT_PATH)).toBeLessThanOrEqual(2);
  });

  it("the caller's signal still ends it with AbortError", async () => {
    handler = () => undefined;
    const controller = new AbortController();
    const pending = caught(signedInClient().waitForLimitSync({ timeoutMs: 60_000, signal: controller.signal }));
    while (count('GET', LIMIT_PATH) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(AbortError);
  });
});

describe('waitForOnboardingStatus ends at its timeoutMs, polls included, with onboarding_wait_timeout', () => {
  const ONBOARDING_PATH = '/user/onboarding';

  it('a service that never answers the polls: the poll being retried is stopped at the deadline', async () => {
    handler = () => undefined;
    const client = signedInClient({ timeoutMs: 600, retries: { count: 2, baseDelayMs: 1 } });
    const started = Date.now();
    const error = await caught(waitForOnboardingStatus(client, 'completed', { timeoutMs: 1_000 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'onboarding_wait_timeout', timeoutMs: 1_000, message: expect.stringContaining('could not be read (no answer to the last poll) within 1000 ms') });
    // Each attempt is allowed 600 ms: a third could only start after the 1,000 ms deadline.
    expect(count('GET', ONBOARDING_PATH)).toBeLessThanOrEqual(2);
    // Not the retries' 3 x 600 ms (and far from the default client's 3 x 30 s).
    expect(Date.now() - started).toBeLessThan(1_600);
  });

  it('the last poll, made at the deadline, is one attempt within the client\'s request timeout, then onboarding_wait_timeout (not request_timeout)', async () => {
    let polls = 0;
    handler = (req, res) => (polls++ === 0 ? answerJson(200, { status: 'action_complete_kyc' })(req, res) : undefined);
    const client = signedInClient({ timeoutMs: 400, retries: { count: 2, baseDelayMs: 1 } });
    const error = await caught(waitForOnboardingStatus(client, 'completed', { timeoutMs: 300, pollIntervalMs: 5_000 }));
    expect(error).toMatchObject({ name: 'TimeoutError', code: 'onboarding_wait_timeout', timeoutMs: 300 });
    expect(count('GET', ONBOARDING_PATH)).toBe(2);
  });

  it("the caller's signal still ends it with AbortError", async () => {
    handler = () => undefined;
    const controller = new AbortController();
    const pending = caught(waitForOnboardingStatus(signedInClient(), 'completed', { timeoutMs: 60_000, signal: controller.signal }));
    while (count('GET', ONBOARDING_PATH) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError', code: 'aborted' });
  });
});

describe('redirects', () => {
  it('follows a same-origin redirect with the token', async () => {
    handler = (req, res) => (req.url === LIMIT_PATH ? res.writeHead(302, { location: '/moved' }).end() : answerJson(200, SYNCED)(req, res));
    await expect(signedInClient().getDailyLimit()).resolves.toEqual(SYNCED);
    expect(requests.map((request) => [request.path, request.authorization?.startsWith('Bearer ')])).toEqual([[LIMIT_PATH, true], ['/moved', true]]);
  });

  it('does not carry the token to another origin', async () => {
    const other = createServer((req, res) => answerJson(200, { ...SYNCED, authorization: req.headers.authorization ?? null })(req, res));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      handler = (_req, res) => res.writeHead(307, { location: `http://localhost:${(other.address() as AddressInfo).port}/x` }).end();
      await expect(signedInClient().getDailyLimit()).resolves.toMatchObject({ authorization: null });
    } finally {
      other.closeAllConnections();
      other.close();
    }
  });

  it('a redirect without Location is an ApiError with the status', async () => {
    handler = (_req, res) => res.writeHead(302).end();
    await expect(signedInClient().getDailyLimit()).rejects.toMatchObject({ name: 'ApiError', status: 302, code: 'api_error' });
  });

  it('a redirect loop is a ConnectionError that says so', async () => {
    handler = (req, res) => res.writeHead(302, { location: req.url }).end();
    const error = await caught(signedInClient({ retries: 0 }).getDailyLimit());
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/redirect/);
  });
});

describe('401, 429 and 503 with and without their headers', () => {
  it.each([
    ['a body', answerJson(401, { message: 'Unauthorized' })],
    ['WWW-Authenticate and no body', answerJson(401, '', { 'www-authenticate': 'Bearer error="invalid_token"' })],
  ])('401 with %s is an AuthenticationError that says to sign in again', async (_case, answer) => {
    handler = answer;
    const error = await caught(signedInClient().getDailyLimit());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toMatch(/Sign in again/);
    expect(count('GET', LIMIT_PATH)).toBe(1);
  });

  it('a 503 whose Retry-After is not waited out says when to come back, like a 429', async () => {
    handler = answerJson(503, { message: 'Down for maintenance' }, { 'retry-after': '3600' });
    const error = await caught(signedInClient().getDailyLimit());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 503, retryAfterMs: 3_600_000, message: expect.stringContaining('Retry after 3600 s') });
    expect((error as ServerError).toJSON()).toMatchObject({ retryAfterMs: 3_600_000 });
    expect(count('GET', LIMIT_PATH)).toBe(1);
  });

  it.each([
    ['no Retry-After', undefined, 3],
    ['Retry-After 0', '0', 3],
    ['an HTTP-date in the past', 'Wed, 21 Oct 2015 07:28:00 GMT', 3],
    ['a negative number (ignored)', '-5', 3],
    ['garbage (ignored)', 'soon', 3],
    ['an absurd number of seconds', '99999999999999999999999', 1],
    ['an HTTP-date far ahead', 'Fri, 31 Dec 9999 23:59:59 GMT', 1],
  ])('429 and 503 with %s: retried by the policy or handed back at once', async (_case, retryAfter, attempts) => {
    for (const status of [429, 503]) {
      requests = [];
      handler = answerJson(status, { error: 'busy' }, retryAfter === undefined ? {} : { 'retry-after': retryAfter });
      const error = await caught(signedInClient().getDailyLimit());
      expect(error).toBeInstanceOf(status === 429 ? RateLimitError : ServerError);
      expect(error).toBeInstanceOf(ApiError);
      expect(count('GET', LIMIT_PATH)).toBe(attempts);
    }
  });
});

describe('sign-in against a broken service stores nothing unless it succeeds', () => {
  it('reads a nonce wrapped in quotes and whitespace (seeded run)', async () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pad = () => [' ', '\t', '\n', '\r\n', ''][Math.floor(random() * 5)]!.repeat(1 + Math.floor(random() * 3));
    for (let run = 0; run < 12; run += 1) {
      const nonce = Math.floor(random() * 36 ** 10).toString(36).padStart(10, 'a');
      const quote = ['"', "'", ''][Math.floor(random() * 3)]!;
      let signed = '';
      handler = signInService(`${pad()}${quote}${nonce}${quote}${pad()}`, { token: validToken() });
      const client = createPartnerClient({ baseUrl, retries: 0 });
      await client.signInWithEthereum({ ...signInParams(), signMessage: (message) => ((signed = message), signerFromViemAccount(registeredAccount).signMessage(message)) });
      expect(signed).toContain(`\nNonce: ${nonce}\n`);
    }
  });

  it.each([
    ['an HTML page instead of the token', '<html>oops</html>', 'missing_token'],
    ['an empty body', '', 'missing_token'],
    ['a token that is not a string', { token: 42 }, 'missing_token'],
    ['a token with a space and a line break', { token: 'opaque token\nX-Injected: 1' }, 'invalid_token'],
    ['a token with non-ASCII characters', { token: 'tökén' }, 'invalid_token'],
  ])('%s: UnexpectedResponseError, nothing stored', async (_case, challengeBody, code) => {
    handler = signInService('abcdef123456', challengeBody);
    const client = createPartnerClient({ baseUrl, retries: 0 });
    const error = await caught(client.signInWithEthereum(signInParams()));
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code, message: expect.stringMatching(code === 'invalid_token' ? /cannot be sent in the Authorization header \(it holds spaces.*Check baseUrl/ : /Check baseUrl/) });
    expect((error as Error).message).not.toContain('[redacted token]');
    expect(client.tokenManager.hasToken).toBe(false);
  });

  it('a token that is not a JWT is kept, expiring after ttlInSeconds', async () => {
    handler = signInService('abcdef123456', { token: 'opaque-token-123' });
    const client = createPartnerClient({ baseUrl, retries: 0 });
    const before = Date.now();
    const { expiresAt } = await client.signInWithEthereum({ ...signInParams(), ttlInSeconds: 3600 });
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(client.tokenManager.hasToken).toBe(true);
  });

  it.each([
    ['absent', jwt({ iat: 1 })],
    ['a string', jwt({ exp: '9999999999' })],
    ['beyond what a Date holds', jwt({ exp: 1e300 })],
  ])('a JWT whose exp is %s expires after ttlInSeconds', async (_case, token) => {
    handler = signInService('abcdef123456', { token });
    const client = createPartnerClient({ baseUrl, retries: 0 });
    const before = Date.now();
    const { expiresAt } = await client.signInWithEthereum({ ...signInParams(), ttlInSeconds: 7200 });
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 7_200_000);
    expect(client.tokenManager.hasToken).toBe(true);
  });

  it('a JWT with iat whose exp is in the past (a device clock far ahead) lasts its lifetime from its arrival: no renewal', async () => {
    handler = (req, res) => (req.url === LIMIT_PATH ? answerJson(200, SYNCED)(req, res) : signInService('abcdef123456', { token: jwt({ iat: nowSeconds() - 7200, exp: nowSeconds() - 3600 }) })(req, res));
    let renewals = 0;
    let client: PartnerClient;
    const tokenManager = new TokenManager({ reauthenticate: () => ((renewals += 1), client.signInWithEthereum(signInParams())) });
    client = createPartnerClient({ baseUrl, tokenManager, retries: 0 });
    const before = Date.now();
    const { expiresAt } = await client.signInWithEthereum(signInParams());
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000); // exp - iat: one hour, on this device's clock
    for (let call = 0; call < 3; call += 1) await expect(client.getDailyLimit()).resolves.toEqual(SYNCED);
    expect(renewals).toBe(0);
  });

  it('a JWT without iat whose exp is in the past causes one renewal, not one per request', async () => {
    // A device clock far off makes every token without iat (read by its exp) look expired on arrival.
    const expired = () => jwt({ exp: nowSeconds() - 3600 });
    handler = (req, res) => (req.url === LIMIT_PATH ? answerJson(200, SYNCED)(req, res) : signInService('abcdef123456', { token: expired() })(req, res));
    let renewals = 0;
    let client: PartnerClient;
    const tokenManager = new TokenManager({ reauthenticate: () => ((renewals += 1), client.signInWithEthereum(signInParams())) });
    client = createPartnerClient({ baseUrl, tokenManager, retries: 0 });
    const { expiresAt } = await client.signInWithEthereum(signInParams());
    expect(expiresAt.getTime()).toBeLessThan(Date.now());
    for (let call = 0; call < 5; call += 1) await expect(client.getDailyLimit()).resolves.toEqual(SYNCED);
    expect(renewals).toBe(1);

    // Once the service refuses it: one renewal, whose token is again used until the next 401.
    let refusals = 1;
    handler = (req, res) =>
      req.url !== LIMIT_PATH ? signInService('abcdef123456', { token: expired() })(req, res) : refusals-- > 0 ? answerJson(401, { message: 'jwt expired' })(req, res) : answerJson(200, SYNCED)(req, res);
    for (let call = 0; call < 3; call += 1) await expect(client.getDailyLimit()).resolves.toEqual(SYNCED);
    expect(renewals).toBe(2);
  });

  it('a wallet prompt that never settles ends with the signal, and the next sign-in runs', async () => {
    handler = signInService('abcdef123456', { token: validToken() });
    const client = createPartnerClient({ baseUrl, retries: 0 });
    const controller = new AbortController();
    const prompt = caught(client.signInWithEthereum({ ...signInParams(), signal: controller.signal, signMessage: () => (controller.abort(), new Promise<`0x${string}`>(() => undefined)) }));
    const error = await prompt;
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).message).toMatch(/signMessage.*nothing was stored/);
    expect(client.tokenManager.hasToken).toBe(false);
    await expect(client.signInWithEthereum({ ...signInParams(), statement: 'Another sign-in.' })).resolves.toMatchObject({ token: expect.any(String) });
  });

  it("a request waiting for a renewal that never settles ends with the caller's signal", async () => {
    handler = answerJson(200, SYNCED);
    const client = createPartnerClient({ baseUrl, tokenManager: new TokenManager({ reauthenticate: () => new Promise(() => undefined) }) });
    const controller = new AbortController();
    const pending = caught(client.getDailyLimit({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toBeInstanceOf(AbortError);
    expect(requests).toHaveLength(0);
  });
});
