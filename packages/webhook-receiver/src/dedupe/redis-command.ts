import { DedupeStoreError } from '../errors.js';

/**
 * Sends one Redis command (`['SET', key, value, 'NX']`) and resolves to Redis's reply.
 *
 * @example
 * ```ts
 * const command: RedisCommand = (args) => myClient.send(args);
 * createRedisDedupeStore({ client: command });
 * ```
 */
export type RedisCommand = (args: readonly string[]) => Promise<unknown>;

/**
 * The Redis clients {@link createRedisDedupeStore} accepts: an ioredis `Redis` or `Cluster`
 * (anything with `call(command, ...args)`), a node-redis client from `createClient()`
 * (anything with `sendCommand(args)`), or a {@link RedisCommand} function for any other client.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client: new Redis(url) });                   // ioredis
 * createRedisDedupeStore({ client: await createClient({ url }).connect() }); // node-redis
 * ```
 */
export type RedisClientLike =
  | { call(command: string, ...args: string[]): Promise<unknown> }
  | { sendCommand(args: string[]): Promise<unknown> }
  | RedisCommand;

/**
 * Turns either client shape into one command function. ioredis is recognised first, because it
 * also has a `sendCommand` that takes a Command object rather than an argument list.
 */
export function toRedisCommand(client: RedisClientLike): RedisCommand {
  if (typeof client === 'function') return client;
  if (client !== null && typeof client === 'object') {
    if ('call' in client && typeof client.call === 'function') {
      return ([command, ...args]) => client.call(command as string, ...args);
    }
    if ('sendCommand' in client && typeof client.sendCommand === 'function') {
      return (args) => client.sendCommand([...args]);
    }
  }
  throw new DedupeStoreError(
    'unsupported_redis_client',
    'createRedisDedupeStore({ client }) needs an ioredis client (new Redis()), a connected node-redis client ' +
      '(await createClient().connect()) or a function (args: string[]) => Promise<reply>; got ' +
      (client === null ? 'null' : typeof client) + '.',
  );
}
