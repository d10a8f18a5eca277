/** Which listener serves an operation: the core user API or the webhook key service. */
export type ServiceBase = 'core' | 'webhooks';

/** What the sandbox needs to know about one operation of the OpenAPI spec. */
export interface OperationContract {
  operationId: string;
  method: string;
  path: string;
  base: ServiceBase;
  /** The infrastructure generation that answers it (`x-generation`, reference 9). */
  generation: 'older' | 'newer' | 'both';
  requiresBearer: boolean;
  /** The JSON Schema of the `application/json` request body, with every `$ref` inlined. */
  requestBodySchema?: unknown;
  /** Response schemas by status code, with every `$ref` inlined. */
  responses: Record<string, { contentType?: string; schema?: unknown }>;
}
