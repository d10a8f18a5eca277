import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostOf, type DomainWhitelist } from '../auth/domain-whitelist.js';

/**
 * The methods and request headers a browser may use: those of the spec's operations (GET, PUT,
 * POST, PATCH; `authorization`, `content-type`) plus DELETE, which the `/__sandbox/` endpoints
 * on the same port use.
 */
export const CORS_ALLOWED_METHODS = 'GET, PUT, POST, PATCH, DELETE';
export const CORS_ALLOWED_HEADERS = 'authorization, content-type';
/** The answer headers @capi/client reads: `Retry-After` and the request-id headers of ApiError. */
export const CORS_EXPOSED_HEADERS = 'retry-after, x-request-id, request-id, x-amzn-requestid';
/** How long a browser may cache a preflight (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Cross-origin access of one listener, applied before routing. The router asks it only when a
 * request carries an `Origin` header, so a request without one costs one header lookup.
 */
export interface CorsPolicy {
  /**
   * Adds the CORS headers an answer to a request from `origin` gets; answers a preflight
   * itself and returns true then (nothing more to do).
   */
  handle(origin: string, request: IncomingMessage, response: ServerResponse): boolean;
}

function isPreflight(request: IncomingMessage): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

function answerPreflight(response: ServerResponse, allowOrigin: string): void {
  response.writeHead(204, {
    'access-control-allow-origin': allowOrigin,
    'access-control-allow-methods': CORS_ALLOWED_METHODS,
    'access-control-allow-headers': CORS_ALLOWED_HEADERS,
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    ...(allowOrigin === '*' ? {} : { vary: 'Origin' }),
    'content-length': '0',
  });
  response.end();
}

// Scheme and authority, nothing else (no user info, path or query: a browser sends none).
const ORIGIN = /^(https?):\/\/([^/?#@\s]+)$/i;

/**
 * The sandbox's assumption for the core API: an origin is allowed when its host is allowed as a
 * SIWE domain (`localhost` with any port, plus each whitelist entry: `host` any port,
 * `host:port` that port only), over http or https. The origin is echoed with `Vary: Origin`;
 * a disallowed origin gets no CORS headers, and its preflight a 403 that says how to allow it.
 */
export function siweDomainCorsPolicy(whitelist: DomainWhitelist): CorsPolicy {
  return {
    handle(origin, request, response) {
      const authority = ORIGIN.exec(origin)?.[2];
      const allowed = authority !== undefined && whitelist.allows(authority);
      if (!isPreflight(request)) {
        response.setHeader('vary', 'Origin');
        if (allowed) {
          response.setHeader('access-control-allow-origin', origin);
          response.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
        }
        return false;
      }
      if (allowed) {
        answerPreflight(response, origin);
        return true;
      }
      const body = JSON.stringify({ code: 'CorsOriginNotAllowed', message: originRefusal(origin, authority) });
      response.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), vary: 'Origin' });
      response.end(body);
      return true;
    },
  };
}

function originRefusal(origin: string, authority: string | undefined): string {
  const shown = JSON.stringify(origin.slice(0, 200));
  if (authority === undefined) {
    return `The origin ${shown} may not call this sandbox: only http(s) pages whose host is localhost or a whitelisted SIWE domain may (a page opened from a file has the origin "null"; serve it over http://localhost).`;
  }
  const host = hostOf(authority);
  const hint = /^127\.0\.0\.1(:|$)/.test(host)
    ? ' Open the page at http://localhost instead of 127.0.0.1 (a SIWE domain of 127.0.0.1 is refused with WAFForbidden anyway).'
    : '';
  return `The origin ${shown} may not call this sandbox: allowed origins are localhost (any port) and the whitelisted SIWE domains. Start the sandbox with --whitelist ${host} (startSandbox({ whitelist: ['${host}'] })) to allow it.${hint}`;
}

/**
 * For the webhook key service: `GET /api/v1/public-key` serves a public key with no credentials
 * and no state, so any origin may read it (`Access-Control-Allow-Origin: *`).
 */
export const anyOriginCorsPolicy: CorsPolicy = {
  handle(_origin, request, response) {
    if (isPreflight(request)) {
      answerPreflight(response, '*');
      return true;
    }
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
    return false;
  },
};
