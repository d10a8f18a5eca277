import type { Generation } from '../auth/token-service.js';
import type { OperationContract } from '../conformance/operation-contract.js';
import { ApiError } from '../http/api-error.js';

/** Why a generation lacks an operation, where the reference says what it does instead. */
const INSTEAD: Record<string, string> = {
  // Reference 9: "Onchain daily limit | Set by user with an onchain signature" (older).
  getAccountLimit: 'on the older generation the user sets the daily limit onchain, with an onchain signature',
  setAccountLimit: 'on the older generation the user sets the daily limit onchain, with an onchain signature',
};

/**
 * The refusal of an operation that `generation` does not answer (`x-generation` of the spec,
 * reference 9): on the other generation it does not exist, so `404 NotFound`, naming the
 * generation that has it and the flag that starts it. `undefined` when `generation` answers it.
 */
export function otherGenerationRefusal(operation: Pick<OperationContract, 'operationId' | 'method' | 'path' | 'generation'>, generation: Generation): ApiError | undefined {
  if (operation.generation === 'both' || operation.generation === generation) return undefined;
  const instead = INSTEAD[operation.operationId];
  return new ApiError(404, {
    code: 'NotFound',
    message:
      `${operation.method} ${operation.path} (${operation.operationId}) exists only on the ${operation.generation} generation; this sandbox runs the ${generation} one (start it with --generation ${operation.generation})` +
      (instead === undefined ? '.' : `: ${instead}.`),
  });
}
