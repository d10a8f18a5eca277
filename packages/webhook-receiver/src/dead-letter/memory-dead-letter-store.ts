import { DeadLetterStoreError, WebhookReceiverError } from '../errors.js';
import { positiveIntegerOption } from '../dedupe/positive-integer-option.js';
import type { DeadLetterEntry, DeadLetterStore } from './dead-letter-store.js';
import { assertOptionNames, optionNames } from '../option-names.js';

/**
 * Options of {@link createMemoryDeadLetterStore}.
 *
 * @example
 * ```ts
 * createMemoryDeadLetterStore({ maxEntries: 1_000 });
 * ```
 */
export interface MemoryDeadLetterStoreOptions {
  /**
   * Most entries kept. Default 10,000. A full store refuses the next entry (the delivery is
   * answered 503 and retried) rather than forgetting an older one: dead letters are never dropped silently.
   */
  maxEntries?: number;
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<MemoryDeadLetterStoreOptions>({ maxEntries: true });

/**
 * A dead-letter store in this process's memory, synchronous: right for tests and for a single
 * process that replays before it restarts. It is empty after a restart; keep dead letters
 * durably with {@link createRedisDeadLetterStore} or your own {@link DeadLetterStore}.
 *
 * @example
 * ```ts
 * const deadLetters = createMemoryDeadLetterStore();
 * const receiver = createWebhookReceiver({ publicKey, deadLetters });
 * ```
 */
export function createMemoryDeadLetterStore(options: MemoryDeadLetterStoreOptions = {}): DeadLetterStore {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookReceiverError('invalid_options',
      `createMemoryDeadLetterStore takes an options object { maxEntries? } or nothing, got ${options === null ? 'null' : typeof options}.`);
  }
  assertOptionNames('createMemoryDeadLetterStore', options, OPTION_NAMES);
  const maxEntries = positiveIntegerOption('maxEntries', options.maxEntries, 10_000);
  const entries = new Map<string, DeadLetterEntry>();
  const refuseWhenFull = () => {
    if (entries.size >= maxEntries) {
      throw new DeadLetterStoreError('dead_letter_store_full',
        `The memory dead-letter store holds its maxEntries (${maxEntries}) entries; replay them (receiver.replay()) or raise maxEntries. The delivery is answered 503 and will be retried.`);
    }
  };
  return {
    put(entry) {
      // A redelivery of the same body keeps the first entry.
      if (entries.has(entry.bodySha256)) return;
      refuseWhenFull();
      entries.set(entry.bodySha256, entry);
    },
    replace(entry) {
      // Synchronous, so nothing runs between the delete and the set: atomic. Deleted first so
      // that the later entry also goes after the others of its millisecond (list sorts stably).
      if (!entries.delete(entry.bodySha256)) refuseWhenFull();
      entries.set(entry.bodySha256, entry);
    },
    list(limit) {
      // Sorted by receipt time; stable, so entries of the same millisecond stay in the order put.
      return [...entries.values()].sort((a, b) => a.receivedAt - b.receivedAt).slice(0, limit);
    },
    delete(bodySha256) {
      entries.delete(bodySha256);
    },
  };
}
