import { assertResponseMatchesSpec, operationsById } from './spec-responses.js';

/** One answer of the sandbox, already checked against the spec's response schema. */
export interface SpecResponse<T = any> {
  status: number;
  body: T;
  contentType: string | null;
}

/**
 * Calls an operation of the spec by its operationId on the sandbox and checks the answer
 * against the spec (status documented, body valid), so every test also tests conformance.
 */
export async function callOperation<T = any>(
  baseUrl: string,
  operationId: string,
  init: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<SpecResponse<T>> {
  const location = operationsById.get(operationId);
  if (!location) throw new Error(`unknown operation ${operationId}`);
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(baseUrl + location.path, { method: location.method, headers, ...(body !== undefined ? { body } : {}) });
  const contentType = response.headers.get('content-type');
  const text = await response.text();
  const parsed = contentType?.startsWith('application/json') ? JSON.parse(text) : text;
  assertResponseMatchesSpec(operationId, response.status, contentType, parsed);
  return { status: response.status, body: parsed, contentType };
}

/** Calls a sandbox-only endpoint (under /__sandbox) with a JSON body. */
export async function callAdmin<T = any>(baseUrl: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(baseUrl + path, {
    method,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: response.status, body: (await response.json()) as T };
}
