/**
 * Why generated code could not be written. `code` is stable for scripts; the message names
 * the spec location and what to change there. Each generated package subclasses it with
 * its own name and its own list of codes; `runGeneratorCli` reports any subclass.
 *
 * @example
 * export class OpenapiTypesGenerationError extends GenerationError {}
 * throw new OpenapiTypesGenerationError('NOT_OPENAPI_3_1', 'Expected an OpenAPI 3.1 document ...');
 */
export class GenerationError extends Error {
  /**
   * @param {string} code machine-readable reason, e.g. `SPEC_NOT_FOUND`
   * @param {string} message what was wrong and what to do
   */
  constructor(code, message) {
    super(message);
    // The subclass's own name, so a stack trace says which generator failed.
    this.name = new.target.name;
    this.code = code;
  }
}
