import type { RequestValidator } from '../conformance/request-validator.js';
import { ApiError } from '../http/api-error.js';
import type { RouteRequest } from '../http/router.js';

/** How an operation words its refusals (each route family has its error body shape). */
export interface BodyRefusals {
  notJson(detail: string): ApiError;
  invalid(problems: string[]): ApiError;
}

/**
 * Reads an operation's JSON body and validates it against the operation's request schema
 * from the spec. `beforeValidation` runs on the parsed body first (the firewall does).
 */
export async function readOperationBody<T>(
  request: RouteRequest,
  validator: RequestValidator,
  operationId: string,
  refusals: BodyRefusals,
  beforeValidation?: (body: unknown) => void,
): Promise<T> {
  const text = (await request.rawBody()).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw refusals.notJson(text.trim() === '' ? 'the body is empty' : (error as Error).message);
  }
  beforeValidation?.(body);
  const result = validator.check(operationId, body);
  if (!result.ok) throw refusals.invalid(result.problems);
  return body as T;
}
