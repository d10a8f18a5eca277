import type { paths } from '@capi/openapi-types';
import { isSuccess, readAnswerBody } from './answer-body.js';
import { errorFromResponse } from './errors.js';
import type { BufferedAnswer, RequestOptions, Transport } from './transport.js';

/**
 * Where the client's own methods send their requests.
 *
 * @example
 * const context: ServiceContext = { transport, baseUrl: 'https://api.example.com' };
 */
export interface ServiceContext {
  transport: Transport;
  /** The core user API base, without a trailing slash. */
  baseUrl: string;
}

/**
 * One request of a client method: a path of the spec and its JSON body, if any.
 *
 * @example
 * const request: ServiceRequest = { method: 'PUT', path: '/user-api/user/account/limit', json: { amount: 100, currency: 'USD' } };
 */
export interface ServiceRequest {
  method: 'GET' | 'PUT' | 'POST';
  path: keyof paths;
  json?: unknown;
  /** The Accept header; default `application/json` (the nonce is `text/plain`). */
  accept?: string;
  /** Another base than the core API (the webhook key service). */
  baseUrl?: string;
  /**
   * What to tell the caller on an error status, when the operation knows better than the status; `body` is the error body as parsed (not yet redacted: read its `code`, never echo it).
   * It may resolve to it (the limit operations load their advice with their other error messages, in a chunk of their own).
   */
  advice?: (status: number, body: unknown) => string | undefined | Promise<string | undefined>;
}

/**
 * Sends one request of a client method and returns the 2xx answer; an error status becomes
 * the typed error of its family.
 *
 * @example
 * const answer = await sendServiceRequest(context, { method: 'GET', path: '/user-api/user/account/limit' }, options);
 */
export async function sendServiceRequest(context: ServiceContext, request: ServiceRequest, options: RequestOptions = {}): Promise<BufferedAnswer> {
  const accept = request.accept ?? 'application/json';
  const headers: Record<string, string> = request.json === undefined ? { accept } : { accept, 'content-type': 'application/json' };
  const answer = await context.transport.send(
    {
      method: request.method,
      url: `${request.baseUrl ?? context.baseUrl}${request.path}`,
      headers,
      body: request.json === undefined ? undefined : JSON.stringify(request.json),
      readBodyAs: 'text',
    },
    options,
  );
  if (!isSuccess(answer)) {
    const body = readAnswerBody(answer);
    throw errorFromResponse(answer, body, { advice: await request.advice?.(answer.status, body) });
  }
  return answer;
}
