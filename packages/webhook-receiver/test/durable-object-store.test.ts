import { fileURLToPath } from 'node:url';
import { bundleWorker, startWorkerd } from '@capi/workerd-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDurableObjectDeadLetterStore } from '../src/dead-letter/durable-object-dead-letter-store.js';
import { createDurableObjectDedupeStore } from '../src/dedupe/durable-object-store.js';
import { DeadLetterStoreError, DedupeStoreError, WebhookReceiverError } from '../src/errors.js';
import { deadLetterEntry, describeDeadLetterReplaceContract } from './helpers/dead-letter-store-contract.js';
import { describeDedupeStoreContract, expectFailurePlacedWhenTheServiceSawIt, expectPlacesOnTheReceiversClock } from './helpers/dedupe-store-contract.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';

// Real workerd (npm `workerd`), the Worker bundled as wrangler bundles it.
let worker: Awaited<ReturnType<typeof startWorkerd>>;
let service: FakeService;
let prefixCounter = 0;

beforeAll(async () => {
  service = await createFakeService();
  const { code } = await bundleWorker(fileURLToPath(new URL('./fixtures/durable-object-worker.ts', import.meta.url)));
  worker = await startWorkerd({
    code,
    bindings: { PUBLIC_KEY: service.publicKey },
    durableObjects: [{ binding: 'WEBHOOK_STORE', className: 'WebhookStoreObject' }],
    cron: true,
  });
}, 60_000);

afterAll(() => worker?.close());

const dispatched = async (): Promise<string[]> => (await fetch(`${worker.url}/dispatched`)).json();
const dispatchedFor = async (userId: string) => (await dispatched()).filter((entry) => entry.startsWith(`${userId}:`));
const kyc = (userId: string, kycStatus: string) => eventBody('kyc.status.changed', userId, { kycStatus } as never);

// The namespace as Node sees it: each object reached through the Worker, so that the adapter
// runs here and the object on workerd.
const namespaceOverHttp = {
  idFromName: (name: string) => name,
  get: (id: never) => ({
    fetch: (_url: string, init: { method: string; body: string }) => fetch(`${worker.url}/object/${encodeURIComponent(id)}`, init),
  }),
};

describe('Durable Object store: the store contract, against the real object on workerd', () => {
  describeDedupeStoreContract((options) =>
    createDurableObjectDedupeStore({ namespace: namespaceOverHttp, keyPrefix: `contract:${++prefixCounter}:`, ...options }), { shortTtlMs: 400 });
});

describe('Durable Object store: places on the receiver\'s clock', () => {
  // In production the object runs in one location and the Worker anywhere: an operation takes
  // its time to reach the object (and waits there behind the object's other operations). The
  // event's place must be its arrival at the receiver, not the object's clock less the wait the
  // receiver measured, which would add that transit to it.
  it('keeps a newer event whose older one took longer to reach the object: claimed, not superseded', async () => {
    await expectPlacesOnTheReceiversClock((firstCall) => {
      let held = true;
      // The namespace as Node sees it, with the first operation (A's claim) held on its way to the object.
      const slowFirstHop = {
        idFromName: (name: string) => name,
        get: (id: never) => ({
          fetch: async (_url: string, init: { method: string; body: string }) => {
            if (held) {
              held = false;
              await firstCall;
            }
            return fetch(`${worker.url}/object/${encodeURIComponent(id)}`, init);
          },
        }),
      };
      return createDurableObjectDedupeStore({ namespace: slowFirstHop, keyPrefix: `transit:${++prefixCounter}:` });
    }, 'kyc.status.changed:usr_transit');
  });

  it('places the failure of an attempt that outlived the reply window when the service saw it, not later by the release\'s transit to the object', async () => {
    let transitMs = 0;
    // The namespace as Node sees it, each operation taking transitMs to reach the object.
    const slowHop = {
      idFromName: (name: string) => name,
      get: (id: never) => ({
        fetch: async (_url: string, init: { method: string; body: string }) => {
          if (transitMs > 0) await new Promise((resolve) => setTimeout(resolve, transitMs));
          return fetch(`${worker.url}/object/${encodeURIComponent(id)}`, init);
        },
      }),
    };
    const store = createDurableObjectDedupeStore({ namespace: slowHop, keyPrefix: `transit:${++prefixCounter}:`, minRetryDelayMs: 1_000, replyWindowMs: 500 });
    await expectFailurePlacedWhenTheServiceSawIt(store, (ms) => (transitMs = ms));
  });
});

describe('Durable Object store: a receiver on workerd', () => {
  it('dispatches A -> B -> A three times and a retry of the latest not at all', async () => {
    const url = `${worker.url}/webhooks`;
    for (const status of ['pending', 'resubmissionRequested', 'pending']) {
      expect(await service.deliver(url, kyc('usr_aba', status))).toMatchObject({ status: 200, body: { code: 'processed' } });
    }
    expect(await service.deliver(url, kyc('usr_aba', 'pending'))).toMatchObject({ status: 200, body: { code: 'duplicate' } });
    expect(await dispatchedFor('usr_aba')).toEqual(['usr_aba:pending', 'usr_aba:resubmissionRequested', 'usr_aba:pending']);
  });

  it('dispatches one of eight concurrent deliveries of one event; the others wait for it and are told it is done (or, across isolates, in progress)', async () => {
    const url = `${worker.url}/webhooks`;
    const replies = await Promise.all(Array.from({ length: 8 }, () => service.deliver(url, kyc('usr_race', 'approved'))));
    const codes = replies.map((reply) => `${reply.status} ${reply.body.code}`);
    expect(codes.filter((code) => code === '200 processed')).toHaveLength(1);
    for (const code of codes) expect(['200 processed', '409 duplicate_in_progress', '200 duplicate']).toContain(code);
    expect(await dispatchedFor('usr_race')).toEqual(['usr_race:approved']);
  });

  it('does not hold one subject behind another: concurrent events of eight subjects are all processed', async () => {
    const url = `${worker.url}/webhooks`;
    const users = Array.from({ length: 8 }, (_, index) => `usr_many_${index}`);
    const replies = await Promise.all(users.map((user) => service.deliver(url, kyc(user, 'approved'))));
    expect(replies.map((reply) => reply.status)).toEqual(users.map(() => 200));
    expect((await dispatched()).filter((entry) => entry.startsWith('usr_many_')).sort()).toEqual(users.map((user) => `${user}:approved`));
  });

  it('releases the claim of a failed handler, so that the retry is processed once', async () => {
    const url = `${worker.url}/webhooks`;
    await fetch(`${worker.url}/fail-next`, { method: 'POST' });
    expect(await service.deliver(url, kyc('usr_retry', 'approved'))).toMatchObject({ status: 500, body: { code: 'handler_failed' } });
    expect(await service.deliver(url, kyc('usr_retry', 'approved'))).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(await service.deliver(url, kyc('usr_retry', 'approved'))).toMatchObject({ status: 200, body: { code: 'duplicate' } });
    expect(await dispatchedFor('usr_retry')).toEqual(['usr_retry:approved']);
  });

  it('renews the claim of an acknowledgeEarly handler that runs 3 s with 1 s claims: the next event of its subject waits for it', async () => {
    const url = `${worker.url}/webhooks-slow`;
    const first = service.deliver(url, kyc('usr_slow', 'pending'));
    // Past the claim's first expiry: without a renewal, approved would take the subject now.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const second = service.deliver(url, kyc('usr_slow', 'approved'));
    for (const reply of await Promise.all([first, second])) expect(reply).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    const steps = async (): Promise<string[]> => (await fetch(`${worker.url}/steps`)).json();
    await expect.poll(steps, { timeout: 10_000 }).toHaveLength(4);
    expect(await steps()).toEqual(['pending started', 'pending done', 'approved started', 'approved done']);
  }, 20_000);
});

describe('acknowledgeEarly on workerd without waitUntil', () => {
  const errors = async (): Promise<Array<{ code?: string; outcome: string; subject?: string; message: string; cause?: string }>> => (await fetch(`${worker.url}/errors`)).json();

  it('answers after the handlers instead of a 202 whose handlers workerd would cancel, and reports wait_until_missing once', async () => {
    const url = `${worker.url}/webhooks-nowait`;
    // Before the fix: 202 acknowledged, the handler cancelled with the request, the claim never
    // settled (the next event of the user waited 10 s, then 409), and nothing reported.
    expect(await service.deliver(url, kyc('usr_nowait', 'pending'))).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(await dispatchedFor('usr_nowait')).toEqual(['usr_nowait:pending']);
    const started = Date.now();
    expect(await service.deliver(url, kyc('usr_nowait', 'approved'))).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await dispatchedFor('usr_nowait')).toEqual(['usr_nowait:pending', 'usr_nowait:approved']);
    // A failing handler is answered 500, so the service retries: never acknowledged, never lost.
    await fetch(`${worker.url}/fail-next`, { method: 'POST' });
    expect(await service.deliver(url, kyc('usr_nowait_fail', 'approved'))).toMatchObject({ status: 500, body: { code: 'handler_failed' } });
    expect(await service.deliver(url, kyc('usr_nowait_fail', 'approved'))).toMatchObject({ status: 200, body: { code: 'processed' } });
    const missing = (await errors()).filter((error) => error.code === 'wait_until_missing');
    expect(missing).toEqual([expect.objectContaining({ outcome: 'processed', subject: 'kyc.status.changed:usr_nowait', message: expect.stringMatching(/waitUntil: ctx\.waitUntil\.bind\(ctx\)/) })]);
  });

  it('finishes the handlers before the reply when waitUntil throws (ctx.waitUntil passed unbound), and reports it', async () => {
    expect(await service.deliver(`${worker.url}/webhooks-unbound`, kyc('usr_unbound', 'approved'))).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    expect(await dispatchedFor('usr_unbound')).toEqual(['usr_unbound:approved']);
    const thrown = (await errors()).filter((error) => error.code === 'invalid_options');
    expect(thrown).toEqual([expect.objectContaining({ outcome: 'acknowledged', message: expect.stringMatching(/waitUntil threw.*bind\(ctx\)/), cause: expect.stringMatching(/Illegal invocation/) })]);
  });
});

describe('Durable Object store: configuration and failures', () => {
  it('refuses a missing or wrong namespace with invalid_options, saying how to bind one', () => {
    expect(() => createDurableObjectDedupeStore({} as never)).toThrow(WebhookReceiverError);
    expect(() => createDurableObjectDedupeStore({ namespace: {} } as never)).toThrow(/Durable Object namespace binding of WebhookStoreObject/);
    expect(() => createDurableObjectDedupeStore({ namespace: namespaceOverHttp, claimTtlMs: 0 })).toThrow(/claimTtlMs must be a positive integer/);
  });

  it('answers dedupe_store_unavailable when the object cannot be reached (the receiver replies 503)', async () => {
    const store = createDurableObjectDedupeStore({ namespace: { idFromName: (name) => name, get: () => ({ fetch: () => Promise.reject(new Error('network lost')) }) } });
    const error = await Promise.resolve(store.claim('s', 'A')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DedupeStoreError);
    expect(error).toMatchObject({ code: 'dedupe_store_unavailable', message: expect.stringMatching(/network lost.*503/) });
  });

  it.each([
    ['a 404', () => new Response('no', { status: 404 })],
    ['a 200 that is not JSON (what an object of another class typically answers)', () => new Response('hello from another class')],
  ])('answers unexpected_store_reply when the namespace is bound to another class: %s', async (_name, reply) => {
    const namespace = { idFromName: (name: string) => name, get: () => ({ fetch: async () => reply() }) };
    const message = /is the namespace bound to WebhookStoreObject/;
    await expect(Promise.resolve(createDurableObjectDedupeStore({ namespace }).claim('s', 'A'))).rejects.toMatchObject({ code: 'unexpected_store_reply', message: expect.stringMatching(message) });
    await expect(Promise.resolve(createDurableObjectDeadLetterStore({ namespace }).list(1))).rejects.toMatchObject({ code: 'unexpected_store_reply', message: expect.stringMatching(message) });
  });
});

describe('Durable Object dead-letter store', () => {
  const entry = deadLetterEntry;

  it('lists what was put, oldest first, byte for byte; a second copy keeps its place; delete forgets', async () => {
    const store = createDurableObjectDeadLetterStore({ namespace: namespaceOverHttp, keyPrefix: `letters:${++prefixCounter}:` });
    const notUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0x7b]);
    await store.put(entry('b', 2_000));
    await store.put(entry('a', 1_000, notUtf8));
    await store.put(entry('c', 3_000));
    // A second copy leaves the first entry as it is: its place, its reason, its timestamp.
    await store.put({ ...entry('a', 9_000, notUtf8), timestamp: 1_700_000_060, reason: 'in_flight', errors: [] });
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['a', 'b', 'c']);
    expect([...listed[0]!.rawBody]).toEqual([...notUtf8]);
    expect(listed[0]).toMatchObject({ receivedAt: 1_000, timestamp: 1_700_000_000, reason: 'invalid_event' });
    expect(listed[1]).toEqual({ ...entry('b', 2_000), rawBody: expect.any(Uint8Array) });
    expect((await store.list(2)).map((kept) => kept.bodySha256)).toEqual(['a', 'b']);
    await store.delete('a');
    await store.delete('never-kept');
    expect((await store.list(10)).map((kept) => kept.bodySha256)).toEqual(['b', 'c']);
  });

  it('keeps an authentic event the schema refuses, from a receiver on workerd (202), for a later replay', async () => {
    const body = kyc('usr_drift', 'someNewStatus');
    expect(await service.deliver(`${worker.url}/webhooks`, body)).toMatchObject({ status: 202, body: { code: 'invalid_event_dead_lettered' } });
    const kept = await createDurableObjectDeadLetterStore({ namespace: namespaceOverHttp }).list(100);
    const drift = kept.filter((letter) => new TextDecoder().decode(letter.rawBody) === body);
    expect(drift).toHaveLength(1);
    expect(drift[0]!.errors.map((error) => error.path)).toContain('/data/kycStatus');
    expect(await dispatchedFor('usr_drift')).toEqual([]);
  });

  it('keeps an event whose handlers failed after an early 202 (acknowledgeEarly, waitUntil on workerd), and replay() dispatches it', async () => {
    await fetch(`${worker.url}/fail-next`, { method: 'POST' });
    const body = kyc('usr_early', 'requiresAction');
    expect(await service.deliver(`${worker.url}/webhooks-early`, body)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    const letters = createDurableObjectDeadLetterStore({ namespace: namespaceOverHttp, keyPrefix: 'early:' });
    // Kept in_flight before the 202, then handler_failed once the handler has failed.
    await expect.poll(async () => (await letters.list(10)).map((letter) => letter.reason), { timeout: 5_000 }).toEqual(['handler_failed']);
    const [kept] = await letters.list(10);
    expect(kept).toMatchObject({ reason: 'handler_failed', errors: [] });
    expect(new TextDecoder().decode(kept!.rawBody)).toBe(body);
    expect(await dispatchedFor('usr_early')).toEqual([]);
    const replayed = (await (await fetch(`${worker.url}/replay-early`, { method: 'POST' })).json()) as { results: Array<{ outcome: string; deleted: boolean }> };
    expect(replayed.results).toEqual([{ bodySha256: kept!.bodySha256, outcome: 'processed', deleted: true }]);
    expect(await dispatchedFor('usr_early')).toEqual(['usr_early:requiresAction']);
    expect(await letters.list(10)).toEqual([]);
  });

  it('replays from the Worker\'s scheduled handler (a Cron Trigger, fired by workerd) with the receiver fetch created: the failed event is dispatched and its dead letter deleted', async () => {
    const body = kyc('usr_cron', 'approved');
    // fetch creates the receiver in this isolate first, as a Worker that received deliveries has.
    await fetch(`${worker.url}/fail-next`, { method: 'POST' });
    expect(await service.deliver(`${worker.url}/webhooks-early`, body)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    const letters = createDurableObjectDeadLetterStore({ namespace: namespaceOverHttp, keyPrefix: 'early:' });
    await expect.poll(async () => (await letters.list(10)).map((letter) => letter.reason), { timeout: 5_000 }).toEqual(['handler_failed']);
    const [kept] = await letters.list(10);
    expect(await worker.scheduled('*/5 * * * *')).toMatchObject({ outcome: 'ok' });
    const replays = (await (await fetch(`${worker.url}/replays`)).json()) as Array<{ cron: string; results: unknown[] }>;
    expect(replays.at(-1)).toEqual({ cron: '*/5 * * * *', results: [{ bodySha256: kept!.bodySha256, outcome: 'processed', deleted: true }] });
    expect(await dispatchedFor('usr_cron')).toEqual(['usr_cron:approved']);
    expect(await letters.list(10)).toEqual([]);
    // Nothing left: the next run replays nothing.
    expect(await worker.scheduled()).toMatchObject({ outcome: 'ok' });
    expect(((await (await fetch(`${worker.url}/replays`)).json()) as Array<{ results: unknown[] }>).at(-1)!.results).toEqual([]);
    // (No request-context error: the receiver fetch created serves the cron event too.)
    expect(worker.stderr()).not.toMatch(/Uncaught|different request|Cannot perform I\/O/);
  });

  describe('replace, against the real object on workerd', () => {
    describeDeadLetterReplaceContract(() => createDurableObjectDeadLetterStore({ namespace: namespaceOverHttp, keyPrefix: `replace:${++prefixCounter}:` }), { bounded: false });
  });

  it('replace on an object deployed from the previous version (it answers null to an operation it does not know): deletes then puts instead', async () => {
    const sent: string[] = [];
    // The real object, except that it answers deadLetter.replace as the previous version's did, without doing it.
    const previousVersion = {
      idFromName: namespaceOverHttp.idFromName,
      get: (id: never) => ({
        fetch: async (url: string, init: { method: string; body: string }) => {
          const { op } = JSON.parse(init.body) as { op: string };
          sent.push(op);
          return op === 'deadLetter.replace' ? Response.json(null) : namespaceOverHttp.get(id).fetch(url, init);
        },
      }),
    };
    const store = createDurableObjectDeadLetterStore({ namespace: previousVersion, keyPrefix: `previous:${++prefixCounter}:` });
    await store.put(deadLetterEntry('a', 1_000));
    await store.put(deadLetterEntry('b', 2_000));
    sent.length = 0;
    await store.replace!({ ...deadLetterEntry('a', 3_000), reason: 'handler_failed', errors: [] });
    expect(sent).toEqual(['deadLetter.replace', 'deadLetter.delete', 'deadLetter.put']);
    expect((await store.list(10)).map((kept) => [kept.bodySha256, kept.receivedAt, kept.reason])).toEqual([['b', 2_000, 'invalid_event'], ['a', 3_000, 'handler_failed']]);
  });

  it('answers dead_letter_store_unavailable when the object cannot be reached', async () => {
    const store = createDurableObjectDeadLetterStore({ namespace: { idFromName: (name) => name, get: () => ({ fetch: () => Promise.reject(new Error('network lost')) }) } });
    await expect(Promise.resolve(store.put(entry('x', 1)))).rejects.toSatisfy((error) =>
      error instanceof DeadLetterStoreError && error.code === 'dead_letter_store_unavailable');
  });
});
