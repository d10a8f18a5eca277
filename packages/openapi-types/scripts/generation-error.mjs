/**
 * Why the OpenAPI types could not be generated. `code` is stable for scripts; the message
 * names the spec location and what to change there.
 *
 * @example
 * try { await generateOpenapiTypes(doc) } catch (e) { if (e instanceof OpenapiTypesGenerationError) console.error(e.code) }
 */
export class OpenapiTypesGenerationError extends Error {
  /**
   * @param {'SPEC_NOT_FOUND' | 'SPEC_NOT_JSON' | 'NOT_OPENAPI_3_1' | 'INVALID_ALIAS_NAME'} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'OpenapiTypesGenerationError';
    this.code = code;
  }
}
