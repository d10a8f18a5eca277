// One receiver process of the Redis checks (test/redis-runtimes.test.ts), on Node, Bun or Deno:
// @capi/webhook-receiver with the Redis dedupe store (with a `subscriber`, for wake-ups) and the
// Redis dead-letter store, over a Redis client that runs in this runtime, served by the
// runtime's own HTTP server (runtime-server.mjs). Several of these, in different runtimes,
// share one redis-server; the test signs the deliveries.
//
// Input: CAPI_REDIS_RECEIVER, JSON { redisPort, publicKey, keyPrefix, client }, where client is
// - 'bun': Bun's built-in RedisClient (`import { RedisClient } from 'bun'`) as `client`, and a
//   second one (`await client.duplicate()`) as `subscriber`;
// - 'ioredis': an ioredis client as `client`, and `client.duplicate()` as `subscriber`.
// Prints `LISTENING <port>` once it listens. Under /control/ the test reads what the handlers
// saw (`dispatched`, with times), the wake-ups its subscriber heard, holds a body's handler until released, lists and replays the
// dead letters, and closes the process (`close`: it must then exit by itself, code 0).
import { createRedisDeadLetterStore, createRedisDedupeStore, createWebhookReceiver } from '@capi/webhook-receiver';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { runtime, runtimeVersion, serve } from './runtime-server.mjs';

const { redisPort, publicKey, keyPrefix, client: clientName } = JSON.parse(process.env.CAPI_REDIS_RECEIVER);

/** The wake-ups this process's subscriber heard (`<subject>|<waiter id>`), in order. */
const heard = [];

/** The two connections, in the forms the stores take, and how to close them. */
async function connect() {
  if (clientName === 'bun') {
    const { RedisClient } = await import('bun');
    const client = new RedisClient(`redis://127.0.0.1:${redisPort}`);
    await client.connect();
    const subscriber = await client.duplicate();
    // Given as they are (the stores recognise `send(command, args)` and `subscribe(channel,
    // listener)`); the test's own listener hears the wake-ups beside the store's.
    await subscriber.subscribe(`${keyPrefix}lines`, (message) => heard.push(message));
    return { client, subscriber, close: () => { subscriber.close(); client.close(); } };
  }
  if (clientName === 'ioredis') {
    const { Redis } = await import('ioredis');
    const client = new Redis({ host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: 1 });
    const subscriber = client.duplicate();
    subscriber.on('message', (_channel, message) => heard.push(message));
    return { client, subscriber, close: () => Promise.all([subscriber.quit(), client.quit()]) };
  }
  throw new Error(`Unknown Redis client ${clientName}; this entry knows 'bun' and 'ioredis'.`);
}

/**
 * Stands in for the validator of a later SDK version, whose schema knows the kycStatus the test
 * drifts to: a refusal of `/data/kycStatus` alone is accepted, everything else as before.
 */
function upgradedValidator(rawBody, options) {
  const result = parseWebhookEvent(rawBody, options);
  if (result.ok || result.unknownEventType || !result.errors.every((error) => error.path === '/data/kycStatus' && error.keyword === 'enum')) return result;
  return { ok: true, event: JSON.parse(new TextDecoder().decode(rawBody)) };
}

const redis = await connect();
const dedupe = createRedisDedupeStore({ client: redis.client, subscriber: redis.subscriber, keyPrefix });
const deadLetters = createRedisDeadLetterStore({ client: redis.client, keyPrefix });

/** What the handlers saw, in the order they started; `endedAt` once the handler returned. */
const dispatched = [];
/** Bodies whose handler waits until released (by SHA-256). */
const held = new Map();
/** What onError got (the default would print to stderr, which fails the run). */
const errors = [];

const handler = (via) => async (event, delivery) => {
  const record = { via, userId: event.data.id, kycStatus: event.data.kycStatus, bodySha256: delivery.bodySha256, startedAt: Date.now(), endedAt: null };
  dispatched.push(record);
  await held.get(delivery.bodySha256)?.released;
  record.endedAt = Date.now();
};
const receiverOptions = {
  publicKey,
  dedupe,
  deadLetters,
  onError: (error, { outcome }) => { errors.push({ name: error?.name, code: error?.code, outcome }); },
};
const receiver = createWebhookReceiver(receiverOptions).on('kyc.status.changed', handler('delivery'));
// The same process after an upgrade of the SDK: same stores, a schema that knows the drift.
const upgraded = createWebhookReceiver({ ...receiverOptions, validator: upgradedValidator }).on('kyc.status.changed', handler('replay'));

let server;
async function control(url, body) {
  switch (url.pathname) {
    case '/control/info':
      return { runtime, version: runtimeVersion, client: clientName, receiver: import.meta.resolve('@capi/webhook-receiver') };
    case '/control/dispatched':
      return dispatched;
    case '/control/wake-ups':
      return heard;
    case '/control/errors':
      return errors;
    case '/control/hold': {
      let release;
      const released = new Promise((resolve) => { release = resolve; });
      held.set(body, { released, release });
      return { held: body };
    }
    case '/control/release':
      held.get(body)?.release();
      return { released: body };
    case '/control/dead-letters':
      return (await deadLetters.list(100)).map((entry) => ({
        bodySha256: entry.bodySha256,
        kycStatus: JSON.parse(new TextDecoder().decode(entry.rawBody)).data.kycStatus,
        errors: entry.errors.map((error) => error.path),
      }));
    case '/control/replay':
      return (url.searchParams.has('upgraded') ? upgraded : receiver).replay();
    case '/control/close':
      // After this answer: the server, then both connections; nothing may keep the process alive.
      setTimeout(async () => {
        await server.close();
        await redis.close();
      }, 10);
      return { closing: true };
    default:
      return { unknown: url.pathname };
  }
}

server = await serve(receiver, control);
console.log(`LISTENING ${new URL(server.url).port}`);
