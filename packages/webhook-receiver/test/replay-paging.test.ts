// receiver.replay({ limit }) goes past the dead letters that stay. The store lists oldest first and
// keeps no cursor, so a replay that counted every entry it ran would run the same `limit` oldest
// entries that still fail (the upgrade does not know their drift yet, or their handler fails) on
// every call, and never the fixable ones behind them. The rule: `limit` counts the entries that
// are done (processed, duplicate, superseded, unknown type); those that stay are run and reported,
// once per call, and the call goes on past them. Memory stores, and Redis stores on a real redis-server.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDeadLetterStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  type DeadLetterEntry,
  type DeadLetterStore,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { storeKinds, type Stores } from './helpers/drift-stores.js';
import { redis, running, service, useServiceAndRedis } from './helpers/service-and-redis.js';
import { listen } from './helpers/servers.js';
import { driftedBodies, upgradedValidator } from './helpers/upgraded-validator.js';

let userCounter = 0;
useServiceAndRedis();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const nextUser = () => `paging-${process.pid}-${++userCounter}`;

/** A drift the upgraded validator knows (a new `kycStatus` value): fixed by the upgrade. */
const fixable = (userId: string) => driftedBodies(userId).newEnumValue;
/** A drift the upgrade does not know yet: the new `kycStatus` value and, besides, no `email`. */
function stillInvalid(userId: string): string {
  const event = JSON.parse(driftedBodies(userId).newEnumValue) as { eventType: string; data: Record<string, unknown> };
  const { email: _omitted, ...data } = event.data;
  return JSON.stringify({ ...event, data });
}

/** Listings the receiver asked of a store: their limits, in order. */
function countingLists(store: DeadLetterStore, limits: number[]): DeadLetterStore {
  return {
    put: (entry) => store.put(entry),
    list: (limit) => { limits.push(limit); return store.list(limit); },
    delete: (digest) => store.delete(digest),
  };
}

const storeKindsHere = storeKinds(() => redis, 'paging');

/** A receiver on `stores`; `dispatched` gets `<data.id> <kycStatus>` per handler call. */
function receiverOn(stores: Stores, options: Partial<WebhookReceiverOptions> = {}) {
  const seen = { dispatched: [] as string[], errors: [] as Array<{ error: unknown; context: WebhookErrorContext }> };
  const receiver = createWebhookReceiver({
    publicKey: service.publicKey,
    ...stores,
    onInvalidEvent: () => undefined,
    onError: (error, context) => { seen.errors.push({ error, context }); },
    ...options,
  }).onAny((event) => {
    seen.dispatched.push(`${event.data.id} ${(event.data as { kycStatus?: string }).kycStatus}`);
  });
  return { receiver, seen };
}

/** Keeps `bodies` in `deadLetters` as the receiver would, received 1 ms apart in that order. */
async function keep(deadLetters: DeadLetterStore, bodies: readonly string[], firstReceivedAt = Date.now() - 60_000): Promise<void> {
  for (const [index, body] of bodies.entries()) {
    const entry: DeadLetterEntry = {
      bodySha256: sha256(body), rawBody: new TextEncoder().encode(body), timestamp: 1_700_000_000,
      signature: 'kept', receivedAt: firstReceivedAt + index, errors: [],
    };
    await deadLetters.put(entry);
  }
}

const stays = (body: string) => ({ bodySha256: sha256(body), outcome: 'invalid_event_dead_lettered', deleted: false });
const processed = (body: string) => ({ bodySha256: sha256(body), outcome: 'processed', deleted: true });

describe.each(storeKindsHere)('replay goes past the dead letters that stay, with %s', (_storeName, createStores) => {
  it('kept over HTTP: 3 entries the upgrade still refuses ahead of a fixable one, replay({ limit: 2 }) processes the fixable one in its first call', async () => {
    const stores = createStores();
    // The old SDK keeps four drifted events, over HTTP, as the platform sends them.
    const old = receiverOn(stores);
    const server = await listen(toNodeHandler(old.receiver));
    running.push(server);
    const ahead = [stillInvalid(nextUser()), stillInvalid(nextUser()), stillInvalid(nextUser())];
    const behind = fixable(nextUser());
    for (const body of [...ahead, behind]) {
      expect((await service.deliver(`${server.url}/webhooks`, body)).body.code).toBe('invalid_event_dead_lettered');
    }
    expect((await stores.deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual([...ahead, behind].map(sha256));

    const upgraded = receiverOn(stores, { validator: upgradedValidator });
    // Each entry run once, in order; the three that stay do not count toward the limit.
    expect((await upgraded.receiver.replay({ limit: 2 })).results).toEqual([...ahead.map(stays), processed(behind)]);
    expect(upgraded.seen.dispatched).toEqual([`${JSON.parse(behind).data.id} someNewValue`]);
    // The next call runs those three once more, and ends: nothing else is left.
    expect((await upgraded.receiver.replay({ limit: 2 })).results).toEqual(ahead.map(stays));
    expect((await stores.deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual(ahead.map(sha256));
    expect(upgraded.seen.dispatched).toHaveLength(1);
  });

  it('with limit 1, each call processes the next fixable entry behind the same three that stay, and the calls end', async () => {
    const stores = createStores();
    const ahead = [stillInvalid(nextUser()), stillInvalid(nextUser()), stillInvalid(nextUser())];
    const behind = [fixable(nextUser()), fixable(nextUser())];
    // Oldest first: an entry that stays between the two fixable ones too.
    const between = stillInvalid(nextUser());
    await keep(stores.deadLetters, [...ahead, behind[0]!, between, behind[1]!]);
    const { receiver, seen } = receiverOn(stores, { validator: upgradedValidator });

    expect((await receiver.replay({ limit: 1 })).results).toEqual([...ahead.map(stays), processed(behind[0]!)]);
    expect((await receiver.replay({ limit: 1 })).results).toEqual([...ahead.map(stays), stays(between), processed(behind[1]!)]);
    expect((await receiver.replay({ limit: 1 })).results).toEqual([...ahead, between].map(stays));
    expect(seen.dispatched).toEqual(behind.map((body) => `${JSON.parse(body).data.id} someNewValue`));
  });

  it('with the default limit, reaches a fixable entry behind 120 that stay in one call, listing the store twice', async () => {
    const stores = createStores();
    const ahead = Array.from({ length: 120 }, () => stillInvalid(nextUser()));
    const behind = fixable(nextUser());
    await keep(stores.deadLetters, [...ahead, behind]);
    const limits: number[] = [];
    const { receiver, seen } = receiverOn({ ...stores, deadLetters: countingLists(stores.deadLetters, limits) }, { validator: upgradedValidator });

    const { results } = await receiver.replay();
    expect(results).toEqual([...ahead.map(stays), processed(behind)]);
    expect(seen.dispatched).toEqual([`${JSON.parse(behind).data.id} someNewValue`]);
    // The 100 oldest, then room for those 100 and as many again: the second listing is short, so the call ends.
    expect(limits).toEqual([100, 200]);
  });

  it('goes past entries whose handler fails too, and runs each at most once per call', async () => {
    const stores = createStores();
    const failingUsers = [nextUser(), nextUser(), nextUser()];
    const ahead = failingUsers.map(fixable);
    const behind = fixable(nextUser());
    await keep(stores.deadLetters, [...ahead, behind]);
    const { receiver, seen } = receiverOn(stores, { validator: upgradedValidator });
    receiver.on('kyc.status.changed', (event) => {
      if (failingUsers.includes(event.data.id)) throw new Error(`no mapping for ${event.data.kycStatus} yet`);
    });

    const { results } = await receiver.replay({ limit: 2 });
    expect(results).toEqual([
      ...ahead.map((body) => ({ bodySha256: sha256(body), outcome: 'handler_failed', deleted: false })),
      processed(behind),
    ]);
    expect(seen.errors.map(({ context }) => context.outcome)).toEqual(['handler_failed', 'handler_failed', 'handler_failed']);
    expect((await stores.deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual(ahead.map(sha256));
  });

  it('stops at limit entries done, oldest first, and leaves the rest for the next call', async () => {
    const stores = createStores();
    const bodies = [fixable(nextUser()), stillInvalid(nextUser()), fixable(nextUser()), fixable(nextUser())];
    await keep(stores.deadLetters, bodies);
    const { receiver } = receiverOn(stores, { validator: upgradedValidator });
    expect((await receiver.replay({ limit: 2 })).results).toEqual([processed(bodies[0]!), stays(bodies[1]!), processed(bodies[2]!)]);
    expect((await receiver.replay({ limit: 2 })).results).toEqual([stays(bodies[1]!), processed(bodies[3]!)]);
  });
});

describe('replay bounds its work', () => {
  it('stops at the first entry the deduplication store could not take: the others would wait for it in vain', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const bodies = [fixable(nextUser()), fixable(nextUser()), fixable(nextUser())];
    await keep(deadLetters, bodies);
    const down: DedupeStore = {
      claim: () => { throw new Error('connection refused'); },
      markProcessed: () => undefined,
      release: () => undefined,
    };
    const { receiver, seen } = receiverOn({ dedupe: down, deadLetters }, { validator: upgradedValidator });
    expect((await receiver.replay()).results).toEqual([{ bodySha256: sha256(bodies[0]!), outcome: 'dedupe_store_unavailable', deleted: false }]);
    expect(seen.errors.map(({ context }) => context.outcome)).toEqual(['dedupe_store_unavailable']);
    expect(seen.dispatched).toEqual([]);
    expect(await deadLetters.list(10)).toHaveLength(3);
  });

  it('returns what it did when a later listing fails (onError gets the failure), and rejects when the first one does', async () => {
    const store = createMemoryDeadLetterStore();
    const ahead = stillInvalid(nextUser());
    await keep(store, [ahead, fixable(nextUser())]);
    let listings = 0;
    const failure = new Error('dead-letter store down');
    const failingLater: DeadLetterStore = {
      put: (entry) => store.put(entry),
      list: (limit) => { if (++listings > 1) throw failure; return store.list(limit); },
      delete: (digest) => store.delete(digest),
    };
    const { receiver, seen } = receiverOn({ dedupe: createMemoryDedupeStore(), deadLetters: failingLater }, { validator: upgradedValidator });
    expect((await receiver.replay({ limit: 1 })).results).toEqual([stays(ahead)]);
    expect(seen.errors).toEqual([{ error: failure, context: expect.objectContaining({ outcome: 'dead_letter_store_unavailable' }) }]);
    await expect(receiver.replay({ limit: 1 })).rejects.toBe(failure);
  });

  it('keeps the limit\'s default and its check', async () => {
    const { receiver } = receiverOn({ dedupe: createMemoryDedupeStore(), deadLetters: createMemoryDeadLetterStore() });
    for (const limit of [0, -1, 1.5, Number.NaN, '5' as unknown as number]) {
      await expect(receiver.replay({ limit })).rejects.toMatchObject({ name: 'WebhookReceiverError', code: 'invalid_options', message: expect.stringContaining('limit') });
    }
    expect(await receiver.replay()).toEqual({ results: [] });
  });
});

describe('a full Redis dead-letter store, on a real redis-server', () => {
  it('answers the delivery 503 and gives onError dead_letter_store_full; the retry is kept once a replay made room', async () => {
    const keyPrefix = `paging:${process.pid}:full:${crypto.randomUUID()}:`;
    const stores = { dedupe: createRedisDedupeStore({ client: redis, keyPrefix }), deadLetters: createRedisDeadLetterStore({ client: redis, keyPrefix, maxEntries: 2 }) };
    const old = receiverOn(stores);
    const server = await listen(toNodeHandler(old.receiver));
    running.push(server);
    const url = `${server.url}/webhooks`;
    const [first, second, third] = [fixable(nextUser()), stillInvalid(nextUser()), fixable(nextUser())];
    for (const body of [first, second]) expect((await service.deliver(url, body)).status).toBe(202);
    expect(await service.deliver(url, third)).toMatchObject({ status: 503, body: { code: 'dead_letter_store_unavailable' } });
    expect(old.seen.errors.map(({ error }) => (error as { code?: string }).code)).toContain('dead_letter_store_full');
    // A later copy of a kept body is still acknowledged, even in a full store (it takes the entry's place, later).
    expect(await service.deliver(url, first)).toMatchObject({ status: 202, body: { code: 'invalid_event_dead_lettered' } });

    const upgraded = receiverOn(stores, { validator: upgradedValidator });
    expect((await upgraded.receiver.replay()).results).toEqual([stays(second), processed(first)]);
    expect((await service.deliver(url, third)).status).toBe(202);
    expect((await stores.deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual([second, third].map(sha256));
  });
});
