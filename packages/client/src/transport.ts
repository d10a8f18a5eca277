// The one place where requests leave the client. openapi-fetch builds each Request from the
// spec's types and hands it here; this adds the bearer token, the per-request timeout, the
// caller's AbortSignal, retries with backoff and the single renewal after a 401.

import { abortableSleep } from './abortable-sleep.js';
import { AbortError, ConnectionError, TimeoutError } from './errors.js';
import { parseRetryAfter } from './retry-after.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { assertRetryCount, backoffDelay, isRetriedByDefault, isRetryableStatus, type RetryPolicy } from './retry-policy.js';
import type { TokenManager } from './token-manager.js';

/**
 * Per-call options, accepted by every method of the client and by every `client.raw` call.
 * (A type alias rather than an interface, so that it fits openapi-fetch's open init object.)
 */
export type RequestOptions = {
  /** Cancels the call, including its retries and backoff waits; it then rejects with `AbortError`. */
  signal?: AbortSignal | undefined;
  /** Time allowed for each attempt, from sending to the last byte of the body. */
  timeoutMs?: number | undefined;
  /** Retries for this call; PUT and POST are retried only when this is given. */
  retries?: number | undefined;
  /** `false` sends no bearer token and never renews one (sign-in, public key). Default true. */
  auth?: boolean | undefined;
};

/** Why a request is being retried, for `onRetry` (logging, metrics). Never holds a token. */
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

/** What {@link createTransport} needs. */
export interface TransportOptions {
  fetch: (request: Request) => Promise<Response>;
  tokenManager: TokenManager;
  timeoutMs: number;
  retryPolicy: RetryPolicy;
  onRetry?: ((event: RetryEvent) => void) | undefined;
}

/** A `fetch` that openapi-fetch calls with a Request carrying {@link RequestOptions} as properties. */
export type Transport = (request: Request) => Promise<Response>;

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * Creates the fetch function behind `client.raw` and every client method.
 *
 * @example
 * const raw = createClient<paths>({ baseUrl, fetch: createTransport({ fetch, tokenManager, timeoutMs, retryPolicy }) });
 */
export function createTransport(options: TransportOptions): Transport {
  const { tokenManager, retryPolicy, onRetry } = options;
  const fetchOnce = options.fetch;

  return async function send(request: Request): Promise<Response> {
    const call = request as Request & RequestOptions;
    if (call.retries !== undefined) assertRetryCount(call.retries, 'retries');
    if (call.timeoutMs !== undefined) assertMilliseconds(call.timeoutMs, 'timeoutMs', { allowInfinity: true });
    const callerSignal = request.signal;
    const retries = call.retries ?? (isRetriedByDefault(request.method) ? retryPolicy.count : 0);
    const timeoutMs = call.timeoutMs ?? options.timeoutMs;
    const useAuth = call.auth !== false;
    let token = useAuth ? await tokenManager.getToken() : undefined;
    let renewedAfterUnauthorized = false;
    let retry = 0;

    for (;;) {
      let response: Response;
      try {
        response = await sendAttempt(fetchOnce, request, token, timeoutMs, callerSignal);
      } catch (error) {
        if (error instanceof AbortError || retry >= retries) throw error;
        retry += 1;
        const delayMs = backoffDelay(retry - 1, retryPolicy);
        onRetry?.({ method: request.method, url: request.url, retry, delayMs, reason: error instanceof TimeoutError ? 'timeout' : 'connection', fromRetryAfter: false });
        await abortableSleep(delayMs, callerSignal, () => abortError(request));
        continue;
      }

      if (response.status === 401 && useAuth && !renewedAfterUnauthorized) {
        renewedAfterUnauthorized = true;
        const renewed = await tokenManager.renewAfterUnauthorized(token);
        // The 401 retry is owed to the renewal, not to the retry budget.
        if (renewed !== undefined) {
          token = renewed;
          continue;
        }
        return response;
      }

      if (!isRetryableStatus(response.status) || retry >= retries) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (retryAfterMs !== undefined && retryAfterMs > retryPolicy.maxRetryAfterMs) return response;
      retry += 1;
      const delayMs = retryAfterMs ?? backoffDelay(retry - 1, retryPolicy);
      onRetry?.({ method: request.method, url: request.url, retry, delayMs, reason: 'status', status: response.status, fromRetryAfter: retryAfterMs !== undefined });
      await abortableSleep(delayMs, callerSignal, () => abortError(request));
    }
  };
}

async function sendAttempt(
  fetchOnce: (request: Request) => Promise<Response>,
  template: Request,
  token: string | undefined,
  timeoutMs: number,
  callerSignal: AbortSignal,
): Promise<Response> {
  if (callerSignal.aborted) throw abortError(template);
  const headers = new Headers(template.headers);
  if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
  // A body can be read once; the template keeps it for the next attempt.
  const source = template.body === null ? template : template.clone();
  const controller = new AbortController();
  let timedOut = false;
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs)
    : undefined;
  const forwardAbort = () => controller.abort();
  callerSignal.addEventListener('abort', forwardAbort, { once: true });
  try {
    const response = await fetchOnce(new Request(source, { headers, signal: controller.signal }));
    if (response.status < 200) return response;
    // Read the body under the same timer, so that the timeout covers the whole exchange.
    const body = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
    const buffered = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(buffered, 'url', { value: response.url });
    return buffered;
  } catch (error) {
    if (callerSignal.aborted) throw abortError(template);
    if (timedOut) {
      throw new TimeoutError(
        `No complete response to ${describe(template)} within ${timeoutMs} ms. Raise timeoutMs (per client or per call), or check that the service is reachable.`,
        { code: 'request_timeout', timeoutMs },
      );
    }
    const reason = error instanceof Error ? describeCause(error) : String(error);
    throw new ConnectionError(
      `Could not get a response to ${describe(template)}: ${reason}. Check baseUrl/webhooksUrl and the network (in a browser, also CORS).`,
      { code: 'connection_failed', cause: error },
    );
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    callerSignal.removeEventListener('abort', forwardAbort);
  }
}

function abortError(request: Request): AbortError {
  return new AbortError(`${describe(request)} was cancelled by the caller's AbortSignal.`, { code: 'aborted' });
}

function describe(request: Request): string {
  return `${request.method} ${request.url}`;
}

function describeCause(error: Error): string {
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED...) in `cause`.
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message) return `${error.message} (${cause.message})`;
  return error.message;
}
