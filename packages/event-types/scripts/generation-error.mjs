import { GenerationError } from '@capi/codegen-kit';

/**
 * Why the event types could not be generated from the AsyncAPI spec. `code` is stable
 * for scripts; the message names the spec location and what to change there.
 *
 * @example
 * try { await generateEventTypes(doc) } catch (e) { if (e instanceof EventTypesGenerationError) console.error(e.code) }
 */
export class EventTypesGenerationError extends GenerationError {
  /**
   * @param {'NOT_ASYNCAPI_3' | 'INVALID_ASYNCAPI' | 'NO_EVENTS' | 'EVENT_WITHOUT_TITLE' | 'EVENT_WITHOUT_EVENT_TYPE' | 'DUPLICATE_EVENT_TYPE' | 'ANONYMOUS_SCHEMA' | 'INVALID_HEADER_NAME'} code (the gen CLI adds SPEC_NOT_FOUND, SPEC_NOT_JSON)
   * @param {string} message
   */
  constructor(code, message) {
    super(code, message);
    /** @type {'NOT_ASYNCAPI_3' | 'INVALID_ASYNCAPI' | 'NO_EVENTS' | 'EVENT_WITHOUT_TITLE' | 'EVENT_WITHOUT_EVENT_TYPE' | 'DUPLICATE_EVENT_TYPE' | 'ANONYMOUS_SCHEMA' | 'INVALID_HEADER_NAME'} */
    this.code = code;
  }
}
