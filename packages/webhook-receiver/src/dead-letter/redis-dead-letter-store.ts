import { DeadLetterStoreError, WebhookReceiverError } from '../errors.js';
import { positiveIntegerOption } from '../dedupe/positive-integer-option.js';
import { toRedisCommand, withCommandTimeout, type RedisClientLike } from '../dedupe/redis-command.js';
import { fromBase64, toBase64 } from './base64.js';
import type { DeadLetterEntry, DeadLetterStore } from './dead-letter-store.js';
import { assertOptionNames, optionNames } from '../option-names.js';

/**
 * Options of {@link createRedisDeadLetterStore}.
 *
 * @example
 * ```ts
 * createRedisDeadLetterStore({ client: redis, keyPrefix: 'shop-eu:webhooks:' });
 * ```
 */
export interface RedisDeadLetterStoreOptions {
  /** An ioredis client, a connected node-redis client, or a command function (see {@link RedisClientLike}). */
  client: RedisClientLike;
  /** Prefix of the two keys (`<prefix>dead-letters` and `<prefix>dead-letters:order`). Default `capi:webhook:`. */
  keyPrefix?: string;
  /** How long to wait for Redis before the delivery is answered 503, in ms. Default 2,000. */
  commandTimeoutMs?: number;
  /**
   * Most entries kept. Default 100,000. A full store refuses the next entry (the delivery is
   * answered 503 and retried; `onError` gets a `DeadLetterStoreError` `dead_letter_store_full`)
   * rather than forgetting an older one; a redelivery of a body already kept is not refused, nor a `replace` of one.
   * Checked in the put's script, so the bound holds across processes. Entries never expire, so
   * this is what bounds the store's memory: about 2.4 KB an entry for a typical event (a 1 KB
   * body), some 240 MB at the default (larger bodies take more, up to the receiver's `maxBodyBytes` each).
   * Ten times the memory store's default: Redis is durable and shared, the place for drift that
   * lasts days (a day of one drifted event type at one event a second is 86,400 entries), and
   * the bound still stops that growth before it fills the Redis the deduplication store needs.
   */
  maxEntries?: number;
}

// The entries live in one hash (digest -> JSON) and their order in a sorted set (score: the
// receipt time). One script each, so that the two never disagree, whichever process writes.
// A redelivery of the same body keeps the first entry (1), even in a full store; a new entry
// when the hash holds maxEntries (ARGV[4]) already is refused (0).
const PUT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1`;
// A replacement (REPLACE) takes the digest's entry and its place in the order (ZADD moves it), in
// one script: Redis runs it whole or, refused (at maxmemory, say: it fails at its first write),
// not at all, so the earlier entry is never deleted without the later one kept. Only a digest
// not kept yet counts against maxEntries.
const REPLACE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1`;
const DELETE = `
redis.call('HDEL', KEYS[1], ARGV[1])
return redis.call('ZREM', KEYS[2], ARGV[1])`;
const LIST = `
local digests = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1)
if #digests == 0 then return {} end
return redis.call('HMGET', KEYS[1], unpack(digests))`;

interface StoredEntry {
  bodySha256: string;
  /** The raw body in base64: it may not even be UTF-8. */
  body: string;
  timestamp: number;
  signature: string;
  receivedAt: number;
  errors: DeadLetterEntry['errors'];
  /** Left out for `invalid_event` (as entries of the previous versions are). */
  reason?: 'handler_failed' | 'in_flight';
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<RedisDeadLetterStoreOptions>({ client: true, keyPrefix: true, commandTimeoutMs: true, maxEntries: true });

/**
 * A dead-letter store in Redis, shared by every receiver process that uses the same Redis (and
 * `keyPrefix`). Entries have no expiry: they stay until a replay processes them (or you delete
 * them), up to `maxEntries` (100,000 by default; a full store refuses new entries with 503);
 * use Redis persistence (AOF or RDB) so that a Redis restart keeps them.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL!);
 * const receiver = createWebhookReceiver({
 *   publicKey,
 *   dedupe: createRedisDedupeStore({ client: redis }),
 *   deadLetters: createRedisDeadLetterStore({ client: redis }),
 * });
 * ```
 */
export function createRedisDeadLetterStore(options: RedisDeadLetterStoreOptions): DeadLetterStore {
  const send = toRedisCommand(options?.client,
    (message) => new DeadLetterStoreError('unsupported_redis_client', message), 'createRedisDeadLetterStore');
  assertOptionNames('createRedisDeadLetterStore', options, OPTION_NAMES);
  const keyPrefix = options.keyPrefix ?? 'capi:webhook:';
  if (typeof keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:webhooks:', got ${typeof keyPrefix}.`);
  }
  const commandTimeoutMs = positiveIntegerOption('commandTimeoutMs', options.commandTimeoutMs, 2_000);
  const maxEntries = positiveIntegerOption('maxEntries', options.maxEntries, 100_000);
  const command = withCommandTimeout(send, commandTimeoutMs,
    (message, cause) => new DeadLetterStoreError('dead_letter_store_unavailable', message, cause === undefined ? undefined : { cause }));
  const entriesKey = `${keyPrefix}dead-letters`;
  const orderKey = `${keyPrefix}dead-letters:order`;
  // Runs PUT or REPLACE, which take the same arguments and answer 0 when the store is full.
  const write = async (script: string, entry: DeadLetterEntry) => {
    const stored: StoredEntry = {
      bodySha256: entry.bodySha256,
      body: toBase64(entry.rawBody),
      timestamp: entry.timestamp,
      signature: entry.signature,
      receivedAt: entry.receivedAt,
      errors: entry.errors,
    };
    if (entry.reason === 'handler_failed' || entry.reason === 'in_flight') stored.reason = entry.reason;
    const kept = await command(['EVAL', script, '2', entriesKey, orderKey, entry.bodySha256, String(entry.receivedAt), JSON.stringify(stored), String(maxEntries)]);
    // The integer reply 0 (a number from ioredis and node-redis; a command function may give text or a bigint).
    if (String(kept) === '0') {
      throw new DeadLetterStoreError('dead_letter_store_full',
        `The Redis dead-letter store ${entriesKey} holds its maxEntries (${maxEntries}) entries; replay them (receiver.replay()), delete the ones you do not need, or raise maxEntries. The delivery is answered 503 and will be retried.`);
    }
  };

  return {
    async put(entry) {
      await write(PUT, entry);
    },
    async replace(entry) {
      await write(REPLACE, entry);
    },
    async list(limit) {
      const reply = await command(['EVAL', LIST, '2', entriesKey, orderKey, String(limit)]);
      if (!Array.isArray(reply)) {
        throw new DeadLetterStoreError('unexpected_store_reply', `Redis answered ${typeof reply} to the dead-letter listing; use a keyPrefix of its own.`);
      }
      return reply.filter((value) => value !== null).map((value) => fromStored(String(value), entriesKey));
    },
    async delete(bodySha256) {
      await command(['EVAL', DELETE, '2', entriesKey, orderKey, bodySha256]);
    },
  };
}

function fromStored(text: string, entriesKey: string): DeadLetterEntry {
  let stored: StoredEntry;
  try {
    stored = JSON.parse(text) as StoredEntry;
  } catch (cause) {
    throw new DeadLetterStoreError('unexpected_store_reply', `Redis hash ${entriesKey} holds a value this store did not write; use a keyPrefix of its own.`, { cause });
  }
  return {
    bodySha256: stored.bodySha256,
    rawBody: fromBase64(stored.body),
    timestamp: stored.timestamp,
    signature: stored.signature,
    receivedAt: stored.receivedAt,
    errors: stored.errors,
    reason: stored.reason ?? 'invalid_event',
  };
}
