import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeClaim, type DedupeStore } from './dedupe-store.js';
import { positiveIntegerOption } from './positive-integer-option.js';
import { toRedisCommand, withCommandTimeout, type RedisClientLike } from './redis-command.js';

/**
 * Options of {@link createRedisDedupeStore}.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client: redis, keyPrefix: 'shop-eu:webhooks:', commandTimeoutMs: 1_000 });
 * ```
 */
export interface RedisDedupeStoreOptions {
  /** An ioredis client, a connected node-redis client, or a command function (see {@link RedisClientLike}). */
  client: RedisClientLike;
  /** Prefix of every key. Default `capi:webhook:`. */
  keyPrefix?: string;
  /** How long a processed body is remembered, in ms. Default 24 h (retries span 21 minutes). */
  ttlMs?: number;
  /** How long an unfinished claim lives, in ms (a process that died mid-handler). Default 2 minutes. */
  claimTtlMs?: number;
  /**
   * How long to wait for Redis before answering 503, in ms. Default 2,000. Clients queue
   * commands while reconnecting, so without this bound a delivery would hang past the
   * service's 30-second window instead of being retried.
   */
  commandTimeoutMs?: number;
}

const PROCESSED = 'processed:';
const CLAIM_PREFIX = 'processing:';
// Deletes the key only while it still holds this delivery's claim, so that releasing a claim
// that expired and was taken over by another process does not delete that process's claim.
// The value is `processed:<digest>` or `processing:<token>|`; the token is `<uuid>:<digest>`.
// A released claim leaves no processed record (see SubjectRecord): the next delivery of the
// subject is dispatched whatever its body. (Earlier versions kept the replaced value after the
// `|` and restored it on release; such a value is deleted like any other claim.)
const RELEASE_IF_OWNED = `
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;
// Records the processed digest unless another delivery holds the key now (this claim expired
// and another process took the subject over, or processed a newer event): as the memory store.
const MARK_PROCESSED_IF_NOT_TAKEN = `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;
// 'processed' alone was written by 1.x under a body digest key: the same body, so processed.
// One script, so that reading the latest digest and taking the claim is atomic across processes.
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, 11) == 'processing:' then return 'processing' end
  if v == 'processed:' .. ARGV[1] or v == 'processed' then return 'processed' end
  if string.sub(v, 1, 10) ~= 'processed:' then return 'foreign:' .. string.sub(v, 1, 40) end
end
redis.call('SET', KEYS[1], 'processing:' .. ARGV[2] .. '|', 'PX', ARGV[3])
return 'claimed'`;

/**
 * A deduplication store in Redis, shared by every receiver process that uses the same Redis:
 * each unique body is processed once across all of them. A claim is `SET key value NX PX`, so
 * exactly one process wins it; a failed handler releases it; success marks the key processed
 * for `ttlMs`. When Redis does not answer within `commandTimeoutMs`, the receiver replies 503
 * and the service retries (fail closed: nothing is dropped).
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * const dedupe = createRedisDedupeStore({ client: new Redis(process.env.REDIS_URL!) });
 * const receiver = createWebhookReceiver({ publicKey, dedupe });
 * ```
 */
export function createRedisDedupeStore(options: RedisDedupeStoreOptions): DedupeStore {
  const send = toRedisCommand(options?.client,
    (message) => new DedupeStoreError('unsupported_redis_client', message), 'createRedisDedupeStore');
  const keyPrefix = options.keyPrefix ?? 'capi:webhook:';
  if (typeof keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:webhooks:', got ${typeof keyPrefix}.`);
  }
  const ttl = String(positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS));
  const claimTtl = String(positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS));
  const commandTimeoutMs = positiveIntegerOption('commandTimeoutMs', options.commandTimeoutMs, 2_000);

  const command = withCommandTimeout(send, commandTimeoutMs,
    (message, cause) => new DedupeStoreError('dedupe_store_unavailable', message, cause === undefined ? undefined : { cause }));

  const releaseClaim = async (key: string, token: string): Promise<void> => {
    await command(['EVAL', RELEASE_IF_OWNED, '1', keyPrefix + key, `${CLAIM_PREFIX}${token}|`]);
  };

  return {
    async claim(key: string, digest: string = key): Promise<DedupeClaim> {
      const token = `${crypto.randomUUID()}:${digest}`;
      let reply: unknown;
      try {
        reply = await command(['EVAL', CLAIM, '1', keyPrefix + key, digest, token, claimTtl]);
      } catch (error) {
        // The script may still be queued in the client and run once Redis is back. A release
        // queued behind it on the same connection undoes it, so that the retry is not
        // answered "in progress" for claimTtlMs.
        releaseClaim(key, token).catch(() => undefined);
        throw error;
      }
      const text = String(reply);
      if (text === 'claimed') return { state: 'claimed', token };
      if (text === 'processed' || text === 'processing') return { state: text };
      throw new DedupeStoreError('unexpected_store_reply',
        `Redis key ${keyPrefix + key} holds "${text.replace(/^foreign:/, '')}", which this store did not write; use a keyPrefix of its own.`);
    },
    async markProcessed(key: string, token: string): Promise<void> {
      await command(['EVAL', MARK_PROCESSED_IF_NOT_TAKEN, '1', keyPrefix + key, `${CLAIM_PREFIX}${token}|`,
        PROCESSED + token.slice(token.indexOf(':') + 1), ttl]);
    },
    release: releaseClaim,
  };
}
