import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeClaim, type DedupeStore } from './dedupe-store.js';
import { WebhookReceiverError } from '../errors.js';
import { positiveIntegerOption } from './positive-integer-option.js';
import { claimSubject, markSubjectProcessed, releaseSubject, type SubjectRecord } from './subject-record.js';

/**
 * Options of {@link createMemoryDedupeStore}.
 *
 * @example
 * ```ts
 * createMemoryDedupeStore({ ttlMs: 48 * 3600_000, maxEntries: 10_000 });
 * ```
 */
export interface MemoryDedupeStoreOptions {
  /** How long a processed body is remembered, in ms. Default 24 h (retries span 21 minutes). */
  ttlMs?: number;
  /** How long an unfinished claim lives, in ms. Default 2 minutes. */
  claimTtlMs?: number;
  /** Most bodies remembered; the least recently seen is forgotten first. Default 100,000 (about 25 MB of heap). */
  maxEntries?: number;
  /** Clock in ms, injectable for tests. Default `Date.now`. */
  now?: () => number;
}

/**
 * The memory store: the {@link DedupeStore} operations, answered synchronously.
 *
 * @example
 * ```ts
 * const store: MemoryDedupeStore = createMemoryDedupeStore();
 * store.claim('body-sha256').state; // 'claimed', synchronously
 * ```
 */
export interface MemoryDedupeStore extends DedupeStore {
  claim(key: string, digest?: string): DedupeClaim;
  markProcessed(key: string, token: string): void;
  release(key: string, token: string): void;
}

/**
 * A deduplication store in this process's memory: bounded (least recently seen forgotten
 * first) and with a TTL. Right for a single receiver process; several processes need a shared
 * store such as {@link createRedisDedupeStore}.
 *
 * @example
 * ```ts
 * const receiver = createWebhookReceiver({ publicKey, dedupe: createMemoryDedupeStore({ maxEntries: 10_000 }) });
 * ```
 */
export function createMemoryDedupeStore(options: MemoryDedupeStoreOptions = {}): MemoryDedupeStore {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookReceiverError('invalid_options',
      `createMemoryDedupeStore takes an options object { ttlMs?, claimTtlMs?, maxEntries?, now? } or nothing, got ${options === null ? 'null' : typeof options}.`);
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'now must be a function returning milliseconds, like Date.now.');
  }
  const ttlMs = positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS);
  const claimTtlMs = positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS);
  const maxEntries = positiveIntegerOption('maxEntries', options.maxEntries, 100_000);
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order, so re-inserting on every hit makes its first key the
  // least recently seen one: an LRU without a linked list.
  const records = new Map<string, SubjectRecord>();
  let nextToken = 0;
  const keep = (key: string, record: SubjectRecord | undefined): void => {
    records.delete(key);
    if (record === undefined) return;
    records.set(key, record);
    if (records.size > maxEntries) records.delete(records.keys().next().value as string);
  };

  return {
    claim(key: string, digest: string = key): DedupeClaim {
      const { claim, record } = claimSubject(records.get(key), digest, now(), claimTtlMs, String(nextToken + 1));
      if (claim.state === 'claimed') nextToken++;
      keep(key, record);
      return claim;
    },
    markProcessed(key: string, token: string): void {
      const record = records.get(key);
      const next = markSubjectProcessed(record, key, token, now(), ttlMs);
      if (next !== record) keep(key, next);
    },
    release(key: string, token: string): void {
      const record = records.get(key);
      const next = releaseSubject(record, token, now());
      if (next !== record) keep(key, next);
    },
  };
}
