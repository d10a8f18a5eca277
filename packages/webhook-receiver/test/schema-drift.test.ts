import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createRedisDeadLetterStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  InvalidWebhookEventError,
  toNodeHandler,
  type DeadLetterStore,
  type DedupeStore,
  type InvalidWebhookEvent,
  type WebhookErrorContext,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { storeKinds, type Stores } from './helpers/drift-stores.js';
import { eventBody } from './helpers/events.js';
import { redis, running, service, useServiceAndRedis } from './helpers/service-and-redis.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';
import { driftedBodies, upgradedValidator } from './helpers/upgraded-validator.js';

let userCounter = 0;
useServiceAndRedis();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const nextUser = () => `drift-${process.pid}-${++userCounter}`;

type Serve = (receiver: WebhookReceiver) => Promise<RunningServer>;
const servings: Array<[string, Serve]> = [
  ['node:http with toNodeHandler', (receiver) => listen(toNodeHandler(receiver))],
  ['Web handle(Request) behind a node:http bridge', (receiver) => listenFetch((request) => receiver.handle(request))],
];

const storeKindsHere = storeKinds(() => redis, 'drift');

describe.each(servings)('over %s', (_servingName, serve) => {
  /** A receiver with recording hooks; `dispatched` gets `<eventType> <data.id> <kycStatus>` per handler call. */
  async function start(options: Partial<WebhookReceiverOptions> = {}) {
    const seen = { invalid: [] as InvalidWebhookEvent[], errors: [] as Array<{ error: unknown; context: WebhookErrorContext }>, dispatched: [] as string[] };
    const receiver = createWebhookReceiver({
      publicKey: service.publicKey,
      onInvalidEvent: (event) => { seen.invalid.push(event); },
      onError: (error, context) => { seen.errors.push({ error, context }); },
      ...options,
    }).onAny((event) => {
      seen.dispatched.push(`${event.eventType} ${event.data.id} ${(event.data as { kycStatus?: string }).kycStatus}`);
    });
    const server = await serve(receiver);
    running.push(server);
    return { receiver, url: `${server.url}/webhooks`, seen };
  }

  describe.each(storeKindsHere)('with %s', (_storeName, createStores) => {
    it('keeps an unknown enum value and a missing field (202, never 4xx), shows them to onInvalidEvent and onError, and replays them after the upgrade', async () => {
      const stores = createStores();
      const old = await start(stores);
      const userId = nextUser();
      const { newEnumValue, missingField } = driftedBodies(userId);

      for (const body of [newEnumValue, missingField]) {
        const reply = await service.deliver(old.url, body);
        expect(reply.status).toBe(202);
        expect(reply.body.code).toBe('invalid_event_dead_lettered');
      }
      expect(old.seen.dispatched).toEqual([]);
      // The hook gets the raw bytes as signed, and the problems.
      expect(old.seen.invalid.map((event) => new TextDecoder().decode(event.rawBody))).toEqual([newEnumValue, missingField]);
      expect(old.seen.invalid[0]).toMatchObject({ eventType: 'kyc.status.changed', errors: [expect.objectContaining({ path: '/data/kycStatus', keyword: 'enum' })] });
      expect(old.seen.invalid[1]).toMatchObject({ eventType: 'user.created', errors: [expect.objectContaining({ path: '/data/address2', keyword: 'required' })] });
      // onError: the same, as a typed error with the outcome it was answered with.
      expect(old.seen.errors).toHaveLength(2);
      for (const [index, { error, context }] of old.seen.errors.entries()) {
        expect(error).toBeInstanceOf(InvalidWebhookEventError);
        expect((error as InvalidWebhookEventError).rawBody).toEqual(old.seen.invalid[index]!.rawBody);
        expect((error as InvalidWebhookEventError).errors).toEqual(old.seen.invalid[index]!.errors);
        expect(context).toMatchObject({ outcome: 'invalid_event_dead_lettered', afterReply: false, delivery: { bodySha256: sha256([newEnumValue, missingField][index]!) } });
      }
      // A second copy of a kept body stays one entry, in the later place: after its 202 the service
      // sends it no more, so the copy is a later event with that content.
      expect((await service.deliver(old.url, newEnumValue)).status).toBe(202);
      const kept = await stores.deadLetters.list(10);
      expect(kept.map((entry) => entry.bodySha256)).toEqual([sha256(missingField), sha256(newEnumValue)]);
      expect(new TextDecoder().decode(kept[1]!.rawBody)).toBe(newEnumValue);

      // The old validator still refuses them: a replay leaves them in the store, dispatching nothing.
      const notYet = await old.receiver.replay();
      expect(notYet.results.map((result) => [result.outcome, result.deleted])).toEqual([['invalid_event_dead_lettered', false], ['invalid_event_dead_lettered', false]]);
      expect(old.seen.dispatched).toEqual([]);

      // The upgraded SDK, on the same stores, replays them: dispatched once each, then gone.
      const upgraded = await start({ ...stores, validator: upgradedValidator });
      const replayed = await upgraded.receiver.replay();
      expect(replayed.results).toEqual([
        { bodySha256: sha256(missingField), outcome: 'processed', deleted: true },
        { bodySha256: sha256(newEnumValue), outcome: 'processed', deleted: true },
      ]);
      expect(upgraded.seen.dispatched).toEqual([`user.created ${userId} pending`, `kyc.status.changed ${userId} someNewValue`]);
      expect(await stores.deadLetters.list(10)).toEqual([]);
      expect((await upgraded.receiver.replay()).results).toEqual([]);
      // A late retry of a replayed event is a duplicate of the subject's latest event.
      expect((await service.deliver(upgraded.url, newEnumValue)).body.code).toBe('duplicate');
      expect(upgraded.seen.dispatched).toHaveLength(2);
    });
  });

  describe.each(storeKindsHere)('replay in its place, with %s', (_storeName, createStores) => {
    it('replays a user who went back to an earlier drifted state in the order the platform sent: A -> B -> A ends on A', async () => {
      const stores = createStores();
      const old = await start(stores);
      const userId = nextUser();
      const { newEnumValue } = driftedBodies(userId);
      const other = JSON.stringify({ ...JSON.parse(newEnumValue), data: { ...JSON.parse(newEnumValue).data, kycStatus: 'anotherNewValue' } });
      for (const body of [newEnumValue, other, newEnumValue]) {
        expect((await service.deliver(old.url, body)).body.code).toBe('invalid_event_dead_lettered');
        await new Promise((resolve) => setTimeout(resolve, 5)); // the platform's changes of a user come apart
      }
      expect((await stores.deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual([sha256(other), sha256(newEnumValue)]);
      const upgraded = await start({ ...stores, validator: upgradedValidator });
      await upgraded.receiver.replay();
      // The partner's record ends on the platform's latest state, A.
      expect(upgraded.seen.dispatched).toEqual([`kyc.status.changed ${userId} anotherNewValue`, `kyc.status.changed ${userId} someNewValue`]);
    });

    it('does not let a dead letter overwrite a newer event of its subject processed since: superseded, deleted, not dispatched', async () => {
      const stores = createStores();
      const old = await start(stores);
      const userId = nextUser();
      const { newEnumValue } = driftedBodies(userId);
      expect((await service.deliver(old.url, newEnumValue)).body.code).toBe('invalid_event_dead_lettered');
      // A place is measured to about a millisecond (the store reads its clock again when it places
      // an event), and a body refused by the schema never reached the deduplication store: a newer
      // event that arrives within a millisecond or two can tie with it, and the replay is then
      // dispatched (README, "Places are arrivals"). This test's next delivery can come that soon
      // (a CI run on Node 24 did); the platform's next change of a user comes later.
      const [keptEntry] = await stores.deadLetters.list(1);
      while (Date.now() < keptEntry!.receivedAt + 10) await new Promise((resolve) => setTimeout(resolve, 2));
      // The platform moves on: a newer KYC status of the same user is processed.
      const approved = JSON.stringify({ ...JSON.parse(newEnumValue), data: { ...JSON.parse(newEnumValue).data, kycStatus: 'approved' } });
      expect((await service.deliver(old.url, approved)).body.code).toBe('processed');
      // The upgraded SDK replays the older event: it would set the user back to someNewValue.
      const upgraded = await start({ ...stores, validator: upgradedValidator });
      expect((await upgraded.receiver.replay()).results).toEqual([{ bodySha256: sha256(newEnumValue), outcome: 'superseded', deleted: true }]);
      expect(upgraded.seen.dispatched).toEqual([]);
      expect(old.seen.dispatched).toEqual([`kyc.status.changed ${userId} approved`]);
      expect(await stores.deadLetters.list(10)).toEqual([]);
    });
  });

  describe('without a dead-letter store, acknowledges only what code took', () => {
    it('answers 200 invalid_event_handled once onInvalidEvent returned, for both kinds of drift', async () => {
      const { url, seen } = await start();
      const { newEnumValue, missingField } = driftedBodies(nextUser());
      for (const body of [newEnumValue, missingField]) {
        expect(await service.deliver(url, body)).toMatchObject({ status: 200, body: { code: 'invalid_event_handled' } });
      }
      expect(seen.invalid).toHaveLength(2);
      expect(seen.errors.map(({ context }) => context.outcome)).toEqual(['invalid_event_handled', 'invalid_event_handled']);
      expect(seen.dispatched).toEqual([]);
    });

    it('answers 500 invalid_event_unhandled when onInvalidEvent throws, and gives onError both failures', async () => {
      const failure = new Error('audit log down');
      const { url, seen } = await start({ onInvalidEvent: () => { throw failure; } });
      const reply = await service.deliver(url, driftedBodies(nextUser()).newEnumValue);
      expect(reply).toMatchObject({ status: 500, body: { code: 'invalid_event_unhandled', message: expect.stringContaining('/data/kycStatus') } });
      expect(seen.errors.map(({ error }) => error)).toEqual([failure, expect.any(InvalidWebhookEventError)]);
    });

    it('answers 500 invalid_event_unhandled with neither a hook nor a store, so that the service retries', async () => {
      const { url, seen } = await start({ onInvalidEvent: undefined });
      const reply = await service.deliver(url, driftedBodies(nextUser()).missingField);
      expect(reply).toMatchObject({ status: 500, body: { code: 'invalid_event_unhandled' } });
      expect(seen.errors).toEqual([{ error: expect.any(InvalidWebhookEventError), context: expect.objectContaining({ outcome: 'invalid_event_unhandled' }) }]);
    });
  });

  describe('with a dead-letter store, the kept event is acknowledged even when onInvalidEvent throws', () => {
    it('answers 202 invalid_event_dead_lettered and gives onError the hook\'s failure and the invalid event', async () => {
      const failure = new Error('audit log down');
      const deadLetters = createMemoryDeadLetterStore();
      const { url, seen } = await start({ deadLetters, onInvalidEvent: () => { throw failure; } });
      const body = driftedBodies(nextUser()).newEnumValue;
      expect(await service.deliver(url, body)).toMatchObject({ status: 202, body: { code: 'invalid_event_dead_lettered' } });
      expect(seen.errors.map(({ error, context }) => [error, context.outcome])).toEqual([
        [failure, 'invalid_event_dead_lettered'],
        [expect.any(InvalidWebhookEventError), 'invalid_event_dead_lettered'],
      ]);
      expect((await deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual([sha256(body)]);
    });
  });

  describe('with a dead-letter store that fails, answers 503 so that the service retries', () => {
    it('answers 503 dead_letter_store_unavailable when Redis does not answer, and keeps it on the retry once Redis does', async () => {
      let down = true;
      const deadLetters = createRedisDeadLetterStore({
        client: (args) => (down ? new Promise(() => undefined) : redis.call(args[0]!, ...args.slice(1))),
        keyPrefix: `drift:${process.pid}:down:${crypto.randomUUID()}:`,
        // Long enough for the real Redis to answer the retry on a loaded CI machine.
        commandTimeoutMs: 500,
      });
      const { url, seen } = await start({ deadLetters });
      const body = driftedBodies(nextUser()).newEnumValue;
      expect(await service.deliver(url, body)).toMatchObject({ status: 503, body: { code: 'dead_letter_store_unavailable' } });
      expect(seen.errors.map(({ error }) => (error as { name: string }).name)).toEqual(['DeadLetterStoreError', 'InvalidWebhookEventError']);
      down = false;
      expect(await service.deliver(url, body)).toMatchObject({ status: 202, body: { code: 'invalid_event_dead_lettered' } });
      expect((await deadLetters.list(10)).map((entry) => entry.bodySha256)).toEqual([sha256(body)]);
    });
  });
});

describe('replay', () => {
  it('keeps an entry whose handler fails, and processes it on a later replay', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const errors: unknown[] = [];
    let failing = true;
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, deadLetters, validator: upgradedValidator, onError: (error) => errors.push(error) })
      .on('kyc.status.changed', () => { if (failing) throw new Error('database down'); });
    const body = new TextEncoder().encode(driftedBodies(nextUser()).newEnumValue);
    deadLetters.put({ bodySha256: sha256(new TextDecoder().decode(body)), rawBody: body, timestamp: 1, signature: 'kept', receivedAt: 1, errors: [] });
    expect((await receiver.replay()).results).toEqual([expect.objectContaining({ outcome: 'handler_failed', deleted: false })]);
    expect(errors).toEqual([expect.objectContaining({ message: 'database down' })]);
    failing = false;
    expect((await receiver.replay()).results).toEqual([expect.objectContaining({ outcome: 'processed', deleted: true })]);
  });

  it('says what is missing when the receiver has no dead-letter store, or the limit is wrong', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey });
    await expect(receiver.replay()).rejects.toMatchObject({ name: 'WebhookReceiverError', code: 'invalid_options', message: expect.stringContaining('deadLetters store') });
    const withStore = createWebhookReceiver({ publicKey: service.publicKey, deadLetters: createMemoryDeadLetterStore() });
    await expect(withStore.replay({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringContaining('limit') });
  });
});

// A handler bug that outlasts the service's retries (1, 5 and 15 minutes: about 21 minutes) used
// to lose every event it met: each was answered 500 four times and given up, with nothing kept.
// With a deadLetters store, a delivery whose handlers fail before the reply is kept as a
// handler_failed dead letter before its 500, and replay() runs it once the handlers work; a retry
// that succeeds in the same process deletes the entry.
// A retry may come 50 ms after its failure here (the service's first wait is a minute).
const failureStoreKinds: Array<[string, () => { dedupe: DedupeStore; deadLetters: DeadLetterStore }]> = [
  ['memory stores', () => ({ dedupe: createMemoryDedupeStore({ minRetryDelayMs: 50 }), deadLetters: createMemoryDeadLetterStore() })],
  ['Redis stores on a real redis-server', () => {
    const keyPrefix = `kept-failure:${process.pid}:${++userCounter}:`;
    return { dedupe: createRedisDedupeStore({ client: redis, keyPrefix, minRetryDelayMs: 50 }), deadLetters: createRedisDeadLetterStore({ client: redis, keyPrefix }) };
  }],
];

describe.each(failureStoreKinds)('a handler failure before the reply, with %s', (_name, createStores) => {
  async function start(stores: { dedupe: DedupeStore; deadLetters: DeadLetterStore }) {
    const state = { broken: true, written: [] as string[] };
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, ...stores, onError: () => undefined })
      .on('kyc.status.changed', (event) => {
        if (state.broken) throw new Error('the partner database is down');
        state.written.push(`${event.data.id} ${event.data.kycStatus}`);
      });
    const server = await listen(toNodeHandler(receiver));
    running.push(server);
    return { receiver, url: server.url, state };
  }

  it('is kept before its 500, so a bug longer than the retries loses nothing: replay() runs each event once the handlers work, in order', async () => {
    const stores = createStores();
    const partner = await start(stores);
    const user = `kept-${crypto.randomUUID()}`;
    const pending = eventBody('kyc.status.changed', user, { kycStatus: 'pending' });
    const approved = eventBody('kyc.status.changed', user, { kycStatus: 'approved' });
    // The service's four attempts of each event fail (the retries after their waits).
    for (const body of [pending, approved]) {
      for (let attempt = 0; attempt < 4; attempt++) {
        expect((await service.deliver(partner.url, body)).body.code).toBe('handler_failed');
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    }
    const kept = await stores.deadLetters.list(10);
    expect(kept.map((entry) => entry.reason)).toEqual(['handler_failed', 'handler_failed']);
    // The service has given both up. The bug is fixed, and the operator replays.
    partner.state.broken = false;
    const replayed = await partner.receiver.replay();
    expect(replayed.results.map((result) => result.outcome)).toEqual(['processed', 'processed']);
    expect(partner.state.written).toEqual([`${user} pending`, `${user} approved`]);
    expect(await stores.deadLetters.list(10)).toEqual([]);
  });

  it('is deleted when a retry succeeds in the same process: nothing left to replay', async () => {
    const stores = createStores();
    const partner = await start(stores);
    const user = `kept-${crypto.randomUUID()}`;
    const body = eventBody('kyc.status.changed', user, { kycStatus: 'pending' });
    expect((await service.deliver(partner.url, body)).body.code).toBe('handler_failed');
    expect((await stores.deadLetters.list(10)).map((entry) => entry.reason)).toEqual(['handler_failed']);
    partner.state.broken = false;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await service.deliver(partner.url, body)).body.code).toBe('processed');
    expect(await stores.deadLetters.list(10)).toEqual([]);
    expect((await partner.receiver.replay()).results).toEqual([]);
    expect(partner.state.written).toEqual([`${user} pending`]);
  });
});
