import { unrefTimer } from '../unref-timer.js';

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
 * (anything with `sendCommand(args)`), Bun's built-in `RedisClient` (anything with
 * `send(command, args)`), or a {@link RedisCommand} function for any other client.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client: new Redis(url) });                   // ioredis
 * createRedisDedupeStore({ client: await createClient({ url }).connect() }); // node-redis
 * createRedisDedupeStore({ client: new RedisClient(url) });             // Bun: import { RedisClient } from 'bun'
 * ```
 */
export type RedisClientLike =
  | { call(command: string, ...args: string[]): Promise<unknown> }
  | { sendCommand(args: string[]): Promise<unknown> }
  | { send(command: string, args: string[]): Promise<unknown> }
  | RedisCommand;

/**
 * Turns either client shape into one command function. ioredis is recognised first, because it
 * also has a `sendCommand` that takes a Command object rather than an argument list.
 * `unsupported` builds the error thrown for anything else (each store throws its own class).
 */
export function toRedisCommand(client: RedisClientLike, unsupported: (message: string) => Error, factoryName: string): RedisCommand {
  if (typeof client === 'function') return client;
  if (client !== null && typeof client === 'object') {
    if ('call' in client && typeof client.call === 'function') {
      return ([command, ...args]) => client.call(command as string, ...args);
    }
    if ('sendCommand' in client && typeof client.sendCommand === 'function') {
      return (args) => client.sendCommand([...args]);
    }
    if ('send' in client && typeof client.send === 'function') {
      return ([command, ...args]) => client.send(command as string, args);
    }
  }
  throw unsupported(
    `${factoryName}({ client }) needs an ioredis client (new Redis()), a connected node-redis client ` +
      "(await createClient().connect()), Bun's RedisClient (new RedisClient()) or a function (args: string[]) => Promise<reply>; got " +
      (client === null ? 'null' : typeof client) + '.',
  );
}

/**
 * The second Redis connection `createRedisDedupeStore({ subscriber })` subscribes with, for
 * wake-ups: an ioredis client (`redis.duplicate()`: anything with `call`, `subscribe(channel)`
 * and `on('message')`), a connected node-redis client (`await client.duplicate().connect()`:
 * `subscribe(channel, listener)`), Bun's `RedisClient` (`await redis.duplicate()`: the same
 * `subscribe(channel, listener)`), or a function that subscribes `onMessage` to `channel`
 * with any other client and resolves once subscribed.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client: redis, subscriber: redis.duplicate() });                       // ioredis
 * createRedisDedupeStore({ client, subscriber: await client.duplicate().connect() });             // node-redis
 * createRedisDedupeStore({ client: redis, subscriber: await redis.duplicate() });                 // Bun's RedisClient
 * ```
 */
export type RedisSubscriberLike =
  | { call(command: string, ...args: string[]): Promise<unknown>; subscribe(channel: string): Promise<unknown>; on(event: 'message', listener: (channel: string, message: string) => void): unknown }
  | { subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown> }
  | ((channel: string, onMessage: (message: string) => void) => unknown);

const ioredisRoutes = new WeakMap<object, Map<string, Set<(message: string) => void>>>();

/**
 * Turns either subscriber shape into one subscribe function, ioredis first (as in
 * {@link toRedisCommand}): its `subscribe` takes a callback of another kind as second argument.
 */
export function toRedisSubscribe(subscriber: RedisSubscriberLike, unsupported: (message: string) => Error): (channel: string, onMessage: (message: string) => void) => unknown {
  if (typeof subscriber === 'function') return subscriber;
  if (subscriber !== null && typeof subscriber === 'object' && typeof subscriber.subscribe === 'function') {
    if ('call' in subscriber && typeof subscriber.call === 'function' && typeof subscriber.on === 'function') {
      const ioredis = subscriber;
      // One 'message' listener per connection, however many stores share it and however often
      // a subscription is tried again: it hands each message to the handlers of its channel.
      let routes = ioredisRoutes.get(ioredis);
      if (routes === undefined) {
        const channels = new Map<string, Set<(message: string) => void>>();
        ioredis.on('message', (from: string, message: string) => {
          for (const handler of channels.get(from) ?? []) handler(message);
        });
        ioredisRoutes.set(ioredis, (routes = channels));
      }
      const channels = routes;
      return (channel, onMessage) => {
        let handlers = channels.get(channel);
        if (handlers === undefined) channels.set(channel, (handlers = new Set()));
        handlers.add(onMessage);
        return ioredis.subscribe(channel);
      };
    }
    // node-redis queues a subscription of a client never connected for ever: refuse it now.
    if ((subscriber as { isOpen?: unknown }).isOpen === false) {
      throw unsupported('createRedisDedupeStore({ subscriber }) got a node-redis client that is not connected: pass await client.duplicate().connect().');
    }
    const nodeRedis = subscriber as Extract<RedisSubscriberLike, { subscribe(channel: string, listener: unknown): unknown }>;
    return (channel, onMessage) => nodeRedis.subscribe(channel, (message) => onMessage(String(message)));
  }
  throw unsupported(
    'createRedisDedupeStore({ subscriber }) needs a second ioredis connection (redis.duplicate()), a connected node-redis ' +
      "one (await client.duplicate().connect()), a second Bun RedisClient (await redis.duplicate()) or a function (channel, onMessage) => Promise; got " +
      (subscriber === null ? 'null' : typeof subscriber) + '.',
  );
}

/**
 * Bounds every command by `timeoutMs`. Clients queue commands while reconnecting, so without a
 * bound a delivery would hang past the service's 30-second window instead of being retried.
 * `unavailable` builds the error of a command that timed out or failed.
 */
export function withCommandTimeout(
  send: RedisCommand,
  timeoutMs: number,
  unavailable: (message: string, cause?: unknown) => Error,
): RedisCommand {
  return (args) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(unavailable(`Redis did not answer ${args[0]} within ${timeoutMs} ms; the delivery is answered 503 and will be retried. Check that Redis is reachable.`));
    }, timeoutMs);
    unrefTimer(timer);
    send(args).then(
      (reply) => { clearTimeout(timer); resolve(reply); },
      (cause: unknown) => {
        clearTimeout(timer);
        reject(unavailable(`Redis failed ${args[0]}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, cause));
      },
    );
  });
}
