// capi-operation-id: every operation has a camelCase operationId; it becomes the method
// name of the generated client and the anchor of the docs.
const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;

export default function operationIdPresent(operation, _options, context) {
  const operationId = operation?.operationId;
  if (typeof operationId !== 'string' || operationId === '') {
    return [{ message: 'Operation has no operationId; add a unique camelCase `operationId` (for example "getAccountLimit").', path: context.path }];
  }
  if (!CAMEL_CASE.test(operationId)) {
    return [{ message: `operationId "${operationId}" is not camelCase; rename it (letters and digits, starting lower-case).`, path: [...context.path, 'operationId'] }];
  }
  return [];
}
