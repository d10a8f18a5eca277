// The one place where requests leave the client, both from its own methods and from
// `client.raw` (openapi-fetch hands its Requests to `transport.fetch`). It adds the bearer
// token, the per-request timeout, the caller's AbortSignal, retries with backoff and the
// single renewal after a 401.

import { abortableSleep } from './abortable-sleep.js';
import { readAnswerBody } from './answer-body.js';
import { describeValue } from './describe-value.js';
import { readErrorBody } from './error-body.js';
import { AbortError, ConnectionError, InvalidArgumentError, isPermissionDenial, loadChunk, TimeoutError } from './errors.js';
import { parseRetryAfter } from './retry-after.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { assertRetryCount, backoffDelay, isRetriedByDefault, isRetryableStatus, type RetryPolicy } from './retry-policy.js';
import { assertSignalOption } from './signal-option.js';
import { MAX_TIMER_DELAY_MS } from './timer-delay.js';
import { renewalErrors, sessionOf, type TokenManager } from './token-manager.js';
import { untilAborted } from './until-aborted.js';

/**
 * Per-call options, accepted by every method of the client and by every `client.raw` call.
 * (A type alias rather than an interface, so that it fits openapi-fetch's open init object.)
 *
 * @example
 * await client.setDailyLimit({ amount: 50_000 }, { retries: 2, timeoutMs: 5_000, signal });
 * await client.raw.GET('/user/onboarding', { retries: 0 });
 */
export type RequestOptions = {
  /** Cancels the call, including its retries, backoff waits and a wait for a token renewal; it then rejects with `AbortError`. */
  signal?: AbortSignal | undefined;
  /**
   * Time allowed for each attempt, from sending to the last byte of the body. A wait for a
   * token renewal does not count: it is bounded by the TokenManager's `refreshTimeoutMs` and
   * `reauthenticateTimeoutMs` (and ended by `signal`).
   */
  timeoutMs?: number | undefined;
  /** Retries for this call; PUT and POST are retried only when this is given. */
  retries?: number | undefined;
  /**
   * `false` sends no bearer token and never renews one (sign-in, public key). Default true; a
   * `client.raw` call given its own `Authorization` header is sent with that header, as `false`.
   */
  auth?: boolean | undefined;
};

/**
 * Why a request is being retried, for `onRetry` (logging, metrics). Never holds a token.
 *
 * @example
 * createPartnerClient({ baseUrl, onRetry: (event: RetryEvent) => log.warn(`retry ${event.retry} of ${event.method} ${event.url} in ${event.delayMs} ms`) });
 */
export interface RetryEvent {
  method: string;
  url: string;
  /** 1 for the first retry. */
  retry: number;
  /** How long the client waits before this retry. */
  delayMs: number;
  reason: 'status' | 'connection' | 'timeout';
  /** The status that caused the retry, for `reason: 'status'`. */
  status?: number | undefined;
  /** Whether `delayMs` came from the service's `Retry-After`. */
  fromRetryAfter: boolean;
}

/**
 * The fetch the client sends through: the global `fetch` or anything with its signature.
 *
 * @example
 * const loggingFetch: FetchFunction = (url, init) => { console.log(init.method, url); return fetch(url, init); };
 */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/**
 * What {@link createTransport} needs.
 *
 * @example
 * const options: TransportOptions = { fetch, tokenManager, timeoutMs: 30_000, retryPolicy: resolveRetryPolicy(2) };
 */
export interface TransportOptions {
  fetch: FetchFunction;
  /**
   * Whether `fetch` is known to stop when its `init.signal` aborts, body included (the global
   * fetch). When not, each exchange is also raced against the timeout and the caller's signal,
   * so that a fetch that ignores the signal cannot outlast them. Default false.
   */
  fetchHonoursSignal?: boolean | undefined;
  tokenManager: TokenManager;
  timeoutMs: number;
  retryPolicy: RetryPolicy;
  onRetry?: ((event: RetryEvent) => void) | undefined;
}

/**
 * A request as the transport sends it; the body is bytes or text so that it can be sent again.
 *
 * @example
 * const request: OutgoingRequest = { method: 'GET', url: `${baseUrl}/user-api/user/account/limit`, headers: new Headers() };
 */
export interface OutgoingRequest {
  method: string;
  url: string;
  /**
   * This call's own headers, so each attempt can set its token on them: a plain object from the
   * client's methods (fetch copies it more cheaply than a Headers), the Request's Headers from `client.raw`.
   */
  headers: Headers | Record<string, string>;
  body?: ArrayBuffer | string | undefined;
  /** Other fetch options carried over from a Request (credentials, redirect, ...). */
  init?: RequestInit | undefined;
  /** `text` for the client's own methods (their answers are JSON or text); default `bytes`, for `client.raw`. */
  readBodyAs?: 'bytes' | 'text' | undefined;
}

/**
 * A complete answer: the body is fully read, under the same timeout as the rest.
 *
 * @example
 * const answer: BufferedAnswer = await transport.send(request);
 */
export interface BufferedAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  url: string;
  /** A string when the request asked for `readBodyAs: 'text'`; null for 204, 205 and 304. */
  body: ArrayBuffer | string | null;
}

/**
 * Sends requests with the client's behaviour; `fetch` is the form openapi-fetch calls.
 *
 * @example
 * const raw = createClient<paths>({ baseUrl, fetch: transport.fetch });
 */
export interface Transport {
  send(request: OutgoingRequest, options?: RequestOptions): Promise<BufferedAnswer>;
  fetch(request: Request): Promise<Response>;
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);
/** Every name of RequestOptions: the compiler refuses a list that misses or adds one. Internal. */
export const REQUEST_OPTION_NAMES = new Set(Object.keys({ signal: true, timeoutMs: true, retries: true, auth: true } satisfies { [Name in keyof Required<RequestOptions>]: true }));

// The errors of a request that got no complete answer, and of per-call options refused, are
// worded in a chunk of their own, loaded only when one is thrown (never for an attempt that is
// retried): their messages stay out of the main entry. When the chunk cannot load (the network
// is down, as it may well be when a request got no answer, or a deploy replaced it), each is
// built here instead: the same class, `code`, `cause`, `timeoutMs` and argument, a short message.
const requestErrors = () => loadChunk(() => import('./request-errors.js'), withoutChunk);

const withoutChunk: Pick<typeof import('./request-errors.js'), 'requestFailed' | 'refusedOptions'> = {
  requestFailed: (request, error, timedOut, timeoutMs) =>
    timedOut
      ? new TimeoutError(`No complete response to ${describeRequest(request)} within ${timeoutMs} ms.`, { code: 'request_timeout', timeoutMs })
      : new ConnectionError(`Could not get a response to ${describeRequest(request)}.`, { code: isPermissionDenial(error) ? 'network_permission_denied' : 'connection_failed', cause: error }),
  refusedOptions: (call) => {
    // refusedOptions's checks, in its order: an object, the names, then auth.
    const argument = typeof call !== 'object' || call === null ? 'options' : Object.keys(call).find((key) => !REQUEST_OPTION_NAMES.has(key)) ?? 'auth';
    return new InvalidArgumentError(argument, `A request's options refused ${argument} (invalid_option).`, 'invalid_option');
  },
};

/**
 * Creates the transport behind `client.raw` and every client method.
 *
 * @example
 * const transport = createTransport({ fetch: globalThis.fetch, tokenManager, timeoutMs: 30_000, retryPolicy });
 * const raw = createClient<paths>({ baseUrl, fetch: transport.fetch });
 */
export function createTransport(options: TransportOptions): Transport {
  const { tokenManager, retryPolicy, onRetry } = options;
  const fetchOnce = options.fetch;
  const raceExchange = options.fetchHonoursSignal !== true;

  async function send(request: OutgoingRequest, call: RequestOptions = {}): Promise<BufferedAnswer> {
    // Not an object, or an option this client does not take (a per-call `headers` with another
    // user's token would otherwise be ignored, and the request sent with the TokenManager's token
    // instead): refused, and nothing is sent.
    if (typeof call !== 'object' || call === null || Object.keys(call).some((name) => !REQUEST_OPTION_NAMES.has(name))) throw (await requestErrors()).refusedOptions(call);
    if (call.retries !== undefined) assertRetryCount(call.retries, 'retries');
    if (call.timeoutMs !== undefined) assertMilliseconds(call.timeoutMs, 'timeoutMs', { allowInfinity: true });
    assertSignalOption(call.signal, 'signal');
    if (call.auth !== undefined && typeof call.auth !== 'boolean') throw (await requestErrors()).refusedOptions(call);
    const callerSignal = call.signal ?? undefined;
    const timeoutMs = call.timeoutMs ?? options.timeoutMs;
    const useAuth = call.auth !== false;
    // The session the request is sent in: a 401 in a later one is not retried with its token,
    // whether or not this one sent a token.
    const session = sessionOf(tokenManager);
    // A renewal may wait for the user (a wallet prompt): the caller's signal ends the wait, and
    // the renewal itself is bounded (refreshTimeoutMs, reauthenticateTimeoutMs). timeoutMs is
    // the attempts' own: a person reading a wallet prompt does not make the request fail.
    const wait = { signal: callerSignal };
    let token = useAuth ? await tokenManager.getToken(wait) : undefined;
    let renewedAfterUnauthorized = false;
    let retry = 0;

    for (;;) {
      let reason: RetryEvent['reason'] = 'status';
      let retryAfterMs: number | undefined;
      let answer: BufferedAnswer | undefined;
      const attempt = await sendAttempt(fetchOnce, raceExchange, request, token, timeoutMs, callerSignal);
      if (Array.isArray(attempt)) {
        // No complete answer. The error is worded only when it is thrown: a runtime that refused
        // to send (nothing was sent, and a retry is refused the same), or no retry left.
        const [error, timedOut] = attempt;
        if ((!timedOut && isPermissionDenial(error)) || retry >= retryBudget(request.method, call, retryPolicy)) throw (await requestErrors()).requestFailed(request, error, timedOut, timeoutMs);
        reason = timedOut ? 'timeout' : 'connection';
      } else {
        answer = attempt;
        if (answer.status === 401 && useAuth && !renewedAfterUnauthorized) {
          renewedAfterUnauthorized = true;
          const rejected = token;
          // The service's code says whether the 401 is about registration (UserNotRegistered) or the token (TokenExpired).
          const code = readErrorBody(readAnswerBody(answer)).code;
          if (sessionOf(tokenManager) !== session) throw (await renewalErrors()).requestOvertaken();
          const renewed = await tokenManager.renewAfterUnauthorized(rejected, code, wait);
          // The 401 retry is owed to the renewal, not to the retry budget.
          if (renewed !== undefined) {
            token = renewed;
            continue;
          }
          return answer;
        }

        if (!isRetryableStatus(answer.status) || retry >= retryBudget(request.method, call, retryPolicy)) return answer;
        retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'));
        // A wait beyond what a timer can hold would fire at once: not waited out either.
        if (retryAfterMs !== undefined && retryAfterMs > Math.min(retryPolicy.maxRetryAfterMs, MAX_TIMER_DELAY_MS)) return answer;
      }
      // A failed attempt (no answer) or a retryable status, within the retry budget.
      retry += 1;
      const delayMs = retryAfterMs ?? backoffDelay(retry - 1, retryPolicy);
      onRetry?.({ method: request.method, url: request.url, retry, delayMs, reason, ...(answer && { status: answer.status }), fromRetryAfter: retryAfterMs !== undefined });
      await abortableSleep(delayMs, callerSignal, () => abortError(request, callerSignal));
    }
  }

  async function fetchForRaw(request: Request): Promise<Response> {
    // openapi-fetch copies init keys it does not know (retries, timeoutMs, auth) onto the Request.
    const call = request as Request & RequestOptions;
    const answer = await send(
      {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body === null ? undefined : await request.arrayBuffer(),
        init: { credentials: request.credentials, redirect: request.redirect, cache: request.cache, keepalive: request.keepalive, referrerPolicy: request.referrerPolicy, integrity: request.integrity },
      },
      // An Authorization header of the caller's own is sent as given (a server acting for several users).
      { signal: request.signal, timeoutMs: call.timeoutMs, retries: call.retries, auth: request.headers.has('authorization') ? false : call.auth },
    );
    const response = new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    Object.defineProperty(response, 'url', { value: answer.url });
    return response;
  }

  return { send, fetch: fetchForRaw };
}

// One attempt: its answer, or (no complete answer) what failed and whether `timeoutMs` ran out,
// which the caller words only when it gives up. The caller's abort and a refused fetch throw.
async function sendAttempt(
  fetchOnce: FetchFunction,
  raceExchange: boolean,
  request: OutgoingRequest,
  token: string | undefined,
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<BufferedAnswer | [error: unknown, timedOut: boolean]> {
  if (callerSignal?.aborted) throw abortError(request, callerSignal);
  // The headers are this call's own, so the token of this attempt can be set on them.
  if (token !== undefined) {
    if (request.headers instanceof Headers) request.headers.set('authorization', `Bearer ${token}`);
    else request.headers.authorization = `Bearer ${token}`;
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, Math.min(timeoutMs, MAX_TIMER_DELAY_MS))
    : undefined;
  const forwardAbort = () => controller.abort();
  callerSignal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    if (!raceExchange) {
      // The global fetch stops on the signal by itself, body included: awaited as it is, with
      // no extra promise or listener per request.
      const response = await fetchOnce(request.url, { ...request.init, method: request.method, headers: request.headers, body: request.body, signal: controller.signal });
      // Read the body under the same timer, so that the timeout covers the whole exchange.
      return answerOf(response, await readBody(response, request));
    }
    // Any other fetch may ignore the signal: the exchange is raced against it, and what that
    // fetch settles with later is dropped.
    return await untilAborted(() => exchangeOnce(fetchOnce, request, controller.signal), controller.signal, () => controller.signal.reason);
  } catch (error) {
    if (callerSignal?.aborted) throw abortError(request, callerSignal);
    if (error instanceof InvalidArgumentError) throw error;
    return [error, timedOut];
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', forwardAbort);
  }
}

async function exchangeOnce(fetchOnce: FetchFunction, request: OutgoingRequest, signal: AbortSignal): Promise<BufferedAnswer> {
  const response = await fetchOnce(request.url, { ...request.init, method: request.method, headers: request.headers, body: request.body, signal });
  if (typeof response?.text !== 'function') {
    throw new InvalidArgumentError('fetch', `fetch must resolve to a Response, got ${describeValue(response)}.`, 'invalid_option');
  }
  if (signal.aborted) {
    // The race was lost before this fetch answered: free its connection.
    response.body?.cancel().catch(() => undefined);
    throw signal.reason;
  }
  return answerOf(response, await readBody(response, request));
}

function readBody(response: Response, request: OutgoingRequest): Promise<ArrayBuffer | string> | null {
  if (NULL_BODY_STATUSES.has(response.status)) return null;
  return request.readBodyAs === 'text' ? response.text() : response.arrayBuffer();
}

function answerOf(response: Response, body: ArrayBuffer | string | null): BufferedAnswer {
  return { status: response.status, statusText: response.statusText, headers: response.headers, url: response.url, body };
}

// Worked out on a failure only: most calls succeed at once.
function retryBudget(method: string, call: RequestOptions, policy: RetryPolicy): number {
  return call.retries ?? (isRetriedByDefault(method) ? policy.count : 0);
}

// The caller's reason (its AbortSignal.timeout, a DOMException of its own) is the cause.
function abortError(request: { method: string; url: string }, signal: AbortSignal | undefined): AbortError {
  return new AbortError(`${describeRequest(request)} was cancelled by the caller's AbortSignal.`, { code: 'aborted', cause: signal?.reason });
}

/**
 * A request as error messages name it: `GET https://...`. Internal.
 *
 * @example
 * describeRequest({ method: 'GET', url }) // 'GET https://api.example.com/user-api/user/account/limit'
 */
export function describeRequest(request: { method: string; url: string }): string {
  return `${request.method} ${request.url}`;
}
