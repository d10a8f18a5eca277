import { checkNamespace, keyPrefixOption, sendToObject, type DurableObjectNamespaceLike, type StoredDeadLetter } from '../dedupe/durable-object-store.js';
import { DeadLetterStoreError } from '../errors.js';
import { fromBase64, toBase64 } from './base64.js';
import type { DeadLetterEntry, DeadLetterStore } from './dead-letter-store.js';
import { assertOptionNames, optionNames } from '../option-names.js';

/**
 * Options of {@link createDurableObjectDeadLetterStore}.
 *
 * @example
 * ```ts
 * createDurableObjectDeadLetterStore({ namespace: env.WEBHOOK_STORE, keyPrefix: 'shop-eu:' });
 * ```
 */
export interface DurableObjectDeadLetterStoreOptions {
  /** The binding of the `WebhookStoreObject` namespace (`env.WEBHOOK_STORE`), the same as the dedupe store's. */
  namespace: DurableObjectNamespaceLike;
  /** Prefix of the object's name (`<keyPrefix>dead-letters`), to share one namespace between receivers. Default `capi:webhook:`. */
  keyPrefix?: string;
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<DurableObjectDeadLetterStoreOptions>({ namespace: true, keyPrefix: true });

/**
 * A dead-letter store in a Cloudflare Durable Object: one `WebhookStoreObject` named
 * `<keyPrefix>dead-letters` keeps every entry in its storage, with no expiry, until a replay
 * processes it (or you delete it); every isolate and location of the Worker shares it. When
 * the object cannot be reached, the delivery is answered 503 and retried. `replace` is one
 * storage write in the object; an object deployed from a version before it (a class bound from
 * another Worker not redeployed yet) answers that it does not know it, and the adapter then
 * deletes and puts instead.
 *
 * @example
 * ```ts
 * const deadLetters = createDurableObjectDeadLetterStore({ namespace: env.WEBHOOK_STORE });
 * const receiver = createWebhookReceiver({ publicKey: env.CAPI_WEBHOOK_PUBLIC_KEY, deadLetters });
 * ```
 */
export function createDurableObjectDeadLetterStore(options: DurableObjectDeadLetterStoreOptions): DeadLetterStore {
  const namespace = checkNamespace(options?.namespace);
  assertOptionNames('createDurableObjectDeadLetterStore', options, OPTION_NAMES);
  const name = `${keyPrefixOption(options.keyPrefix)}dead-letters`;
  const send = (operation: Parameters<typeof sendToObject>[2]) => sendToObject(namespace, name, operation,
    (kind, message, cause) => new DeadLetterStoreError(kind === 'unavailable' ? 'dead_letter_store_unavailable' : 'unexpected_store_reply', message, { cause }));
  const stored = ({ rawBody, ...rest }: DeadLetterEntry): StoredDeadLetter => ({ ...rest, body: toBase64(rawBody) });
  return {
    async put(entry) {
      await send({ op: 'deadLetter.put', entry: stored(entry) });
    },
    async replace(entry) {
      const answer = (await send({ op: 'deadLetter.replace', entry: stored(entry) })) as { replaced?: unknown } | null;
      if (answer?.replaced === true) return;
      // An object deployed from a version before replace (its class in another Worker not yet
      // redeployed) answers null and changed nothing: delete then put, as for a store without
      // replace, until it is redeployed (a put that fails after the delete then leaves neither).
      await send({ op: 'deadLetter.delete', bodySha256: entry.bodySha256 });
      await send({ op: 'deadLetter.put', entry: stored(entry) });
    },
    async list(limit) {
      const stored = (await send({ op: 'deadLetter.list', limit })) as StoredDeadLetter[];
      return stored.map(({ body, ...rest }): DeadLetterEntry => ({ ...rest, rawBody: fromBase64(body) }));
    },
    async delete(bodySha256) {
      await send({ op: 'deadLetter.delete', bodySha256 });
    },
  };
}
