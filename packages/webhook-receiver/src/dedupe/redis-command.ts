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
  }
  throw unsupported(
    `${factoryName}({ client }) needs an ioredis client (new Redis()), a connected node-redis client ` +
      '(await createClient().connect()) or a function (args: string[]) => Promise<reply>; got ' +
      (client === null ? 'null' : typeof client) + '.',
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
    (timer as { unref?: () => void }).unref?.();
    send(args).then(
      (reply) => { clearTimeout(timer); resolve(reply); },
      (cause: unknown) => {
        clearTimeout(timer);
        reject(unavailable(`Redis failed ${args[0]}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, cause));
      },
    );
  });
}
