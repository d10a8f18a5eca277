/**
 * Receive capi webhooks safely on any server: verify the Ed25519 signature on the raw body,
 * parse and validate the event, drop duplicates (in memory; across processes in Redis, or in
 * your own database through `createTransactionalDedupeStore`; in Durable Objects on Workers),
 * call the typed handlers and answer the status that makes the service retry exactly when it
 * should.
 *
 * @example
 * ```ts
 * import { createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
 * const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
 *   .on('kyc.status.changed', async (event) => { await kyc.update(event.data.id, event.data.kycStatus); });
 * createServer(toNodeHandler(receiver)).listen(3000);
 * ```
 *
 * @packageDocumentation
 */
export { createWebhookReceiver } from './receiver.js';
export type {
  HandleOptions,
  InvalidWebhookEvent,
  ReplayOptions,
  ReplayReport,
  UnknownWebhookEvent,
  WebhookDelivery,
  WebhookErrorContext,
  WebhookEventHandler,
  WebhookEventParser,
  WebhookReceipt,
  WebhookReceiver,
  WebhookReceiverOptions,
} from './receiver-types.js';
export type { SignatureCheckOptions } from './signature-check.js';
export { toNodeHandler, deliverySourceFromNodeRequest, writeNodeReply, type NodeWebhookHandler, type NodeWebhookRequest, type NodeWebhookResponse } from './node-adapter.js';
export { deliverySourceFromRequest, replyToResponse } from './web-adapter.js';
export type { DeliverySource, ReceiverReply } from './delivery-source.js';
export { RECEIVER_OUTCOMES, type ReceiverOutcome } from './status-table.js';
export {
  WebhookReceiverError,
  DedupeStoreError,
  DeadLetterStoreError,
  InvalidWebhookEventError,
  type WebhookReceiverErrorCode,
  type DedupeStoreErrorCode,
  type DeadLetterStoreErrorCode,
} from './errors.js';
export { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type ClaimOptions, type DedupeClaim, type DedupeStore, type DedupeStoreTimingOptions, type MarkProcessedOptions, type ReleaseOptions, type SubjectWaiter } from './dedupe/dedupe-store.js';
export { createMemoryDedupeStore, type MemoryDedupeStore, type MemoryDedupeStoreOptions } from './dedupe/memory-store.js';
export { createRedisDedupeStore, type RedisDedupeStoreOptions } from './dedupe/redis-store.js';
export { createTransactionalDedupeStore, type DedupeRecordChange, type DedupeTransact, type DedupeWakeUps, type TransactionalDedupeStoreOptions } from './dedupe/transactional-store.js';
export type { RedisClientLike, RedisCommand, RedisSubscriberLike } from './dedupe/redis-command.js';
export type { DeadLetterEntry, DeadLetterReason, DeadLetterStore } from './dead-letter/dead-letter-store.js';
export { createMemoryDeadLetterStore, type MemoryDeadLetterStoreOptions } from './dead-letter/memory-dead-letter-store.js';
export { createRedisDeadLetterStore, type RedisDeadLetterStoreOptions } from './dead-letter/redis-dead-letter-store.js';
