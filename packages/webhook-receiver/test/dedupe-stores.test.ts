import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The stores are imported from their modules, so that this file runs without the packages the receiver builds on.
import type { DedupeStore } from '../src/dedupe/dedupe-store.js';
import { createMemoryDedupeStore } from '../src/dedupe/memory-store.js';
import { createRedisDedupeStore } from '../src/dedupe/redis-store.js';
import { createDurableObjectDedupeStore } from '../src/dedupe/durable-object-store.js';
import { claimSubject, markSubjectProcessed, releaseSubject, type SubjectRecord } from '../src/dedupe/subject-record.js';
import { DedupeStoreError, WebhookReceiverError } from '../src/errors.js';
import { describeDedupeStoreContract, type StoreFactory } from './helpers/dedupe-store-contract.js';
import { startRedisServer, startRedisWithClients, type RedisWithClients } from './helpers/redis-server.js';

let redis: RedisWithClients;
let prefixCounter = 0;

beforeAll(async () => {
  redis = await startRedisWithClients();
});

afterAll(async () => {
  await redis?.close();
});

const freshPrefix = () => `test:${process.pid}:${++prefixCounter}:`;

// One contract, run against every store and every Redis client shape.
const stores: Array<[string, StoreFactory]> = [
  ['memory store', (options) => createMemoryDedupeStore(options)],
  ['Redis store over ioredis', (options) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), ...options })],
  ['Redis store over node-redis', (options) => createRedisDedupeStore({ client: redis.nodeRedis, keyPrefix: freshPrefix(), ...options })],
  ['Redis store over a command function', (options) =>
    createRedisDedupeStore({ client: (args) => redis.ioredis.call(args[0]!, ...args.slice(1)), keyPrefix: freshPrefix(), ...options })],
];

describe.each(stores)('%s', (_name, createStore) => describeDedupeStoreContract(createStore));

describe('rejects unusable store options with invalid_options', () => {
  it.each([
    ['memory store options of null', () => createMemoryDedupeStore(null as never), /createMemoryDedupeStore takes an options object .* got null/],
    ['a memory store clock that is not a function', () => createMemoryDedupeStore({ now: 1 as never }), /now must be a function returning milliseconds/],
    ['a Redis keyPrefix that is not a string', () => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: 7 as never }), /keyPrefix must be a string .* got number/],
  ])('%s', (_name, create, message) => {
    expect(create).toThrow(WebhookReceiverError);
    expect(create).toThrow(message);
  });
});

describe('refuses a replyWindowMs that is not a whole number of ms above 0, with invalid_options naming it', () => {
  // A namespace is only reached by an operation: creating the store sends nothing.
  const namespace = { idFromName: (name: string) => name, get: () => { throw new Error('not reached'); } };
  const creators: Array<[string, (replyWindowMs: unknown) => DedupeStore]> = [
    ['memory store', (replyWindowMs) => createMemoryDedupeStore({ replyWindowMs: replyWindowMs as number })],
    ['Redis store', (replyWindowMs) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), replyWindowMs: replyWindowMs as number })],
    ['Durable Object store', (replyWindowMs) => createDurableObjectDedupeStore({ namespace, replyWindowMs: replyWindowMs as number })],
  ];
  describe.each(creators)('%s', (_name, create) => {
    it.each([
      ['0', 0, 'got 0'],
      ['a negative number', -200, 'got -200'],
      ['a fraction', 1.5, 'got 1.5'],
      ['a string', '100', 'got string'],
      ['NaN', Number.NaN, 'got NaN'],
    ])('refuses %s', (_what, replyWindowMs, got) => {
      let error: unknown;
      try { create(replyWindowMs); } catch (caught) { error = caught; }
      expect(error).toBeInstanceOf(WebhookReceiverError);
      expect(error).toMatchObject({
        code: 'invalid_options',
        message: `replyWindowMs must be a whole number of ms above 0 (the service waits 30,000 for an answer; against a sandbox with --delivery-timeout or deliveryTimeoutMs T, T), ${got}.`,
      });
    });

    it('takes a whole number of ms above 0, and 30,000 without one; the store says which (the receiver reads it)', () => {
      expect(create(200).replyWindowMs).toBe(200);
      expect(create(1).replyWindowMs).toBe(1);
      expect(create(undefined).replyWindowMs).toBe(30_000);
    });
  });

  it.each([
    ['memory store', (minRetryDelayMs?: number) => createMemoryDedupeStore({ minRetryDelayMs })],
    ['Redis store', (minRetryDelayMs?: number) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), minRetryDelayMs })],
    ['Durable Object store', (minRetryDelayMs?: number) => createDurableObjectDedupeStore({ namespace, minRetryDelayMs })],
  ])('the %s says its minRetryDelayMs too, 60,000 without one (the receiver reads it to pace its key rechecks)', (_name, create) => {
    expect(create(1_000).minRetryDelayMs).toBe(1_000);
    expect(create(undefined).minRetryDelayMs).toBe(60_000);
  });
});

describe('memory store bounds', () => {
  it('forgets the least recently seen body beyond maxEntries', async () => {
    const store = createMemoryDedupeStore({ maxEntries: 2 });
    store.claim('a');
    store.claim('b');
    store.claim('a'); // seen again: now b is the least recently seen
    store.claim('c');
    expect(store.claim('a')).toEqual({ state: 'processing' });
    expect(store.claim('b').state).toBe('claimed');
  });

  it('forgets subjects in least-recently-seen order over any run of claims, settlements and releases', () => {
    // The reference keeps the order in a Map (delete and set again on every hit, forget its first
    // key), which is right but slow once full; the store keeps a list beside its Map instead.
    // Both apply the same record transitions, so any difference is in what is remembered.
    const reference = (maxEntries: number, now: () => number) => {
      const records = new Map<string, SubjectRecord>();
      let nextToken = 0;
      const keep = (key: string, record: SubjectRecord | undefined) => {
        records.delete(key);
        if (record === undefined) return;
        records.set(key, record);
        if (records.size > maxEntries) records.delete(records.keys().next().value as string);
      };
      return {
        claim(key: string, digest: string) {
          // The store's defaults: claimTtlMs 2 minutes, minRetryDelayMs 1 minute.
          const { claim, record } = claimSubject(records.get(key), digest, now(), 120_000, String(nextToken + 1), 60_000);
          if (claim.state === 'claimed') nextToken++;
          keep(key, record);
          return claim;
        },
        markProcessed(key: string, token: string, options: { retryExpected: boolean }) {
          const record = records.get(key);
          const next = markSubjectProcessed(record, key, token, now(), 24 * 3600_000, 60_000, options);
          if (next !== record) keep(key, next);
        },
        release(key: string, token: string, options: { retryExpected: boolean }) {
          const record = records.get(key);
          const next = releaseSubject(record, token, now(), options, 60_000);
          if (next !== record) keep(key, next);
        },
      };
    };
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('claim' as const), key, digest: fc.constantFrom('x', 'y') }),
      fc.record({ kind: fc.constantFrom('markProcessed' as const, 'release' as const), key, nth: fc.nat(8), retryExpected: fc.boolean() }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.constantFrom(1, 60_000, 200_000, 1_300_000) }),
    );
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.array(operation, { maxLength: 80 }), (maxEntries, operations) => {
      let now = 0;
      const store = createMemoryDedupeStore({ maxEntries, now: () => now });
      const model = reference(maxEntries, () => now);
      const tokens: string[] = [];
      for (const op of operations) {
        if (op.kind === 'wait') {
          now += op.ms;
        } else if (op.kind === 'claim') {
          const claim = store.claim(op.key, op.digest);
          expect(claim).toEqual(model.claim(op.key, op.digest));
          if (claim.state === 'claimed') tokens.push(claim.token);
        } else {
          const token = tokens[op.nth % Math.max(tokens.length, 1)] ?? 'none';
          store[op.kind](op.key, token, { retryExpected: op.retryExpected });
          model[op.kind](op.key, token, { retryExpected: op.retryExpected });
        }
      }
      for (const probe of ['a', 'b', 'c', 'd', 'e', 'f']) expect(store.claim(probe, 'x')).toEqual(model.claim(probe, 'x'));
    }), {
      numRuns: 500,
      // Found on a CI run when the reference left out markProcessed's retryExpected (the store keeps that retry due).
      examples: [[3, [
        { kind: 'claim', key: 'b', digest: 'x' },
        { kind: 'markProcessed', key: 'e', nth: 0, retryExpected: false },
        { kind: 'markProcessed', key: 'e', nth: 0, retryExpected: true },
        { kind: 'release', key: 'e', nth: 0, retryExpected: false },
        { kind: 'claim', key: 'd', digest: 'x' },
      ]]],
    });
  });

  it('remembers exactly the latest maxEntries subjects after many times more have passed through', () => {
    const store = createMemoryDedupeStore({ maxEntries: 1_000 });
    for (let i = 0; i < 20_000; i++) {
      const claim = store.claim(`subject-${i}`, 'x');
      if (claim.state !== 'claimed') throw new Error(`subject-${i} was not claimed`);
      store.markProcessed(`subject-${i}`, claim.token);
    }
    expect(store.claim('subject-19999', 'x')).toEqual({ state: 'processed' });
    expect(store.claim('subject-19000', 'x')).toEqual({ state: 'processed' });
    expect(store.claim('subject-18999', 'x').state).toBe('claimed');
  });

  it('keeps processed bodies for 24 hours by default, the retries span only 21 minutes', () => {
    let now = 0;
    const store = createMemoryDedupeStore({ now: () => now });
    const claim = store.claim('a');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    store.markProcessed('a', claim.token);
    now = 24 * 3600_000 - 1;
    expect(store.claim('a')).toEqual({ state: 'processed' });
    now = 24 * 3600_000;
    expect(store.claim('a').state).toBe('claimed');
  });
});

describe('Redis store shared by many clients', () => {
  it('gives a body to exactly one of many concurrent claimers', async () => {
    const keyPrefix = freshPrefix();
    const clients = Array.from({ length: 4 }, () => new Redis({ port: redis.server.port, host: '127.0.0.1' }));
    try {
      const claimers = clients.flatMap((client) => Array.from({ length: 5 }, () => createRedisDedupeStore({ client, keyPrefix })));
      const claims = await Promise.all(claimers.map((store) => store.claim('contended')));
      expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim.state === 'processing')).toHaveLength(19);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });

  it('writes its keys under keyPrefix, with the claim and processed TTLs as PX', async () => {
    const keyPrefix = freshPrefix();
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix, claimTtlMs: 60_000, ttlMs: 3_600_000 });
    const claim = await store.claim('k');
    expect(await redis.ioredis.get(`${keyPrefix}k`)).toMatch(/^processing:/);
    expect(await redis.ioredis.pttl(`${keyPrefix}k`)).toBeGreaterThan(50_000);
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await store.markProcessed('k', claim.token);
    // The first line as the previous major wrote and compares it (a rolling upgrade), then
    // p<place>:<claimed at>:<failures before>:<expires at>; a first attempt's place is when it
    // arrived, its claim's time.
    const [, place, claimedAt] = /^processed:k\np(\d+):(\d+):0:\d+$/.exec(await redis.ioredis.get(`${keyPrefix}k`) ?? '') ?? [];
    expect(place).toBe(claimedAt);
    expect(Math.abs(Number(claimedAt) - Date.now())).toBeLessThan(60_000);
    expect(await redis.ioredis.pttl(`${keyPrefix}k`)).toBeGreaterThan(3_500_000);
  });

  it('keeps the retry due of a claim released after claimTtlMs, as the memory store does', async () => {
    let clock = 1_000_000;
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), now: () => clock, claimTtlMs: 50 });
    const slow = await store.claim('s', 'X');
    if (slow.state !== 'claimed') throw new Error('expected a claim');
    await new Promise((resolve) => setTimeout(resolve, 150)); // past the claim's 50 ms in Redis too
    clock += 5_000;
    await store.release('s', slow.token, { retryExpected: true });
    const newer = await store.claim('s', 'Y');
    if (newer.state !== 'claimed') throw new Error('expected a claim of Y');
    await store.markProcessed('s', newer.token);
    clock += 60_000; // X's retry comes after Y was processed
    expect((await store.claim('s', 'X')).state).toBe('superseded');
  });

  it('gives back the place of a claim that timed out once it runs (leaveLine queued behind it), and leaves a value it did not write alone', async () => {
    const keyPrefix = freshPrefix();
    const client = new Redis({ port: redis.server.port, host: '127.0.0.1' });
    const slow = createRedisDedupeStore({ client, keyPrefix, commandTimeoutMs: 300 });
    const other = createRedisDedupeStore({ client: redis.ioredis, keyPrefix });
    const held = await other.claim('s', 'A');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    await redis.ioredis.call('CLIENT', 'PAUSE', '800', 'ALL');
    await expect(slow.claim('s', 'B', 0, { id: 'lost', leftMs: 60_000 })).rejects.toMatchObject({ code: 'dedupe_store_unavailable' });
    // What the receiver does on that 503: queued behind the claim on the same connection.
    const left = Promise.resolve(slow.leaveLine!('s', { id: 'lost', leftMs: 60_000 })).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 900));
    await left;
    await other.markProcessed('s', held.token);
    expect((await other.claim('s', 'C', 0, { id: 'next', leftMs: 60_000 })).state).toBe('claimed');
    // Given back: no place, a mark until it would have lapsed.
    expect(await redis.ioredis.get(`${keyPrefix}s`)).not.toMatch(/\nw\d+\|lost/);
    expect(await redis.ioredis.get(`${keyPrefix}s`)).toMatch(/\nl\d+\|lost/);
    client.disconnect();

    await redis.ioredis.set(`${keyPrefix}foreign`, 'some other app');
    await other.joinLine!('foreign', { id: 'w', leftMs: 5_000 });
    expect(await redis.ioredis.get(`${keyPrefix}foreign`)).toBe('some other app');
    expect(await redis.ioredis.pttl(`${keyPrefix}foreign`)).toBe(-1);
  });

  it('reads the processed records the previous major wrote (processed:<digest>)', async () => {
    const keyPrefix = freshPrefix();
    await redis.ioredis.set(`${keyPrefix}k`, 'processed:d1', 'PX', 60_000);
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix });
    expect((await store.claim('k', 'd1')).state).toBe('processed');
    expect((await store.claim('k', 'd2')).state).toBe('claimed');
  });

  it('writes the retry due of a copy of the state\'s body answered 409 as a superseded one whose failures start with 0 (s01:), which a process of the previous version answers alike; once rewritten without the 0, it stays superseded', async () => {
    let clock = 1_000_000;
    const keyPrefix = freshPrefix();
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix, now: () => clock });
    const holder = await store.claim('k', 'x');
    if (holder.state !== 'claimed') throw new Error('expected a claim of x');
    clock += 10;
    await store.expectRetry!('k', 'x');
    await store.markProcessed('k', holder.token);
    expect((await redis.ioredis.get(`${keyPrefix}k`))!.split('\n')[2]).toBe(`s01:${1_000_010 + 25 * 60_000}:1000010:1000010:x`);
    // A process of the previous version rewrote the line without the 0: a superseded retry due,
    // answered processed while x is the latest, as the repeat would be.
    const value = (await redis.ioredis.get(`${keyPrefix}k`))!.replace('\ns01:', '\ns1:');
    await redis.ioredis.set(`${keyPrefix}k`, value, 'PX', 60_000_000);
    clock += 61_000;
    expect((await store.claim('k', 'x')).state).toBe('processed');
  });

  it('keeps the mark of a 409 that names its place (with its delivery, for the copies beside it) until the reply window has passed, not for the retry-due window: a busy subject\'s 409s do not pile up in its line', async () => {
    let clock = 1_000_000;
    const keyPrefix = freshPrefix();
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix, now: () => clock, replyWindowMs: 30_000, claimTtlMs: 600_000 });
    const holder = await store.claim('k', 'x');
    if (holder.state !== 'claimed') throw new Error('expected a claim of x');
    const marks = async () => (await redis.ioredis.get(`${keyPrefix}k`))!.split('\n').filter((line) => line.startsWith('l'));
    for (let n = 0; n < 20; n++) {
      const waiter = { id: `waiter-${n}`, leftMs: 10_000 };
      clock += 1_000;
      expect(await store.claim('k', `y${n}`, 0, waiter)).toEqual({ state: 'processing' });
      clock += 5_000; // (before its place lapses)
      await store.leaveLine!('k', { id: waiter.id, leftMs: 1 });
      await store.expectRetry!('k', `y${n}`, 5_000, 0, waiter.id);
    }
    // Each 409 marked with its delivery (arrival, due until, digest), the last ones still live.
    const live = await marks();
    expect(live.length).toBeGreaterThan(0);
    expect(live.length).toBeLessThanOrEqual(6);
    expect(live.at(-1)).toBe(`l${clock + 30_000 + 1_000 + 2}|waiter-19|${clock - 5_000}|${clock + 25 * 60_000}|y19`);
    clock += 32_000;
    await store.markProcessed('k', holder.token);
    expect(await marks()).toEqual([]);
  });

  it('refuses a key it did not write with unexpected_store_reply, naming keyPrefix as the fix', async () => {
    const keyPrefix = freshPrefix();
    await redis.ioredis.set(`${keyPrefix}foreign`, 'someone else');
    const store = createRedisDedupeStore({ client: redis.ioredis, keyPrefix });
    const error = await Promise.resolve(store.claim('foreign')).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(DedupeStoreError);
    expect(error).toMatchObject({ code: 'unexpected_store_reply', message: expect.stringContaining('keyPrefix') });
  });
});

describe('Redis store and memory store agree', () => {
  it('answers every run of claims (with and without waiters), settlements, releases (with and without a retry expected), 409s, places taken, given back and lapsed unanswered, as the memory store does, whatever the reply window', async () => {
    // The memory store applies subject-record.ts, the Redis store its own Lua: any difference in
    // what a claim answers shows up here. No waits: the TTLs are far longer than a run.
    const key = fc.constantFrom('a', 'b');
    // One virtual clock for both; a wait of 61 s lets a copy of a failed body be its retry.
    // Waiters: none, or one of four, whose places lapse after 2 s, 30 s or 5 minutes; a place
    // that lapses unanswered becomes a retry due of its body (a claim's, or the one joinLine tells).
    const waiter = fc.constantFrom(undefined, undefined, { id: 'w1', leftMs: 30_000 }, { id: 'w2', leftMs: 300_000 }, { id: 'w3', leftMs: 30_000 }, { id: 'w4', leftMs: 2_000 });
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('claim' as const), key, digest: fc.constantFrom('x', 'y', 'z'), waited: fc.constantFrom(0, 0, 5_000, 40_000), waiter }),
      fc.record({ kind: fc.constant('joinLine' as const), key, waiter: fc.constantFrom({ id: 'w1', leftMs: 30_000 }, { id: 'w2', leftMs: 300_000 }, { id: 'w4', leftMs: 2_000 }),
        digest: fc.constantFrom(undefined, 'x', 'y', 'z'), waited: fc.constantFrom(0, 3_000) }),
      // The receiver's 409 of a delivery that waited in line (its place given back first, or not:
      // a receiver of the previous version), told with the arrival its place has, and naming the
      // place (this version's receiver) or not (the previous version's).
      fc.record({ kind: fc.constant('answer409' as const), nth: fc.nat(6), giveBack: fc.boolean(), named: fc.boolean() }),
      fc.record({ kind: fc.constant('leaveLine' as const), key, waiter: fc.constantFrom({ id: 'w1', leftMs: 30_000 }, { id: 'w2', leftMs: 300_000 }, { id: 'w3', leftMs: 30_000 }) }),
      fc.record({ kind: fc.constantFrom('markProcessed' as const, 'release' as const), key, nth: fc.nat(12), retryExpected: fc.boolean() }),
      fc.record({ kind: fc.constant('expectRetry' as const), key, digest: fc.constantFrom('x', 'y', 'z'), waited: fc.constantFrom(0, 10_000) }),
      fc.record({ kind: fc.constant('wait' as const), seconds: fc.constantFrom(1, 31, 61, 301, 901) }),
    );
    // The service's reply window: its 30 s, or a sandbox's shorter or longer delivery timeout.
    const replyWindowMs = fc.constantFrom(undefined, 2_000, 45_000);
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 10, maxLength: 40, size: 'max' }), replyWindowMs, async (operations, window) => {
      let clock = 1_000_000;
      const now = () => clock;
      // Claims expire on the virtual clock too (120 s): the Redis store keeps a claim's expiry in
      // its value, and the key itself lives longer than any run.
      const memory = createMemoryDedupeStore({ now, claimTtlMs: 120_000, replyWindowMs: window });
      const inRedis = createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), now, claimTtlMs: 120_000, replyWindowMs: window });
      const tokens: Array<{ memory: string; redis: string; key: string }> = [];
      // The places taken that told their body: where a 409 of their delivery finds them.
      const places: Array<{ key: string; id: string; digest: string; arrivedAt: number }> = [];
      for (const op of operations) {
        if (op.kind === 'answer409') {
          const place = places[op.nth % Math.max(1, places.length)];
          if (place === undefined) continue;
          if (op.giveBack) {
            memory.leaveLine(place.key, { id: place.id, leftMs: 1 });
            await inRedis.leaveLine!(place.key, { id: place.id, leftMs: 1 });
          }
          const waiterId = op.named ? place.id : undefined;
          memory.expectRetry(place.key, place.digest, clock - place.arrivedAt, 0, waiterId);
          await inRedis.expectRetry!(place.key, place.digest, clock - place.arrivedAt, 0, waiterId);
        } else if (op.kind === 'wait') {
          clock += op.seconds * 1_000;
        } else if (op.kind === 'expectRetry') {
          memory.expectRetry(op.key, op.digest, op.waited);
          await inRedis.expectRetry!(op.key, op.digest, op.waited);
        } else if (op.kind === 'leaveLine') {
          memory.leaveLine(op.key, op.waiter);
          await inRedis.leaveLine!(op.key, op.waiter);
        } else if (op.kind === 'joinLine') {
          const told = op.digest === undefined ? op.waiter : { ...op.waiter, digest: op.digest, waitedMs: op.waited };
          memory.joinLine(op.key, told);
          await inRedis.joinLine!(op.key, told);
          if (op.digest !== undefined) places.push({ key: op.key, id: op.waiter.id, digest: op.digest, arrivedAt: clock - op.waited });
        } else if (op.kind === 'claim') {
          const [fromMemory, fromRedis] = [memory.claim(op.key, op.digest, op.waited, op.waiter), await inRedis.claim(op.key, op.digest, op.waited, op.waiter)];
          expect(fromRedis.state).toBe(fromMemory.state);
          // And the same place, when it is not the delivery's arrival (a retry due's).
          expect((fromRedis as { place?: number }).place).toBe((fromMemory as { place?: number }).place);
          if (fromMemory.state === 'processing' && op.waiter !== undefined) places.push({ key: op.key, id: op.waiter.id, digest: op.digest, arrivedAt: clock - op.waited });
          if (fromMemory.state === 'claimed' && fromRedis.state === 'claimed') tokens.push({ memory: fromMemory.token, redis: fromRedis.token, key: op.key });
        } else {
          // As the receiver does: each claim is settled once, on its own subject.
          const open = tokens.filter((token) => token.key === op.key);
          if (open.length === 0) continue;
          const token = open[op.nth % open.length]!;
          tokens.splice(tokens.indexOf(token), 1);
          memory[op.kind](op.key, token.memory, { retryExpected: op.retryExpected });
          await inRedis[op.kind](op.key, token.redis, { retryExpected: op.retryExpected });
        }
      }
      for (const probe of ['a', 'b']) {
        for (const digest of ['x', 'y', 'z']) expect((await inRedis.claim(probe, digest)).state).toBe(memory.claim(probe, digest).state);
      }
    }), {
      numRuns: 300,
      examples: [
        // x arrived 40 s before it was answered (processed, past a 2 s window), y was processed
        // since, and a copy of x comes 31 s later: 69 s after the window ended, its retry (superseded).
        [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 40_000, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: true },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'wait', seconds: 31 },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
        ], 2_000],
        // A 409 with the arrival of a retry due kept already adds nothing, and the claim that had
        // expired meanwhile is a retry due all the same: its markProcessed finds it no longer its own.
        [[
          { kind: 'joinLine', key: 'a', waiter: { id: 'w1', leftMs: 30_000 }, digest: 'z', waited: 0 },
          { kind: 'answer409', nth: 0, giveBack: true, named: false },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'wait', seconds: 301 },
          { kind: 'answer409', nth: 0, giveBack: false, named: false },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
        ], undefined],
        // A copy of the body in progress answered 409 repeats its state: a copy sooner than a
        // retry is that state again (processed), and once y was processed its retry is superseded.
        [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'expectRetry', key: 'a', digest: 'x', waited: 0 },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'wait', seconds: 61 },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
        ], undefined],
        // Two copies of y sent at once wait behind x and are answered 409, each naming its place
        // (or the second's place lapses): two retries due, the second repeating the first. Once z
        // was processed, both retries are superseded; without z, the first is dispatched and the
        // second answered processed.
        ...[true, false].flatMap((bothAnswered) => [true, false].map((newer) => [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'joinLine', key: 'a', waiter: { id: 'w1', leftMs: 30_000 }, digest: 'y', waited: 0 },
          { kind: 'joinLine', key: 'a', waiter: bothAnswered ? { id: 'w2', leftMs: 300_000 } : { id: 'w4', leftMs: 2_000 }, digest: 'y', waited: 0 },
          { kind: 'answer409', nth: 0, giveBack: true, named: true },
          ...(bothAnswered ? [{ kind: 'answer409', nth: 1, giveBack: true, named: true }] : [{ kind: 'wait', seconds: 1 }, { kind: 'wait', seconds: 1 }]),
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          ...(newer ? [{ kind: 'claim', key: 'a', digest: 'z', waited: 0, waiter: undefined }, { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false }] : []),
          { kind: 'wait', seconds: 61 },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
        ], undefined] as never)),
        // y waits behind x; a second later, a copy of y (or of x) waits too and is answered 409;
        // then y's place lapses (its process died). A copy of y repeats y all the same; a copy of
        // x repeated x at its 409, but x, y, x is the user going back to x, whose retry is dispatched.
        ...['y', 'x'].map((second) => [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'joinLine', key: 'a', waiter: { id: 'w4', leftMs: 2_000 }, digest: 'y', waited: 0 },
          { kind: 'wait', seconds: 1 },
          { kind: 'joinLine', key: 'a', waiter: { id: 'w1', leftMs: 30_000 }, digest: second, waited: 0 },
          { kind: 'answer409', nth: 1, giveBack: true, named: true },
          { kind: 'wait', seconds: 1 },
          { kind: 'wait', seconds: 1 },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'wait', seconds: 61 },
          { kind: 'claim', key: 'a', digest: second, waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 0, retryExpected: false },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
        ], undefined] as never),
        // x's claim and a copy of x waiting behind it are in a process that dies: the copy's place
        // lapses, then the claim expires before the next call; the copy repeats the claim's x.
        [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'wait', seconds: 1 },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: { id: 'w4', leftMs: 2_000 } },
          { kind: 'wait', seconds: 301 },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 1, retryExpected: false },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
        ], undefined],
        // x's claim is held by a process that died; y is answered 409, then x's retry a minute
        // later (the claim still holds): that retry, in x's place, superseded once y is processed.
        [[
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
          { kind: 'wait', seconds: 1 },
          { kind: 'expectRetry', key: 'a', digest: 'y', waited: 0 },
          { kind: 'wait', seconds: 61 },
          { kind: 'expectRetry', key: 'a', digest: 'x', waited: 0 },
          { kind: 'wait', seconds: 61 },
          { kind: 'claim', key: 'a', digest: 'y', waited: 0, waiter: undefined },
          { kind: 'markProcessed', key: 'a', nth: 1, retryExpected: false },
          { kind: 'wait', seconds: 301 },
          { kind: 'claim', key: 'a', digest: 'x', waited: 0, waiter: undefined },
        ], undefined],
      ],
    });
  });
});

describe.each([
  ['memory store', (now: () => number) => createMemoryDedupeStore({ now, claimTtlMs: 100_000 })],
  ['Redis store', (now: () => number) => createRedisDedupeStore({ client: redis.ioredis, keyPrefix: freshPrefix(), now, claimTtlMs: 100_000 })],
] as const)('%s: retries due on a clock', (_name, create) => {
  it('counts the 409 of a copy whose mark has lapsed when the other copy\'s place, which lapsed as late as it could, is converted: two retries due', async () => {
    // Two copies of y, sent at once, wait behind x. The first is answered 409 (naming its place);
    // the second's process dies, and its place lapses a whole reply window (30 s) after its
    // arrival. Nothing calls the store for a minute: the first's mark (kept 30 s after its 409)
    // has lapsed too when the second's place is converted, and still counts.
    let clock = 1_000_000;
    const store = create(() => clock);
    const holder = await store.claim('s', 'x');
    if (holder.state !== 'claimed') throw new Error('expected a claim of x');
    clock += 10;
    expect(await store.claim('s', 'y', 0, { id: 'copy-1', leftMs: 30_000 })).toEqual({ state: 'processing' });
    expect(await store.claim('s', 'y', 0, { id: 'copy-2', leftMs: 30_000 })).toEqual({ state: 'processing' });
    clock += 100;
    await store.leaveLine!('s', { id: 'copy-1', leftMs: 1 });
    await store.expectRetry!('s', 'y', 100, 0, 'copy-1');
    clock += 60_000;
    await store.markProcessed('s', holder.token);
    const newer = await store.claim('s', 'z');
    if (newer.state !== 'claimed') throw new Error('expected a claim of z');
    await store.markProcessed('s', newer.token);
    clock += 61_000;
    expect((await store.claim('s', 'y')).state).toBe('superseded');
    expect((await store.claim('s', 'y')).state).toBe('superseded');
    expect((await store.claim('s', 'y')).state).toBe('claimed');
  });

  it('a claim that expired and is then marked processed supersedes nothing received meanwhile', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    const slow = await store.claim('s', 'A');
    if (slow.state !== 'claimed') throw new Error('expected a claim');
    clock += 130_000; // A's handler outlives its claim
    const newer = await store.claim('s', 'B');
    if (newer.state !== 'claimed') throw new Error(`expected B claimed, got ${newer.state}`);
    await store.release('s', newer.token, { retryExpected: true });
    clock += 5_000;
    await store.markProcessed('s', slow.token);
    clock += 60_000;
    // B's retry: B came after A, so it is dispatched, not superseded.
    expect((await store.claim('s', 'B')).state).toBe('claimed');
  });

  it('an expired claim acknowledged early leaves no retry due: the same body a minute after a newer event is claimed; without acknowledgedEarly it is superseded', async () => {
    for (const [options, expected] of [[{ acknowledgedEarly: true }, 'claimed'], [undefined, 'superseded']] as const) {
      let clock = 1_000_000;
      const store = create(() => clock);
      expect((await store.claim('s', 'A', 0, undefined, options)).state).toBe('claimed');
      clock += 130_000; // A's process died mid-handler: its claim expires
      const newer = await store.claim('s', 'B');
      if (newer.state !== 'claimed') throw new Error(`expected B claimed, got ${newer.state}`);
      await store.markProcessed('s', newer.token);
      clock += 60_000; // as late as the service's retry of A would come
      expect((await store.claim('s', 'A')).state).toBe(expected);
    }
  });

  it('takes a copy of the body of a live claim that comes once that claim\'s retry could for that retry, in the claim\'s place (its process died): once a newer event was processed, its next attempt is superseded', async () => {
    // A partner trial (SIGKILL of a receiver): A's claim is held by a dead process; B arrives and
    // is answered 409; A's retry comes a minute after A and is answered 409 too (the claim still
    // holds). Once the claim expires, B's retry is processed; A's next attempt must not bring A
    // back. (It was kept as a new event at its own arrival, after B: B's 409 came between.)
    let clock = 1_000_000;
    const store = create(() => clock);
    expect((await store.claim('s', 'A')).state).toBe('claimed');
    clock += 1_000;
    expect((await store.claim('s', 'B')).state).toBe('processing');
    await store.expectRetry!('s', 'B');
    clock += 60_000;
    expect((await store.claim('s', 'A')).state).toBe('processing');
    await store.expectRetry!('s', 'A');
    clock += 100_000; // A's claim has expired
    const b = await store.claim('s', 'B');
    if (b.state !== 'claimed') throw new Error(`expected B's retry claimed, got ${b.state}`);
    await store.markProcessed('s', b.token);
    clock += 300_000;
    expect((await store.claim('s', 'A')).state).toBe('superseded');
    // One retry due for A's event, not one for its claim and one for its copy: the user going
    // back to A later is a new event.
    expect((await store.claim('s', 'A')).state).toBe('claimed');
  });

  it('keeps a copy of a live claim\'s body that comes sooner than its retry could as a newer event when another event came between (the user went back), and a claim acknowledged early has no retry', async () => {
    for (const early of [false, true]) {
      let clock = 1_000_000;
      const store = create(() => clock);
      expect((await store.claim('s', 'A', 0, undefined, early ? { acknowledgedEarly: true } : undefined)).state).toBe('claimed');
      clock += 1_000;
      await store.expectRetry!('s', 'B');
      // Sooner than a retry of A (or A was acknowledged early: the service sends no retry of it).
      clock += early ? 60_000 : 30_000;
      await store.expectRetry!('s', 'A');
      clock += 100_000;
      const b = await store.claim('s', 'B');
      if (b.state !== 'claimed') throw new Error(`expected B's retry claimed, got ${b.state}`);
      await store.markProcessed('s', b.token);
      clock += 300_000;
      // A's copy came after B: the user went back to A, dispatched.
      expect((await store.claim('s', 'A')).state).toBe('claimed');
    }
  });

  it('keeps an event\'s retries due until its first failure plus 25 minutes, however its later attempts were answered', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    const fail = async (digest: string) => {
      const claim = await store.claim('s', digest);
      if (claim.state !== 'claimed') throw new Error(`expected a claim of ${digest}, got ${claim.state}`);
      await store.release('s', claim.token, { retryExpected: true });
    };
    await fail('A');
    clock += 360_000;
    await fail('A'); // the third attempt (the second was answered 409 elsewhere)
    clock += 900_000;
    await fail('A'); // the service's last attempt, 21 minutes after the first
    clock += 100_000;
    const processed = await store.claim('s', 'B');
    if (processed.state !== 'claimed') throw new Error('expected a claim');
    await store.markProcessed('s', processed.token);
    clock += 200_000; // 26 minutes after A first failed: no retry of A can come any more
    // The user went back to A: a new event, dispatched.
    expect((await store.claim('s', 'A')).state).toBe('claimed');
  });

  // The three rules below close the cases the model of the retry schedule found when a state
  // repeats (retry-model.test.ts); each failed on the previous rules.
  const claimed = async (store: DedupeStore, digest: string) => {
    const claim = await store.claim('s', digest);
    if (claim.state !== 'claimed') throw new Error(`expected a claim of ${digest}, got ${claim.state}`);
    return claim.token;
  };

  it('keeps a retry due for each of two events with the same body that failed', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    clock += 10_000; // the user came back to X: a newer event with the same body, which fails too
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    clock += 20_000;
    await store.markProcessed('s', await claimed(store, 'P'));
    clock += 30_000; // both retries of X come after P: neither brings X back
    expect((await store.claim('s', 'X')).state).toBe('superseded');
    clock += 10_000;
    expect((await store.claim('s', 'X')).state).toBe('superseded');
  });

  it('takes a copy of the processed body for a newer event while an event received after it waits for its retry', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'B'), { retryExpected: true });
    clock += 39_000;
    await store.release('s', await claimed(store, 'A'), { retryExpected: true });
    clock += 21_000; // B's retry, processed
    await store.markProcessed('s', await claimed(store, 'B'));
    // The same second the user goes back to B: too soon to be a retry of the processed B (its
    // retry would come a minute later), so a newer event, placed after A.
    await store.markProcessed('s', await claimed(store, 'B'));
    clock += 39_000; // A's retry: older than the latest B
    expect((await store.claim('s', 'A')).state).toBe('superseded');
    // Without newer events waiting, a copy of the processed body is its retry (or a replay).
    expect((await store.claim('s', 'B')).state).toBe('processed');
  });

  it('counts a retry\'s wait from when the service saw the attempt fail: the end of its 30 s window when the handler outlived it', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.markProcessed('s', await claimed(store, 'S1'));
    clock += 59_000;
    await store.release('s', await claimed(store, 'S0'), { retryExpected: true });
    clock += 60_000; // S0's retry; its handler runs 40 s, the service times out after 30
    const retry = await claimed(store, 'S0');
    clock += 40_000;
    await store.release('s', retry, { retryExpected: true });
    await store.markProcessed('s', await claimed(store, 'S1')); // the user is back on S1
    clock += 290_000; // the service's third attempt: 5 minutes after it saw the second fail
    expect((await store.claim('s', 'S0')).state).toBe('superseded');
  });

  it('takes a copy for the retry due that is not superseded when two of its body can be its retry', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'S2'), { retryExpected: true });
    clock += 60_000;
    // A newer S2 event the same second as the first one's retry: it is taken for the retry, and
    // fails; the real retry comes next and is taken for a newer event, processed.
    await store.release('s', await claimed(store, 'S2'), { retryExpected: true });
    await store.markProcessed('s', await claimed(store, 'S2'));
    clock += 60_000;
    expect((await store.claim('s', 'S2')).state).toBe('processed');
    clock += 31_000;
    await store.markProcessed('s', await claimed(store, 'S0'));
    clock += 31_000; // the user goes back to S2, which fails twice
    await store.release('s', await claimed(store, 'S2'), { retryExpected: true });
    clock += 60_000;
    await store.release('s', await claimed(store, 'S2'), { retryExpected: true });
    clock += 300_000; // its third attempt: the superseded S2 left behind must not take it
    expect((await store.claim('s', 'S2')).state).toBe('claimed');
  });

  it('adds nothing on expectRetry for an arrival whose claim was released with its retry due already (the give-back of a 503 whose claim ran)', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    await store.expectRetry!('s', 'X', 0); // the same arrival
    clock += 60_000;
    await store.markProcessed('s', await claimed(store, 'X')); // X's retry
    clock += 60_000; // one more copy: it repeats the processed X, no second retry of X is due
    expect((await store.claim('s', 'X')).state).toBe('processed');
  });

  it('judges whether a copy can be a retry by when it arrived, not by when it got the subject after waiting in line', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    clock += 10_000;
    await store.markProcessed('s', await claimed(store, 'P'));
    clock += 60_000; // X again, which arrived 40 s ago and waited in line: a newer event
    expect((await store.claim('s', 'X', 40_000)).state).toBe('claimed');
  });

  it('waits 5 minutes after a second failure before a copy of the body can be its retry', async () => {
    let clock = 1_000_000;
    const store = create(() => clock);
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    clock += 60_000; // X's first retry, which fails: the next one comes 5 minutes later
    await store.release('s', await claimed(store, 'X'), { retryExpected: true });
    clock += 30_000;
    await store.markProcessed('s', await claimed(store, 'P'));
    clock += 30_000; // the user goes back to X a minute after X's retry failed: a new event
    expect((await store.claim('s', 'X')).state).toBe('claimed');
  });
});

describe('Redis store failures', () => {
  it('rejects a client of another shape with unsupported_redis_client', () => {
    const attempt = () => createRedisDedupeStore({ client: { get: () => undefined } as never });
    expect(attempt).toThrow(DedupeStoreError);
    expect(attempt).toThrow(/ioredis client .* node-redis client/);
  });

  it('answers dedupe_store_unavailable within commandTimeoutMs when Redis does not answer', async () => {
    const store = createRedisDedupeStore({ client: () => new Promise(() => undefined), commandTimeoutMs: 50 });
    const error = await Promise.resolve(store.claim('a')).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(DedupeStoreError);
    expect(error).toMatchObject({ code: 'dedupe_store_unavailable', message: expect.stringMatching(/did not answer EVAL within 50 ms/) });
  });

  it('wraps a client error as dedupe_store_unavailable with the cause', async () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:1');
    const store = createRedisDedupeStore({ client: () => Promise.reject(refused) });
    const error = await Promise.resolve(store.claim('a')).then(() => undefined, (caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'dedupe_store_unavailable', cause: refused, message: expect.stringContaining('ECONNREFUSED') });
  });

  it('undoes a claim that was queued while Redis was down and ran once it was back', async () => {
    const keyPrefix = freshPrefix();
    const restarted = await startRedisServer();
    // ioredis holds commands in its offline queue while it reconnects: the SET outlives the
    // timeout and runs after the restart, and the release queued behind it must undo it.
    const client = new Redis({ port: restarted.port, host: '127.0.0.1' });
    try {
      await client.ping();
      await restarted.stop();
      // Long enough for the restarted Redis to answer the last claim on a loaded CI machine.
      const store = createRedisDedupeStore({ client, keyPrefix, commandTimeoutMs: 500 });
      const error = await Promise.resolve(store.claim('queued')).then(() => undefined, (caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'dedupe_store_unavailable' });
      await restarted.start();
      await client.ping();
      // No claim is left: the 503 is retried, so the body is a retry due of the subject now.
      expect(await client.get(`${keyPrefix}queued`)).toMatch(/^released\na1:/);
      expect((await store.claim('queued')).state).toBe('claimed');
    } finally {
      client.disconnect();
      await restarted.close();
    }
  });
});
