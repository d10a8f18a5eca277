/**
 * `@capi/webhook-receiver/durable-object`: the stores for Cloudflare Workers, atomic across
 * isolates and locations. Export {@link WebhookStoreObject} from the Worker, bind it, and pass
 * {@link createDurableObjectDedupeStore} as the receiver's `dedupe` and
 * {@link createDurableObjectDeadLetterStore} as its `deadLetters`.
 *
 * @example
 * ```ts
 * import { createDurableObjectDedupeStore, WebhookStoreObject } from '@capi/webhook-receiver/durable-object';
 * export { WebhookStoreObject };
 * const dedupe = createDurableObjectDedupeStore({ namespace: env.WEBHOOK_STORE });
 * ```
 *
 * @packageDocumentation
 */
export {
  createDurableObjectDedupeStore,
  WebhookStoreObject,
  type DurableObjectDedupeStoreOptions,
  type DurableObjectNamespaceLike,
  type DurableObjectStateLike,
  type DurableObjectStorageLike,
  type StoredDeadLetter,
  type StoreOperation,
} from './dedupe/durable-object-store.js';
export {
  createDurableObjectDeadLetterStore,
  type DurableObjectDeadLetterStoreOptions,
} from './dead-letter/durable-object-dead-letter-store.js';
