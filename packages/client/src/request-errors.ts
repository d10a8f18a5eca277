// The messages of a request that got no complete answer (it timed out, its connection failed,
// or the runtime refused to send it) and of per-call options the transport refuses: a chunk of
// its own, loaded only when one of them is thrown, so that their texts stay out of the main
// entry (as the renewal errors and the limit errors do). The checks themselves stay in
// transport.ts, which builds each error without this chunk when it cannot load.
import { describeValue } from './describe-value.js';
import { ConnectionError, InvalidArgumentError, isPermissionDenial, TimeoutError } from './errors.js';
import { isRetriedByDefault } from './retry-policy.js';
import { describeRequest, REQUEST_OPTION_NAMES, type OutgoingRequest, type RequestOptions } from './transport.js';

/**
 * The error of an attempt that got no complete answer and is not retried: a `TimeoutError`
 * `request_timeout` when `timeoutMs` ran out, else a `ConnectionError`
 * (`network_permission_denied` when the runtime refused to send, as Deno without
 * `--allow-net`; `connection_failed` otherwise) whose `cause` is `error`. A write (PUT, POST,
 * ...) is not retried by default, so its message says it may have been applied.
 *
 * @example
 * throw requestFailed(request, new TypeError('fetch failed'), false, 30_000); // code 'connection_failed'
 */
export function requestFailed(request: Pick<OutgoingRequest, 'method' | 'url'>, error: unknown, timedOut: boolean, timeoutMs: number): TimeoutError | ConnectionError {
  if (timedOut) {
    // A write (PUT, POST, ...) may have reached the service before the time ran out, and is
    // not retried by default: the caller must find out whether it applied before sending it again.
    return new TimeoutError(
      `No complete response to ${describeRequest(request)} within ${timeoutMs} ms. ${
        isRetriedByDefault(request.method)
          ? 'Raise timeoutMs (per client or per call), or check that the service is reachable.'
          : `It may have been applied: ${mayHaveApplied(request)} Raise timeoutMs (per client or per call) if the service is slow.`
      }`,
      { code: 'request_timeout', timeoutMs },
    );
  }
  if (isPermissionDenial(error)) {
    // Deno without --allow-net for this host: nothing was sent, and a retry is refused the same.
    return new ConnectionError(`${describeRequest(request)} was not sent: ${(error as Error).message}. Allow this host's network access (Deno: --allow-net).`, { code: 'network_permission_denied', cause: error });
  }
  const reason = error instanceof Error ? describeCause(error) : `${String(error)}.`;
  // A write whose connection failed after it was sent (a reset) may have been applied too.
  return new ConnectionError(
    `Could not get a response to ${describeRequest(request)}: ${reason} ${offlineOrCheck('Check baseUrl/webhooksUrl and the network (in a browser, also CORS).')}${isRetriedByDefault(request.method) ? '' : ` If it was sent, it may have been applied: ${mayHaveApplied(request)}`}`,
    { code: 'connection_failed', cause: error },
  );
}

/**
 * The error of per-call options the transport refuses (see `RequestOptions`): not an object, a
 * name it does not take (a per-call `headers` would otherwise be ignored, and the request sent
 * with the TokenManager's token instead), or an `auth` that is not a boolean. The other options
 * are checked, and refused, by the transport itself.
 *
 * @example
 * throw refusedOptions({ headers: {} }); // argument 'headers', code 'invalid_option'
 */
export function refusedOptions(call: unknown): InvalidArgumentError {
  if (typeof call !== 'object' || call === null) {
    return new InvalidArgumentError('options', `A request's options must be an object such as { signal, timeoutMs, retries }, or left out; got ${describeValue(call)}.`, 'invalid_option');
  }
  const name = Object.keys(call).find((key) => !REQUEST_OPTION_NAMES.has(key));
  if (name !== undefined) {
    const hint = name === 'headers' ? ' To send your own Authorization header (a server acting for several users), use client.raw with headers, or a client per user.' : '';
    return new InvalidArgumentError(name, `A request's options are signal, timeoutMs, retries and auth; ${JSON.stringify(name)} is not one of them, and nothing was sent.${hint}`, 'invalid_option');
  }
  return new InvalidArgumentError('auth', `auth must be true or false, got ${describeValue((call as RequestOptions).auth)}.`, 'invalid_option');
}

// What a write without a complete answer needs (it is not retried by default).
function mayHaveApplied(request: { method: string }): string {
  return `a ${request.method} is not retried by default, so check whether it took effect before sending it again.`;
}

/** What a request that got no response tells: the device is offline, or else `advice`. */
export function offlineOrCheck(advice: string): string {
  return (globalThis.navigator as { onLine?: boolean } | undefined)?.onLine === false ? 'The device is offline (navigator.onLine is false).' : advice;
}

/** An error of `fetch` with its cause's message (undici's "fetch failed" keeps ECONNREFUSED... there), ended as a sentence. */
export function describeCause(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = cause instanceof Error && cause.message ? `${error.message} (${cause.message})` : error.message;
  // Ended as a sentence, for the caller's next one: Bun's ends with "?" ("Is the computer able to
  // access the url?"), which a "." after it would double.
  return /[.?!]$/.test(text) ? text : `${text}.`;
}
