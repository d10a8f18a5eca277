// Wake-ups of the Redis store (createRedisDedupeStore({ subscriber })): when a subject that
// deliveries wait for in other processes may be theirs (its holder settled, or the first in its
// line left), the store publishes it, and a waiting delivery claims it at once instead of at its
// next try. On a real redis-server, with each subscriber shape the store takes.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signWebhook } from '@capi/webhook-signature';
import { createMemoryDedupeStore, createRedisDedupeStore, createWebhookReceiver, DedupeStoreError, WebhookReceiverError, type DedupeStore, type RedisClientLike, type RedisSubscriberLike, type WebhookErrorContext, type WebhookReceiver } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';

let redis: RedisWithClients;
let service: FakeService;
const closers: Array<() => unknown> = [];
let prefixCounter = 0;
/** The `wake` callbacks the tests watch with: a store holds them weakly (a receiver keeps its own). */
const watching: unknown[] = [];
const freshPrefix = () => `wake:${process.pid}:${++prefixCounter}:`;

beforeAll(async () => {
  redis = await startRedisWithClients();
  service = await createFakeService();
});
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  await redis?.close();
});

/** A second ioredis connection, closed after the file. */
function ioredisSubscriber(): Redis {
  const connection = redis.ioredis.duplicate();
  closers.push(() => connection.disconnect());
  return connection;
}

const subscribers: Array<[string, () => Promise<RedisSubscriberLike>]> = [
  ['ioredis (redis.duplicate())', async () => ioredisSubscriber()],
  ['node-redis (await client.duplicate().connect())', async () => {
    const subscriber = redis.nodeRedis.duplicate();
    await subscriber.connect();
    closers.push(() => subscriber.close());
    return subscriber;
  }],
  ['a subscribe function', async () => {
    const connection = ioredisSubscriber();
    return (channel: string, onMessage: (message: string) => void) => {
      connection.on('message', (from: string, message: string) => { if (from === channel) onMessage(message); });
      return connection.subscribe(channel);
    };
  }],
];

/**
 * A store that watches its lines, and the wake-ups it got (`<subject>|<waiter id>`, the waiter
 * now first in the subject's line). `settle()` publishes a sentinel and resolves, once it comes
 * back, with every wake-up before it: Redis delivers a channel's messages in the order they were
 * published, so nothing published before the sentinel is still on its way.
 */
async function watchedStore(subscriber: RedisSubscriberLike, client: RedisClientLike = redis.ioredis) {
  const keyPrefix = freshPrefix();
  const store = createRedisDedupeStore({ client, keyPrefix, subscriber });
  const woken: string[] = [];
  const failures: unknown[] = [];
  let heard: (() => void) | undefined;
  const wake = (key: string, waiterId?: string) => { woken.push(`${key}|${waiterId}`); heard?.(); };
  watching.push(wake);
  store.watchLines!(wake, (error) => failures.push(error));
  let sentinels = 0;
  const settle = async (): Promise<string[]> => {
    const sentinel = `sentinel-${++sentinels}|s`;
    // Until the subscription is in place the first sentinel is not heard: publish it again.
    while (!woken.includes(sentinel)) {
      const arrived = new Promise<void>((resolve) => { heard = resolve; });
      await redis.ioredis.publish(`${keyPrefix}lines`, sentinel);
      await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, 50))]);
      expect(failures).toEqual([]);
    }
    return woken.splice(0).filter((key) => !key.startsWith('sentinel-'));
  };
  await settle();
  return { store, settle, keyPrefix };
}

const waiter = (id: string) => ({ id, leftMs: 10_000 });
const nextTurn = () => new Promise<void>((resolve) => { setImmediate(resolve); });

/** Resolves once `count` connections subscribe to `channel`. */
async function subscribed(channel: string, count: number): Promise<void> {
  for (;;) {
    const [, subscribers] = (await redis.ioredis.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
    if (subscribers >= count) return;
    await nextTurn();
  }
}

/**
 * The memory store standing in for a store shared by processes: the test sends its wake-ups
 * (`wake`), `asked` lists its claims and joinLines by waiter id (`claim <id>`, `join <id>`), and
 * `held.hold()` holds the answers of the claims made until the function it returns is called.
 */
function watchableMemoryStore() {
  const inner = createMemoryDedupeStore();
  const asked: string[] = [];
  let woken: ((key: string, waiterId?: string) => void) | undefined;
  let onTheWay: Promise<void> | undefined;
  const store: DedupeStore = {
    async claim(key, digest, waitedMs, place) {
      asked.push(`claim ${place?.id}`);
      const answer = inner.claim(key, digest, waitedMs, place);
      await onTheWay;
      return answer;
    },
    markProcessed: (key, token) => inner.markProcessed(key, token),
    release: (key, token, options) => inner.release(key, token, options),
    joinLine: (key, place) => { asked.push(`join ${place.id}`); inner.joinLine(key, place); },
    leaveLine: (key, place) => inner.leaveLine(key, place),
    watchLines: (wakeUp) => { woken = wakeUp; },
  };
  const held = {
    hold(): () => void {
      let arrive!: () => void;
      onTheWay = new Promise<void>((resolve) => { arrive = resolve; });
      return () => { onTheWay = undefined; arrive(); };
    },
  };
  return { inner, store, asked, held, wake: (key: string, waiterId?: string) => woken!(key, waiterId) };
}

/** Signs `body` now and gives it to `receiver.receive`; resolves with the reply's status. */
async function deliver(receiver: WebhookReceiver, body: string): Promise<number> {
  const { headers } = await signWebhook({ rawBody: body, privateKey: service.privateKey });
  const { reply } = await receiver.receive({
    method: 'POST',
    header: (name) => headers[Object.keys(headers).find((key) => key.toLowerCase() === name) as keyof typeof headers],
    readRawBody: () => Promise.resolve(new TextEncoder().encode(body)),
  });
  return reply.status;
}

describe.each(subscribers)('wakes the processes waiting for a subject, over %s', (_name, makeSubscriber) => {
  it('publishes a subject when its holder settles with deliveries waiting for it, and not when none waits', async () => {
    const { store, settle } = await watchedStore(await makeSubscriber());
    // No one waits: nothing to publish.
    const quiet = await store.claim('quiet', 'd1');
    await store.markProcessed('quiet', (quiet as { token: string }).token);
    // Processed, and released after a failure, with a delivery of another process waiting.
    for (const key of ['processed', 'released']) {
      const held = await store.claim(key, 'd1');
      expect(await store.claim(key, 'd2', 0, waiter(`${key}-w`))).toEqual({ state: 'processing' });
      const { token } = held as { token: string };
      if (key === 'processed') await store.markProcessed(key, token);
      else await store.release(key, token, { retryExpected: true });
    }
    expect(await settle()).toEqual(['processed|processed-w', 'released|released-w']);
  });

  it('publishes a subject when the first in its line leaves it without the subject, so that the next claims', async () => {
    const { store, settle } = await watchedStore(await makeSubscriber());
    // The first in line gives its place back (its call failed): the second may claim now.
    const held = await store.claim('gave-back', 'd1');
    await store.claim('gave-back', 'd2', 0, waiter('first'));
    await store.claim('gave-back', 'd3', 0, waiter('second'));
    await store.markProcessed('gave-back', (held as { token: string }).token);
    expect(await settle()).toEqual(['gave-back|first']);
    await store.leaveLine!('gave-back', waiter('first'));
    expect(await settle()).toEqual(['gave-back|second']);
    expect((await store.claim('gave-back', 'd3', 0, waiter('second'))).state).toBe('claimed');
    // The first in line is a repeat of the body just processed (a duplicate): the next claims.
    const holder = await store.claim('repeat', 'd1');
    await store.claim('repeat', 'd1', 0, waiter('copy'));
    await store.claim('repeat', 'd2', 0, waiter('next'));
    await store.markProcessed('repeat', (holder as { token: string }).token);
    expect(await settle()).toEqual(['repeat|copy']);
    expect(await store.claim('repeat', 'd1', 0, waiter('copy'))).toEqual({ state: 'processed' });
    expect(await settle()).toEqual(['repeat|next']);
    // The last in line leaving wakes no one; neither does a place given back behind the first.
    expect((await store.claim('repeat', 'd2', 0, waiter('next'))).state).toBe('claimed');
    await store.claim('repeat', 'd3', 0, waiter('a'));
    await store.claim('repeat', 'd4', 0, waiter('b'));
    await store.leaveLine!('repeat', waiter('b'));
    expect(await settle()).toEqual([]);
  });
});

describe('wake-ups where Redis is set up otherwise', () => {
  it('still names the subject when the ioredis client adds a keyPrefix of its own', async () => {
    const prefixed = new Redis({ port: redis.server.port, host: '127.0.0.1', keyPrefix: 'app:' });
    closers.push(() => prefixed.disconnect());
    const { store, settle, keyPrefix } = await watchedStore(ioredisSubscriber(), prefixed);
    const held = await store.claim('s', 'd1');
    await store.claim('s', 'd2', 0, waiter('w'));
    await store.markProcessed('s', (held as { token: string }).token);
    expect(await settle()).toEqual(['s|w']);
    expect(await redis.ioredis.get(`app:${keyPrefix}s`)).toMatch(/^processed:d1/);
  });

  it('keeps every write when the Redis user may not publish: only the wake-up is lost', async () => {
    await redis.ioredis.call('ACL', 'SETUSER', 'no-publish', 'on', '>secret', '~*', '+@all', 'resetchannels');
    const limited = new Redis({ port: redis.server.port, host: '127.0.0.1', username: 'no-publish', password: 'secret' });
    closers.push(() => limited.disconnect());
    const store = createRedisDedupeStore({ client: limited, keyPrefix: freshPrefix(), subscriber: ioredisSubscriber() });
    const held = await store.claim('s', 'd1');
    expect(await store.claim('s', 'd1', 0, waiter('copy'))).toEqual({ state: 'processing' });
    await store.claim('s', 'd2', 0, waiter('next'));
    await store.markProcessed('s', (held as { token: string }).token);
    // The copy, first in line, is a duplicate of the processed body; the next claims after it.
    expect(await store.claim('s', 'd1', 0, waiter('copy'))).toEqual({ state: 'processed' });
    expect((await store.claim('s', 'd2', 0, waiter('next'))).state).toBe('claimed');
  });
});

describe('a receiver over a store with wake-ups', () => {
  it('claims a subject held by another process as soon as it is settled, without waiting for its next try', async () => {
    // Two receivers, as two processes: their own store, client and subscriber, one Redis.
    const keyPrefix = freshPrefix();
    const receiverOver = (onEvent: (status: string) => Promise<void> | void) => createWebhookReceiver({
      publicKey: service.publicKey,
      dedupe: createRedisDedupeStore({ client: ioredisSubscriber(), keyPrefix, subscriber: ioredisSubscriber() }),
      onError: (error) => { throw error; },
    }).on('kyc.status.changed', (event) => onEvent(event.data.kycStatus));
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let started!: () => void;
    const holding = new Promise<void>((resolve) => { started = resolve; });
    const seen: string[] = [];
    const first = receiverOver(async (status) => { seen.push(status); started(); await held; });
    const second = receiverOver((status) => { seen.push(status); });
    await subscribed(`${keyPrefix}lines`, 2);
    const pending = deliver(first, eventBody('kyc.status.changed', 'user-w', { kycStatus: 'pending' }));
    await holding;
    // From here on no timer fires: the second delivery's tries after a pause never come, so
    // only a wake-up can give it the subject.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const approved = deliver(second, eventBody('kyc.status.changed', 'user-w', { kycStatus: 'approved' }));
      // Its first claim has been answered `processing` once its place is in the store's line.
      for (let tries = 0; !(await redis.ioredis.get(`${keyPrefix}kyc.status.changed:user-w`))?.includes('\nw'); tries++) {
        expect(tries).toBeLessThan(10_000);
        await new Promise<void>((resolve) => { setImmediate(resolve); });
      }
      release();
      expect(await pending).toBe(200);
      expect(await approved).toBe(200);
      expect(seen).toEqual(['pending', 'approved']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not lose a wake-up that comes while the delivery\'s claim is on its way to the store', async () => {
    const { inner, store, asked, held, wake } = watchableMemoryStore();
    const seen: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, onError: (error) => { throw error; } })
      .on('kyc.status.changed', (event) => { seen.push(event.data.kycStatus); });
    const subject = 'kyc.status.changed:user-v';
    const elsewhere = inner.claim(subject, 'another body') as { token: string };
    const untilClaims = async (count: number) => {
      while (asked.length < count) await nextTurn();
      for (let turn = 0; turn < 10; turn++) await nextTurn();
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const approved = deliver(receiver, eventBody('kyc.status.changed', 'user-v', { kycStatus: 'approved' }));
      await untilClaims(1); // answered `processing`: in line, pausing (no timer ends the pause)
      const arrive = held.hold();
      wake(subject); // a wake-up too early: the subject is still held, the claim is answered `processing`...
      await untilClaims(2);
      inner.markProcessed(subject, elsewhere.token);
      wake(subject); // ... and the wake-up of the settlement comes while that answer is on its way
      arrive();
      expect(await approved).toBe(200);
      expect(seen).toEqual(['approved']);
    } finally {
      vi.useRealTimers();
    }
  });

  it("wakes only the delivery first in the store's line, not every one waiting for the subject", async () => {
    const { inner, store, asked, wake } = watchableMemoryStore();
    const seen: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: store, onError: (error) => { throw error; } })
      .on('kyc.status.changed', (event) => { seen.push(event.data.kycStatus); });
    const subject = 'kyc.status.changed:user-f';
    const elsewhere = inner.claim(subject, 'another body') as { token: string };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const approved = deliver(receiver, eventBody('kyc.status.changed', 'user-f', { kycStatus: 'approved' }));
      while (asked.length < 1) await nextTurn();
      const rejected = deliver(receiver, eventBody('kyc.status.changed', 'user-f', { kycStatus: 'rejected' }));
      while (asked.length < 2) await nextTurn();
      for (let turn = 0; turn < 10; turn++) await nextTurn();
      const [first, second] = asked.map((entry) => entry.split(' ')[1]!);
      expect(asked).toEqual([`claim ${first}`, `join ${second}`]);
      inner.markProcessed(subject, elsewhere.token);
      wake(subject, first);
      expect(await approved).toBe(200);
      expect(await rejected).toBe(200);
      // The first claimed when woken; the second only when the first settled here, once.
      expect(asked.slice(2)).toEqual([`claim ${first}`, `claim ${second}`]);
      expect(seen).toEqual(['approved', 'rejected']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tries a failed subscription again, and wake-ups come once it is in place', async () => {
    const connection = ioredisSubscriber();
    await connection.ping(); // connected before the clock is faked (ioredis times its connection)
    let attempts = 0;
    const subscriber = (channel: string, onMessage: (message: string) => void) => {
      attempts++;
      if (attempts === 1) return Promise.reject(new Error('Connection is closed.'));
      connection.on('message', (from: string, message: string) => { if (from === channel) onMessage(message); });
      return connection.subscribe(channel);
    };
    const keyPrefix = freshPrefix();
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix, subscriber });
    const failures: unknown[] = [];
    let heard!: (wakeUp: string) => void;
    const wokenUp = new Promise<string>((resolve) => { heard = resolve; });
    const wake = (key: string, waiterId?: string) => heard(`${key}|${waiterId}`);
    watching.push(wake);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      store.watchLines!(wake, (error) => failures.push(error));
      for (let turn = 0; turn < 10 && failures.length === 0; turn++) await Promise.resolve();
      expect(failures).toEqual([expect.objectContaining({ code: 'wake_ups_unavailable', message: expect.stringMatching(/\(Connection is closed\.\); trying again in 1 s/) })]);
      await vi.advanceTimersByTimeAsync(1_000);
    } finally {
      vi.useRealTimers();
    }
    expect(attempts).toBe(2);
    await subscribed(`${keyPrefix}lines`, 1);
    const held = await store.claim('s', 'd1');
    await store.claim('s', 'd2', 0, waiter('w'));
    await store.markProcessed('s', (held as { token: string }).token);
    expect(await wokenUp).toBe('s|w');
  });

  it('reports a subscriber that cannot subscribe to onError as wake_ups_unavailable (deliveries then try again every 10 to 250 ms)', async () => {
    const reported: Array<[unknown, WebhookErrorContext]> = [];
    const subscriber = () => Promise.reject(new Error('NOPERM this user has no permissions to access the channel'));
    const dedupe = createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), subscriber });
    createWebhookReceiver({ publicKey: service.publicKey, dedupe, onError: (error, context) => { reported.push([error, context]); } });
    await vi.waitFor(() => expect(reported).toHaveLength(1));
    const [error, context] = reported[0]!;
    expect(error).toBeInstanceOf(DedupeStoreError);
    expect(error).toMatchObject({ code: 'wake_ups_unavailable', message: expect.stringMatching(/did not subscribe to .*lines \(NOPERM.*at their next try \(up to 250 ms\)/) });
    expect(context).toEqual({ outcome: 'dedupe_store_unavailable', afterReply: false });
  });

  it('refuses the client itself as subscriber, and a subscriber of another shape', () => {
    const sameConnection = () => createRedisDedupeStore({ client: redis.ioredis, subscriber: redis.ioredis as never });
    expect(sameConnection).toThrow(WebhookReceiverError);
    expect(sameConnection).toThrow(/subscriber must be a second connection \(ioredis: redis.duplicate\(\)/);
    expect(() => createRedisDedupeStore({ client: redis.ioredis, subscriber: {} as never }))
      .toThrow(expect.objectContaining({ code: 'unsupported_redis_client', message: expect.stringMatching(/needs a second ioredis connection/) }));
  });

  it('refuses a node-redis subscriber that is not connected (its subscription would wait for ever)', () => {
    const unconnected = redis.nodeRedis.duplicate();
    expect(() => createRedisDedupeStore({ client: redis.ioredis, subscriber: unconnected }))
      .toThrow(expect.objectContaining({ code: 'unsupported_redis_client', message: expect.stringMatching(/not connected: pass await client.duplicate\(\).connect\(\)/) }));
  });

  it('lets receivers the partner dropped be collected (a receiver made per request over one store does not leak)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const keyPrefix = freshPrefix();
    const dedupe = createRedisDedupeStore({ client: redis.ioredis, keyPrefix, subscriber: ioredisSubscriber() });
    let collected = 0;
    const registry = new FinalizationRegistry(() => { collected++; });
    const made = 20;
    // What a route handler that builds its receiver (and its callbacks) per request leaves
    // behind: the callbacks are collected only if the store does not keep the receiver alive.
    (() => {
      for (let i = 0; i < made; i++) {
        const onError = () => undefined;
        registry.register(onError, i);
        createWebhookReceiver({ publicKey: service.publicKey, dedupe, onError }).on('kyc.status.changed', () => undefined);
      }
    })();
    await vi.waitFor(async () => {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(collected).toBe(made);
    }, { timeout: 5_000, interval: 50 });
    // A watcher that is kept alive is still woken after a collection.
    const woken: string[] = [];
    const wake = (key: string, waiterId?: string) => { woken.push(`${key}|${waiterId}`); };
    dedupe.watchLines!(wake, () => undefined);
    gc();
    await vi.waitFor(async () => {
      await redis.ioredis.publish(`${keyPrefix}lines`, 's|w');
      expect(woken).toContain('s|w');
    }, { timeout: 5_000, interval: 50 });
  });

  it('has no watchLines without a subscriber (deliveries then try again every 10 to 250 ms)', () => {
    const store: DedupeStore = createRedisDedupeStore({ client: redis.ioredis });
    expect(store.watchLines).toBeUndefined();
  });
});
