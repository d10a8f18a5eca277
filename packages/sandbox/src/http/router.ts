import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error.js';
import type { CorsPolicy } from './cors.js';
import { readRequestBody } from './read-body.js';

/** What a route handler sees of a request. */
export interface RouteRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  /** Path parameters, from `:name` segments of the route pattern. */
  params: Record<string, string>;
  /** The raw body, read once on first call. */
  rawBody(): Promise<Buffer>;
  /** The body parsed as JSON; a body that is not JSON is answered with `badJson`. */
  json(): Promise<unknown>;
}

/** What a route handler answers. `json` is serialised; `text` is sent as text/plain. */
export type RouteResponse =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; text: string; headers?: Record<string, string> };

export type RouteHandler = (request: RouteRequest) => Promise<RouteResponse> | RouteResponse;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

/** Builds the 400 answer for a body that is not JSON; each route family words it its own way. */
export type BadJsonAnswer = (detail: string) => ApiError;

const defaultBadJson: BadJsonAnswer = (detail) =>
  new ApiError(400, { code: 'InvalidJson', message: `The request body is not valid JSON (${detail}); send a JSON object.` });

/**
 * A small method + path router over node:http. Static paths are looked up in a map (the
 * limit GET is the hot path); paths with `:params` are matched segment by segment.
 */
export class Router {
  readonly #static = new Map<string, RouteHandler>();
  readonly #dynamic: Route[] = [];
  readonly #knownPaths = new Map<string, Set<string>>();

  on(method: string, pattern: string, handler: RouteHandler): this {
    const allowed = this.#knownPaths.get(pattern) ?? new Set<string>();
    allowed.add(method);
    this.#knownPaths.set(pattern, allowed);
    if (pattern.includes(':')) this.#dynamic.push({ method, segments: pattern.split('/'), handler });
    else this.#static.set(`${method} ${pattern}`, handler);
    return this;
  }

  /**
   * The node:http request listener. Unexpected failures become a 500 with a readable body.
   * With `cors`, a request that carries an `Origin` header goes through it first (a preflight
   * is answered there); one without costs a header lookup.
   */
  listener(badJson: BadJsonAnswer = defaultBadJson, cors?: CorsPolicy) {
    return (request: IncomingMessage, response: ServerResponse): void => {
      const origin = cors === undefined ? undefined : request.headers.origin;
      if (origin !== undefined && cors!.handle(origin, request, response)) return;
      void this.#handle(request, response, badJson);
    };
  }

  async #handle(request: IncomingMessage, response: ServerResponse, badJson: BadJsonAnswer): Promise<void> {
    try {
      const method = request.method ?? 'GET';
      const target = request.url ?? '/';
      const queryStart = target.indexOf('?');
      const pathname = queryStart === -1 ? target : target.slice(0, queryStart);
      const match = this.#match(method, pathname);
      if (!match) throw this.#notRouted(method, pathname);
      let body: Promise<Buffer> | undefined;
      let url: URL | undefined;
      const rawBody = () => (body ??= readRequestBody(request));
      const routeRequest: RouteRequest = {
        method,
        // Parsed only by the routes that read the query: the hot paths do not need it.
        get url() {
          return (url ??= new URL(target, 'http://sandbox.invalid'));
        },
        headers: request.headers,
        params: match.params,
        rawBody,
        async json() {
          const text = (await rawBody()).toString('utf8');
          try {
            return JSON.parse(text) as unknown;
          } catch (error) {
            throw badJson(text.trim() === '' ? 'the body is empty' : (error as Error).message);
          }
        },
      };
      writeResponse(response, await match.handler(routeRequest));
    } catch (error) {
      if (error instanceof ApiError) {
        writeResponse(response, { status: error.status, json: error.body, headers: error.headers });
      } else {
        writeResponse(response, {
          status: 500,
          json: { code: 'SandboxInternalError', message: `The sandbox failed: ${(error as Error)?.message ?? String(error)}. This is a sandbox bug; please report it.` },
        });
      }
    }
  }

  #match(method: string, pathname: string): { handler: RouteHandler; params: Record<string, string> } | undefined {
    const handler = this.#static.get(`${method} ${pathname}`);
    if (handler) return { handler, params: {} };
    const segments = pathname.split('/');
    for (const route of this.#dynamic) {
      if (route.method !== method || route.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let matched = true;
      for (let i = 0; i < segments.length; i++) {
        const expected = route.segments[i]!;
        const actual = segments[i]!;
        if (expected.startsWith(':')) {
          const value = decodePathSegment(actual);
          if (value === undefined) {
            matched = false;
            break;
          }
          params[expected.slice(1)] = value;
        } else if (expected !== actual) {
          matched = false;
          break;
        }
      }
      if (matched) return { handler: route.handler, params };
    }
    return undefined;
  }

  #notRouted(method: string, pathname: string): ApiError {
    for (const [pattern, methods] of this.#knownPaths) {
      const patternSegments = pattern.split('/');
      const segments = pathname.split('/');
      const samePath =
        patternSegments.length === segments.length &&
        patternSegments.every((segment, i) => (segment.startsWith(':') ? decodePathSegment(segments[i]!) !== undefined : segment === segments[i]));
      if (samePath) {
        const allow = [...methods].join(', ');
        return new ApiError(405, { code: 'MethodNotAllowed', message: `${method} is not supported on ${pathname}; use ${allow}.` }, { allow });
      }
    }
    return new ApiError(404, { code: 'NotFound', message: `No endpoint ${method} ${pathname} on this base URL.` });
  }
}

// A malformed percent-escape cannot name anything, so it simply matches no route (404).
function decodePathSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function writeResponse(response: ServerResponse, result: RouteResponse): void {
  const isJson = 'json' in result;
  const payload = isJson ? JSON.stringify(result.json) : result.text;
  response.writeHead(result.status, {
    'content-type': isJson ? 'application/json' : 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...result.headers,
  });
  response.end(payload);
}
