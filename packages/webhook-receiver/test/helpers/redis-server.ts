import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { startRedisServer, type RedisServer } from '@capi/bench-kit/redis-server';

// The real redis-server of these tests (and of the bench, the runtime matrix and the journeys).
export { startRedisServer, type RedisServer };

/** A redis-server with one client of each library the stores accept, connected to it. */
export interface RedisWithClients {
  readonly server: RedisServer;
  readonly ioredis: Redis;
  readonly nodeRedis: ReturnType<typeof createClient>;
  /** Disconnects both clients, then stops the server. */
  close(): Promise<void>;
}

/** Starts a redis-server and connects an ioredis and a node-redis client to it. */
export async function startRedisWithClients(): Promise<RedisWithClients> {
  const server = await startRedisServer();
  const ioredis = new Redis({ port: server.port, host: '127.0.0.1' });
  const nodeRedis = createClient({ socket: { port: server.port, host: '127.0.0.1' } });
  await nodeRedis.connect();
  return {
    server,
    ioredis,
    nodeRedis,
    async close() {
      ioredis.disconnect();
      await nodeRedis.close();
      await server.close();
    },
  };
}
