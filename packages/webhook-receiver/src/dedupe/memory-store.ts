import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeStoreTimingOptions, type ClaimOptions, type DedupeClaim, type DedupeStore, type MarkProcessedOptions, type ReleaseOptions, type SubjectWaiter } from './dedupe-store.js';
import { WebhookReceiverError } from '../errors.js';
import { minRetryDelayOption, positiveIntegerOption, replyWindowOption } from './positive-integer-option.js';
import { checkWaiter, checkWaiterId, claimSubject, deliveryOfWaiter, expectSubjectRetry, failedAgo, renewSubjectClaim, joinSubjectLine, leaveSubjectLine, markSubjectProcessed, releaseSubject, type SubjectRecord } from './subject-record.js';
import { assertOptionNames, optionNames } from '../option-names.js';

/** A subject in the memory store: its record, and its neighbours in the least-recently-seen order. */
interface Entry {
  readonly key: string;
  record: SubjectRecord;
  /** Seen less recently (towards the one forgotten next). */
  older: Entry | undefined;
  /** Seen more recently. */
  newer: Entry | undefined;
}

/**
 * Options of {@link createMemoryDedupeStore}.
 *
 * @example
 * ```ts
 * createMemoryDedupeStore({ ttlMs: 48 * 3600_000, maxEntries: 10_000 });
 * ```
 */
export interface MemoryDedupeStoreOptions extends DedupeStoreTimingOptions {
  /** Most subjects remembered; the least recently seen is forgotten first, in constant time. Default 100,000 (about 40 MB of heap: some 400 bytes a subject, `pnpm bench` measures it). */
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
  /** The store's `replyWindowMs` option (30,000 by default): see {@link DedupeStore.replyWindowMs}. */
  readonly replyWindowMs: number;
  /** The store's `minRetryDelayMs` option (60,000 by default): see {@link DedupeStore.minRetryDelayMs}. */
  readonly minRetryDelayMs: number;
  claim(key: string, digest?: string, waitedMs?: number, waiter?: SubjectWaiter, options?: ClaimOptions): DedupeClaim;
  /** `false` when another delivery took the subject after this claim expired (see {@link DedupeStore.markProcessed}). */
  markProcessed(key: string, token: string, options?: MarkProcessedOptions): boolean;
  release(key: string, token: string, options?: ReleaseOptions): void;
  expectRetry(key: string, digest: string, waitedMs?: number, failedMsAgo?: number, waiterId?: string): void;
  joinLine(key: string, waiter: SubjectWaiter): void;
  leaveLine(key: string, waiter: SubjectWaiter): void;
  /** The store's `claimTtlMs`: see {@link DedupeStore.claimTtlMs}. */
  readonly claimTtlMs: number;
  renewClaim(key: string, token: string): boolean;
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<MemoryDedupeStoreOptions>({ ttlMs: true, claimTtlMs: true, minRetryDelayMs: true, replyWindowMs: true, maxEntries: true, now: true });

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
      `createMemoryDedupeStore takes an options object { ttlMs?, claimTtlMs?, minRetryDelayMs?, replyWindowMs?, maxEntries?, now? } or nothing, got ${options === null ? 'null' : typeof options}.`);
  }
  assertOptionNames('createMemoryDedupeStore', options, OPTION_NAMES);
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'now must be a function returning milliseconds, like Date.now.');
  }
  const ttlMs = positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS);
  const minRetryDelayMs = minRetryDelayOption(options.minRetryDelayMs);
  const replyWindowMs = replyWindowOption(options.replyWindowMs);
  const claimTtlMs = positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS);
  const maxEntries = positiveIntegerOption('maxEntries', options.maxEntries, 100_000);
  const now = options.now ?? Date.now;
  // A least-recently-seen list beside the Map, so that every step is O(1). Keeping the order in
  // the Map itself (delete and set again on every hit, evict its first key) made a full store
  // slow: V8 leaves a deleted Map entry in place as a hole until the table is rebuilt, and each
  // eviction's fresh iterator stepped over every hole at the front again. At the default
  // 100,000 entries, a delivery then spent 20 to 55 µs in the store instead of 2 to 3.
  const entries = new Map<string, Entry>();
  let oldest: Entry | undefined;
  let newest: Entry | undefined;
  let nextToken = 0;
  const unlink = (entry: Entry): void => {
    if (entry.older === undefined) oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) newest = entry.older;
    else entry.newer.older = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
  };
  const append = (entry: Entry): void => {
    entry.older = newest;
    if (newest === undefined) oldest = entry;
    else newest.newer = entry;
    newest = entry;
  };
  // Stores `record` as the subject's latest and most recently seen (none: forgets the subject).
  const keep = (key: string, entry: Entry | undefined, record: SubjectRecord | undefined): void => {
    if (record === undefined) {
      if (entry === undefined) return;
      unlink(entry);
      entries.delete(key);
      return;
    }
    if (entry !== undefined) {
      entry.record = record;
      if (entry !== newest) {
        unlink(entry);
        append(entry);
      }
      return;
    }
    const added: Entry = { key, record, older: undefined, newer: undefined };
    entries.set(key, added);
    append(added);
    if (entries.size > maxEntries && oldest !== undefined) {
      const forgotten = oldest;
      unlink(forgotten);
      entries.delete(forgotten.key);
    }
  };

  return {
    replyWindowMs,
    minRetryDelayMs,
    claim(key: string, digest: string = key, waitedMs = 0, waiter?: SubjectWaiter, options?: ClaimOptions): DedupeClaim {
      if (waiter !== undefined) checkWaiter(waiter);
      const entry = entries.get(key);
      const at = now();
      const { claim, record } = claimSubject(entry?.record, digest, at, claimTtlMs, String(nextToken + 1), minRetryDelayMs, at - waitedMs, waiter, replyWindowMs, options);
      if (claim.state === 'claimed') nextToken++;
      keep(key, entry, record);
      return claim;
    },
    markProcessed(key: string, token: string, options?: MarkProcessedOptions): boolean {
      const entry = entries.get(key);
      // Tokens are unique: the record still holds this one unless another delivery took the subject.
      const owned = entry?.record.token === token;
      const next = markSubjectProcessed(entry?.record, key, token, now(), ttlMs, minRetryDelayMs, options, replyWindowMs);
      if (next !== entry?.record) keep(key, entry, next);
      return owned;
    },
    release(key: string, token: string, options?: ReleaseOptions): void {
      const entry = entries.get(key);
      const next = releaseSubject(entry?.record, token, now(), options, minRetryDelayMs, replyWindowMs);
      if (next !== entry?.record) keep(key, entry, next);
    },
    expectRetry(key: string, digest: string, waitedMs = 0, failedMsAgo = 0, waiterId?: string): void {
      checkWaiterId(waiterId);
      const entry = entries.get(key);
      const at = now();
      const next = expectSubjectRetry(entry?.record, digest, at, minRetryDelayMs, at - waitedMs, at - failedAgo(waitedMs, failedMsAgo), replyWindowMs, waiterId);
      if (next !== entry?.record) keep(key, entry, next);
    },
    joinLine(key: string, waiter: SubjectWaiter): void {
      checkWaiter(waiter);
      const entry = entries.get(key);
      const at = now();
      const next = joinSubjectLine(entry?.record, waiter, at, minRetryDelayMs, deliveryOfWaiter(waiter, at - (waiter.waitedMs ?? 0), minRetryDelayMs, replyWindowMs));
      if (next !== entry?.record) keep(key, entry, next);
    },
    leaveLine(key: string, waiter: SubjectWaiter): void {
      checkWaiter(waiter);
      const entry = entries.get(key);
      const next = leaveSubjectLine(entry?.record, waiter, now(), minRetryDelayMs);
      if (next !== entry?.record) keep(key, entry, next);
    },
    claimTtlMs,
    renewClaim(key: string, token: string): boolean {
      const entry = entries.get(key);
      const { record, renewed } = renewSubjectClaim(entry?.record, token, now(), claimTtlMs);
      if (renewed) keep(key, entry, record);
      return renewed;
    },
  };
}
