import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeClaim, type DedupeStore } from './dedupe-store.js';
import { WebhookReceiverError } from '../errors.js';
import { positiveIntegerOption } from './positive-integer-option.js';

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

interface Entry {
  state: 'processing' | 'processed';
  token: string;
  /** Digest of the body processed (or being processed) for this key. */
  digest: string;
  expiresAt: number;
  /** While processing: the processed record it replaces, restored if the claim is released. */
  previous?: { digest: string; expiresAt: number };
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
  const entries = new Map<string, Entry>();
  let nextToken = 0;

  return {
    claim(key: string, digest: string = key): DedupeClaim {
      const at = now();
      const entry = entries.get(key);
      let previous: Entry['previous'];
      if (entry !== undefined) {
        entries.delete(key);
        if (entry.expiresAt > at) {
          if (entry.state === 'processing' || entry.digest === digest) {
            entries.set(key, entry);
            return { state: entry.state };
          }
          // A different body than the latest processed one: a new event for this subject.
          previous = { digest: entry.digest, expiresAt: entry.expiresAt };
        } else if (entry.state === 'processing' && entry.previous !== undefined && entry.previous.expiresAt > at) {
          // An expired claim (its process died) falls back to the record it replaced.
          if (entry.previous.digest === digest) {
            entries.set(key, { state: 'processed', token: entry.token, digest, expiresAt: entry.previous.expiresAt });
            return { state: 'processed' };
          }
          previous = entry.previous;
        }
      }
      const token = `${++nextToken}:${digest}`;
      entries.set(key, { state: 'processing', token, digest, expiresAt: at + claimTtlMs, previous });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
      return { state: 'claimed', token };
    },
    markProcessed(key: string, token: string): void {
      const at = now();
      const entry = entries.get(key);
      if (entry === undefined) {
        entries.set(key, { state: 'processed', token, digest: digestOfToken(token, key), expiresAt: at + ttlMs });
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
        return;
      }
      // A claim that expired and was taken over by another delivery is that delivery's now.
      if (entry.token !== token && entry.expiresAt > at) return;
      // The claim's own entry, updated in place and moved to the most recent end.
      entries.delete(key);
      entry.state = 'processed';
      entry.token = token;
      entry.digest = digestOfToken(token, key);
      entry.expiresAt = at + ttlMs;
      entry.previous = undefined;
      entries.set(key, entry);
    },
    release(key: string, token: string): void {
      const entry = entries.get(key);
      if (entry?.token !== token) return;
      // The latest processed event of the subject is still the one before this failed claim.
      if (entry.previous !== undefined && entry.previous.expiresAt > now()) {
        entries.set(key, { state: 'processed', token, digest: entry.previous.digest, expiresAt: entry.previous.expiresAt });
      } else {
        entries.delete(key);
      }
    },
  };
}

/** Tokens are `<id>:<digest>`: markProcessed learns the digest even after the entry was evicted. */
function digestOfToken(token: string, key: string): string {
  const at = token.indexOf(':');
  return at === -1 ? key : token.slice(at + 1);
}
