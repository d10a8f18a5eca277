// Which published packages are generated from, or implement, each spec: a breaking change of
// the spec is a breaking change of each of them, so each needs a major changeset.
/** @type {Record<'openapi' | 'asyncapi', readonly string[]>} */
export const specConsumers = {
  openapi: ['@capi/openapi-types', '@capi/client', '@capi/sandbox'],
  asyncapi: ['@capi/event-types', '@capi/webhook-validator', '@capi/webhook-receiver'],
};

/** The specs the check compares, by the bundled file name in specs/dist and specs/released. */
export const bundledSpecFiles = { openapi: 'openapi.json', asyncapi: 'asyncapi.json' };
