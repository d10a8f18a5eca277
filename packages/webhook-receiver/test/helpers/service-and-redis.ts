import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { createFakeService, type FakeService } from './service.js';
import type { RunningServer } from './servers.js';

// Live bindings, set by the hooks that useServiceAndRedis() registers (each test file has its own).
/** The service's side of delivery (see {@link createFakeService}). */
export let service: FakeService;
/** A client of a real redis-server started for the test file. */
export let redis: Redis;
/** Servers a test started: closed after each test. */
export const running: RunningServer[] = [];
let redisServer: RedisServer | undefined;

/**
 * Registers the hooks of a test file that delivers over HTTP and keeps its stores in Redis: a
 * {@link service} and a redis-server with a client ({@link redis}) for the whole file, and the
 * servers pushed to {@link running} closed after each test. Call it at the top level of the file.
 */
export function useServiceAndRedis(): void {
  beforeAll(async () => {
    [service, redisServer] = await Promise.all([createFakeService(), startRedisServer()]);
    redis = new Redis({ host: '127.0.0.1', port: redisServer.port });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()));
  });
  afterAll(async () => {
    redis?.disconnect();
    await redisServer?.close();
  });
}
