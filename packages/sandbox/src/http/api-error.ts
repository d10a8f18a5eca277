import type { ErrorBody } from './error-body.js';

/**
 * A request the sandbox refuses, with the HTTP status and the error body the live service
 * would send. Route handlers throw it; the router turns it into the response.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message ?? body.error ?? body.code ?? `HTTP ${status}`);
  }
}
