// The `@capi/webhook-validator/schemas` entry point: the spec's schemas, for use with any
// JSON Schema 2020-12 validator (ajv, Hyperjump...) or for documentation.
export { schemas, webhookEventSchemaIds } from './generated/schemas.js';
