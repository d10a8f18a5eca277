/**
 * `@capi/webhook-receiver/durable-object`: the deduplication store for Cloudflare Workers,
 * atomic across isolates and locations. Export {@link WebhookDedupeObject} from the Worker,
 * bind it, and pass {@link createDurableObjectDedupeStore} as the receiver's `dedupe`.
 *
 * @example
 * ```ts
 * import { createDurableObjectDedupeStore, WebhookDedupeObject } from '@capi/webhook-receiver/durable-object';
 * export { WebhookDedupeObject };
 * const dedupe = createDurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE });
 * ```
 *
 * @packageDocumentation
 */
export {
  createDurableObjectDedupeStore,
  WebhookDedupeObject,
  type DurableObjectDedupeStoreOptions,
  type DurableObjectNamespaceLike,
  type DurableObjectStateLike,
  type DurableObjectStorageLike,
} from './dedupe/durable-object-store.js';
