import type { Redis } from 'ioredis';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDeadLetterStore,
  createRedisDedupeStore,
  type DeadLetterStore,
  type DedupeStore,
} from '../../src/index.js';

/** A deduplication store and a dead-letter store that share where they keep things. */
export interface Stores { readonly dedupe: DedupeStore; readonly deadLetters: DeadLetterStore }

let prefixCounter = 0;

/**
 * The store pairs the drift and replay tests run on: in memory, and in Redis over `redis()` (read
 * when a pair is made, so that it can be connected in a beforeAll), each pair under a fresh key
 * prefix starting with `prefix`.
 */
export function storeKinds(redis: () => Redis, prefix: string): Array<[string, () => Stores]> {
  return [
    ['memory stores', () => ({ dedupe: createMemoryDedupeStore(), deadLetters: createMemoryDeadLetterStore() })],
    ['Redis stores on a real redis-server', () => {
      const keyPrefix = `${prefix}:${process.pid}:${++prefixCounter}:`;
      return { dedupe: createRedisDedupeStore({ client: redis(), keyPrefix }), deadLetters: createRedisDeadLetterStore({ client: redis(), keyPrefix }) };
    }],
  ];
}
