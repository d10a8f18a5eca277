import type { OperationContract } from '../conformance/operation-contract.js';

/**
 * The operations with `setAccountLimit`'s `amount` capped at `maximumCents` instead of the
 * spec's 1,000,000: a partner may agree a higher maximum at onboarding (reference 8), and the
 * sandbox's `maxDailyLimitCents` option stands for that agreement.
 */
export function withAgreedMaximum(operations: readonly OperationContract[], maximumCents: number): OperationContract[] {
  return operations.map((operation) => {
    if (operation.operationId !== 'setAccountLimit') return operation;
    const schema = structuredClone(operation.requestBodySchema) as { properties: { amount: { maximum: number } } };
    schema.properties.amount.maximum = maximumCents;
    return { ...operation, requestBodySchema: schema };
  });
}
