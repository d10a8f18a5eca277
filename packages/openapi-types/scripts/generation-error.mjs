import { GenerationError } from '@capi/codegen-kit';

/**
 * Why the OpenAPI types could not be generated. `code` is stable for scripts; the message
 * names the spec location and what to change there.
 *
 * @example
 * try { await generateOpenapiTypes(doc) } catch (e) { if (e instanceof OpenapiTypesGenerationError) console.error(e.code) }
 */
export class OpenapiTypesGenerationError extends GenerationError {
  /**
   * @param {'NOT_OPENAPI_3_1' | 'INVALID_ALIAS_NAME'} code (the gen CLI adds SPEC_NOT_FOUND, SPEC_NOT_JSON)
   * @param {string} message
   */
  constructor(code, message) {
    super(code, message);
    /** @type {'NOT_OPENAPI_3_1' | 'INVALID_ALIAS_NAME'} */
    this.code = code;
  }
}
