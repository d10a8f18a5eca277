// capi-authenticated-operation-documents-401: an operation that needs credentials must say
// what happens without valid ones (reference 5 and 7: an expired token or an unregistered
// signer answers 401), so clients know to sign in again.

export default function authenticatedOperationDocuments401(operation, _options, context) {
  if (operation === null || typeof operation !== 'object') return [];
  const security = operation.security ?? context.document.data?.security ?? [];
  const authenticated = Array.isArray(security) && security.some((requirement) => requirement && Object.keys(requirement).length > 0);
  if (!authenticated) return [];
  const responses = operation.responses ?? {};
  if (Object.prototype.hasOwnProperty.call(responses, '401')) return [];
  return [{
    message: 'Operation requires authentication but documents no 401 response; add `"401": { $ref: "#/components/responses/Unauthorized" }`.',
    path: operation.responses ? [...context.path, 'responses'] : context.path,
  }];
}
