/**
 * The JSON Schemas (draft 2020-12, each with an `$id`) of the webhook events and of every
 * schema they reference, exactly as the spec defines them, for use with any validator.
 *
 * @example
 * import Ajv2020 from 'ajv/dist/2020.js';
 * import { schemas, webhookEventSchemaIds } from '@capi/webhook-validator/schemas';
 * const ajv = new Ajv2020({ schemas: Object.values(schemas) });
 * const validateUserCreated = ajv.getSchema(webhookEventSchemaIds['user.created']);
 */
export { schemas, webhookEventSchemaIds, webhookEventTypes } from './generated/schemas.js';
