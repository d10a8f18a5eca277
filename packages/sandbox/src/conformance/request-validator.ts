import type { OperationContract } from './operation-contract.js';
import { SchemaCheck, type SchemaCheckResult } from './schema-check.js';

/**
 * Validates request bodies on entry against the request schemas of the OpenAPI spec that
 * was embedded at build time, so the sandbox refuses exactly what the spec refuses.
 */
export class RequestValidator {
  readonly #checks = new Map<string, SchemaCheck>();

  constructor(operations: readonly OperationContract[]) {
    for (const operation of operations) {
      if (operation.requestBodySchema !== undefined) this.#checks.set(operation.operationId, new SchemaCheck(operation.requestBodySchema));
    }
  }

  check(operationId: string, body: unknown): SchemaCheckResult {
    return this.#checks.get(operationId)?.check(body) ?? { ok: true };
  }
}
