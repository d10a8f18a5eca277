import type { RequestValidator } from '../conformance/request-validator.js';
import { ApiError } from '../http/api-error.js';
import { jsonContentTypeProblem } from '../http/content-type.js';
import type { RouteRequest } from '../http/router.js';

/** How an operation words its refusals (each route family has its error body shape). */
export interface BodyRefusals {
  /** 415: a body sent with another Content-Type than `application/json`, or none; `message` says which. */
  unsupportedMediaType(message: string): ApiError;
  notJson(detail: string): ApiError;
  invalid(problems: string[]): ApiError;
}

/**
 * Reads an operation's JSON body and validates it against the operation's request schema
 * from the spec: first its Content-Type (415 unless `application/json`), then its JSON (400),
 * then the schema (422). `beforeValidation` runs on the parsed body first (the firewall does).
 */
export async function readOperationBody<T>(
  request: RouteRequest,
  validator: RequestValidator,
  operationId: string,
  refusals: BodyRefusals,
  beforeValidation?: (body: unknown) => void,
): Promise<T> {
  const raw = await request.rawBody();
  const mediaTypeProblem = jsonContentTypeProblem(request.headers['content-type'], raw.length);
  if (mediaTypeProblem !== undefined) throw refusals.unsupportedMediaType(mediaTypeProblem);
  const text = raw.toString('utf8');
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
