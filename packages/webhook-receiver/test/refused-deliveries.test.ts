// Deliveries refused for the key: after the service rotates its key, a receiver whose provider
// may not refetch it yet (minRefreshIntervalMs) answers events signed with the new key 401, and
// the service retries them 1, 5 and 15 minutes later. A newer event verified with the new key
// meanwhile must not be undone by such a retry: once the receiver has the new key, it verifies
// the refused deliveries it kept, and tells its store to expect the authentic ones' retries in
// their place. Forgeries refused the same way leave no trace. The stores' first wait before a
// retry (minRetryDelayMs) is a few hundred ms here, a sandbox's schedule sped up.
import { createPublicKeyProvider, importPublicKey, PREVIOUS_KEY_GRACE_MS } from '@capi/webhook-signature';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryDedupeStore, createWebhookReceiver } from '../src/index.js';
import { MAX_REFUSED_BYTES, MAX_REFUSED_DELIVERIES, RefusedDeliveries, refusedTiming } from '../src/pipeline/refused-deliveries.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';

let before: FakeService;
let after: FakeService;
let forger: FakeService;
beforeAll(async () => {
  [before, after, forger] = await Promise.all([createFakeService(), createFakeService(), createFakeService()]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const RETRY_MS = 300;

/** A receiver whose key comes from a key endpoint that serves `served`, refetched at most once a minute of `clock`. */
function rotatingReceiver() {
  const state = { served: before.publicKey, clockMs: Date.now() };
  const provider = createPublicKeyProvider({
    url: 'https://keys.example/api/v1/public-key',
    fetch: async () => Response.json({ success: true, publicKey: state.served }),
    minRefreshIntervalMs: 60_000,
    now: () => state.clockMs,
  });
  const handled: string[] = [];
  const receiver = createWebhookReceiver({ publicKey: provider, dedupe: createMemoryDedupeStore({ minRetryDelayMs: RETRY_MS }), onError: () => {} })
    .on('kyc.status.changed', (event) => void handled.push(event.data.kycStatus));
  return { receiver, handled, state, provider };
}

const kyc = (kycStatus: 'pending' | 'approved') => eventBody('kyc.status.changed', 'usr_1', { kycStatus });
/** The store orders events by their arrival in ms: the next one comes at least a few ms later (the service's come minutes apart). */
const later = () => sleep(10);

describe('a delivery refused 401 for a key the receiver had not fetched yet', () => {
  it('is verified once the new key is fetched, and its retry is superseded by the newer event processed meanwhile', async () => {
    const { receiver, handled, state } = rotatingReceiver();
    expect(await before.receive(receiver, eventBody('user.created', 'usr_1'))).toMatchObject({ status: 200 });
    state.served = after.publicKey; // the service rotates its key
    // Signed with the new key, within a minute of the last fetch: no refetch yet.
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 401, code: 'invalid_signature' });
    await later();
    state.clockMs += 61_000;
    // The newer event makes the receiver fetch the new key: processed.
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    // The retry of the refused event, after the service's wait: authentic, and older than what was processed.
    await sleep(RETRY_MS + 50);
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: 'superseded' });
    expect(handled).toEqual(['approved']);
  });

  it('is dispatched in its turn when its retry comes before any newer event', async () => {
    const { receiver, handled, state } = rotatingReceiver();
    await before.receive(receiver, eventBody('user.created', 'usr_1'));
    state.served = after.publicKey;
    expect(await after.receive(receiver, kyc('pending'))).toMatchObject({ status: 401 });
    state.clockMs += 61_000;
    await sleep(RETRY_MS + 50);
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: 'processed' });
    await later();
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    expect(handled).toEqual(['pending', 'approved']);
  });

  it('leaves no trace when it was a forgery: the same body signed by the service later is a new event, dispatched', async () => {
    const { receiver, handled, state } = rotatingReceiver();
    await before.receive(receiver, eventBody('user.created', 'usr_1'));
    // A forger sends the body of a state the user may come back to.
    expect(await forger.receive(receiver, kyc('pending'))).toMatchObject({ status: 401 });
    await later();
    state.served = after.publicKey;
    state.clockMs += 61_000;
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    await sleep(RETRY_MS + 50);
    // The user really returns to pending: not taken for a retry of the forged copy.
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: 'processed' });
    expect(handled).toEqual(['approved', 'pending']);
  });
});

// An attempt the service signed just before it rotated its key can arrive after the receiver
// fetched the new key (another subject's delivery made it refetch): it fails with the new key.
// The provider keeps the key it replaced for 5 minutes (previousKey), and the receiver checks
// such a refusal with it, only to keep the attempt's place: the attempt is answered 401 all the
// same, and its retry, signed with the new key, is what gets dispatched or superseded.
describe('an attempt signed with the key before a rotation, arriving after the new key was fetched', () => {
  function receiverSeeingTheRotation() {
    const rotating = rotatingReceiver();
    return {
      ...rotating,
      async rotate() {
        await before.receive(rotating.receiver, eventBody('user.created', 'usr_1'));
        rotating.state.served = after.publicKey;
        rotating.state.clockMs += 61_000;
        // Another user's event, signed with the new key: the receiver fetches it and processes the event.
        expect(await after.receive(rotating.receiver, eventBody('user.created', 'usr_2'))).toEqual({ status: 200, code: 'processed' });
      },
    };
  }

  it.each([
    ['keeps its place: its retry, signed with the new key, is superseded by the newer event processed meanwhile', () => before, 0, 'superseded', ['approved']],
    ['no longer 5 minutes after the rotation: such an attempt leaves no trace, and the same body later is a new event', () => before, PREVIOUS_KEY_GRACE_MS, 'processed', ['approved', 'pending']],
    ['leaves no trace when it was a forgery under neither key', () => forger, 0, 'processed', ['approved', 'pending']],
  ] as const)('%s', async (_, sender, sinceRotationMs, retryCode, expected) => {
    const { receiver, handled, state, rotate } = receiverSeeingTheRotation();
    await rotate();
    state.clockMs += sinceRotationMs;
    // Sent before the rotation (or forged), arriving now: refused, never dispatched under the key the service left.
    expect(await sender().receive(receiver, kyc('pending'))).toEqual({ status: 401, code: 'invalid_signature' });
    await later();
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    await sleep(RETRY_MS + 50);
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: retryCode });
    expect(handled).toEqual(expected);
  });

  it('is dispatched by its retry, in its turn, when no newer event came', async () => {
    const { receiver, handled, rotate } = receiverSeeingTheRotation();
    await rotate();
    expect(await before.receive(receiver, kyc('pending'))).toMatchObject({ status: 401 });
    await sleep(RETRY_MS + 50);
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: 'processed' });
    await later();
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    expect(handled).toEqual(['pending', 'approved']);
  });
});

// The provider fetches the key at its first get(): at the process's first delivery. A process
// that received nothing between its start and a rotation has no previous key to check such an
// attempt with, exactly like one started after the rotation; one whose provider fetched the key
// when it started holds it.
describe('an attempt signed just before a rotation, reaching a process that had no delivery before it', () => {
  it.each([
    ['its provider fetched the key when the process started: the attempt keeps its place, its retry is superseded', true, 'superseded', ['approved']],
    ['its provider fetches at the first delivery, after the rotation: the attempt leaves no trace, its retry is dispatched after the newer event', false, 'processed', ['approved', 'pending']],
  ] as const)('%s', async (_, fetchedAtStart, retryCode, expected) => {
    const { receiver, handled, state, provider } = rotatingReceiver();
    if (fetchedAtStart) await provider.get();
    state.served = after.publicKey; // the service rotates its key; nothing was delivered yet
    state.clockMs += 61_000;
    // Another user's event, signed with the new key: the provider fetches it (its first fetch, or a refetch).
    expect(await after.receive(receiver, eventBody('user.created', 'usr_2'))).toEqual({ status: 200, code: 'processed' });
    // Signed before the rotation, arriving now.
    expect(await before.receive(receiver, kyc('pending'))).toEqual({ status: 401, code: 'invalid_signature' });
    await later();
    expect(await after.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    await sleep(RETRY_MS + 50);
    expect(await after.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: retryCode });
    expect(handled).toEqual(expected);
  });
});

describe('several processes sharing one store', () => {
  // The second case is a sandbox at time scale 75 (minRetryDelayMs 60_000 / 75, a provider's
  // minRefreshIntervalMs 15_000 / 75): the refusing process asks every 54 ms and records the
  // refusal within about 300 ms; asking every second, as it did whatever the store's wait, it had
  // not by the time the retry came.
  it.each([
    ['a process that receives nothing after the refusal still records it: it asks its provider for the key every second, so a retry that reaches another process is superseded', 2_000, 300],
    ['under a time scale (a store whose first retry wait is 800 ms), the refusing process asks for the key every fifteenth of that wait, not every second: the retry that reaches another process is superseded', 800, 200],
  ])('%s', async (_, minRetryDelayMs, minRefreshIntervalMs) => {
    let served = before.publicKey;
    const keyEndpoint = async () => Response.json({ success: true, publicKey: served });
    const store = createMemoryDedupeStore({ minRetryDelayMs });
    expect(store.minRetryDelayMs).toBe(minRetryDelayMs);
    const handled: string[] = [];
    const processOf = () =>
      createWebhookReceiver({
        publicKey: createPublicKeyProvider({ url: 'https://keys.example/api/v1/public-key', fetch: keyEndpoint, minRefreshIntervalMs }),
        dedupe: store,
        onError: () => {},
      }).on('kyc.status.changed', (event) => void handled.push(event.data.kycStatus));
    const [first, second] = [processOf(), processOf()];
    await before.receive(first, eventBody('user.created', 'usr_1'));
    served = after.publicKey;
    // The first process refuses the event: it fetched the key a moment ago.
    expect(await after.receive(first, kyc('pending'))).toMatchObject({ status: 401 });
    await later();
    // The second process fetches the new key at its first delivery: the newer event, processed.
    expect(await after.receive(second, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    // The first process gets no other delivery; the retry of the refused event comes after the
    // store's first wait, and reaches the second process.
    await sleep(minRetryDelayMs + 50);
    expect(await after.receive(second, kyc('pending'))).toEqual({ status: 200, code: 'superseded' });
    expect(handled).toEqual(['approved']);
  });

  it('a refusal verified only after its retry could have come is not recorded: a later copy of its body, a new event, is dispatched', async () => {
    // The first process starts while the key endpoint is down (503); the second has the key.
    let down = true;
    const store = createMemoryDedupeStore({ minRetryDelayMs: RETRY_MS });
    const handled: string[] = [];
    const first = createWebhookReceiver({
      publicKey: createPublicKeyProvider({
        url: 'https://keys.example/api/v1/public-key',
        fetch: async () => (down ? new Response('', { status: 502 }) : Response.json({ success: true, publicKey: before.publicKey })),
      }),
      dedupe: store,
      onError: () => {},
    }).on('kyc.status.changed', (event) => void handled.push(event.data.kycStatus));
    const second = createWebhookReceiver({ publicKey: before.publicKey, dedupe: store, onError: () => {} })
      .on('kyc.status.changed', (event) => void handled.push(event.data.kycStatus));
    expect(await before.receive(first, kyc('pending'))).toMatchObject({ status: 503 });
    await sleep(RETRY_MS + 50);
    expect(await before.receive(second, kyc('pending'))).toEqual({ status: 200, code: 'processed' }); // its retry
    await later();
    expect(await before.receive(second, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    down = false; // the first process gets the key within a second, and verifies what it kept
    await sleep(1_300);
    // The user really returns to pending.
    expect(await before.receive(second, kyc('pending'))).toEqual({ status: 200, code: 'processed' });
    expect(handled).toEqual(['pending', 'approved', 'pending']);
  });
});

describe('providers that are not createPublicKeyProvider', () => {
  it('a provider without refresh keeps nothing: a forgery is answered 401 and no timer runs (none could fetch a key)', async () => {
    const key = await importPublicKey(before.publicKey);
    const receiver = createWebhookReceiver({ publicKey: { get: async () => key } as never, dedupe: createMemoryDedupeStore(), onError: () => {} });
    expect(await forger.receive(receiver, kyc('pending'))).toMatchObject({ status: 401 });
    await sleep(1_200); // an uncaught error from a timer would fail the run
    expect(await before.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
  });

  it('a provider whose refresh throws, and whose get answers synchronously without lastKey: deliveries go on, answered as before', async () => {
    const key = await importPublicKey(before.publicKey);
    const provider = { get: () => key, refresh: () => { throw new Error('no endpoint here'); } };
    const receiver = createWebhookReceiver({ publicKey: provider as never, dedupe: createMemoryDedupeStore(), onError: () => {} });
    expect(await before.receive(receiver, eventBody('user.created', 'usr_1'))).toMatchObject({ status: 200 });
    expect(await forger.receive(receiver, kyc('pending'))).toMatchObject({ status: 401 });
    expect(await before.receive(receiver, kyc('approved'))).toEqual({ status: 200, code: 'processed' });
    await sleep(1_200);
    expect(await before.receive(receiver, kyc('pending'))).toEqual({ status: 200, code: 'processed' });
  });
});

describe('what the receiver keeps of refused deliveries', () => {
  const provider = { get: async () => { throw new Error('not called'); }, refresh: async () => { throw new Error('not called'); } };

  it(`keeps at most ${MAX_REFUSED_DELIVERIES} deliveries, dropping the oldest`, () => {
    const refused = new RefusedDeliveries(provider, undefined);
    for (let index = 0; index <= MAX_REFUSED_DELIVERIES; index++) refused.keep(new Uint8Array(10), '1', 'c2ln', Date.now(), Date.now());
    expect(refused.size).toBe(MAX_REFUSED_DELIVERIES);
  });

  it(`keeps at most ${MAX_REFUSED_BYTES} bytes of bodies, dropping the oldest`, () => {
    const refused = new RefusedDeliveries(provider, undefined);
    for (let index = 0; index < 20; index++) refused.keep(new Uint8Array(1_048_576), '1', 'c2ln', Date.now(), Date.now());
    expect(refused.size).toBe(MAX_REFUSED_BYTES / 1_048_576);
  });

  it('keeps them twice the store\'s first retry wait and asks for the key every fifteenth of it (at most every second): under a time scale, not 2 minutes of asking', async () => {
    expect(refusedTiming(undefined)).toEqual({ keepMs: 120_000, recheckIntervalMs: 1_000 });
    expect(refusedTiming(60_000)).toEqual({ keepMs: 120_000, recheckIntervalMs: 1_000 });
    expect(refusedTiming(6_000)).toEqual({ keepMs: 12_000, recheckIntervalMs: 400 });
    let asked = 0;
    const refused = new RefusedDeliveries({ get: async () => { throw new Error('no key'); }, refresh: async () => { asked++; throw new Error('no key'); } }, undefined, refusedTiming(150));
    refused.keep(new Uint8Array(10), '1', 'c2ln', Date.now(), Date.now());
    await sleep(100);
    expect(refused.size).toBe(1);
    expect(asked).toBeGreaterThanOrEqual(2); // every 10 ms
    await sleep(500); // past its 300 ms: dropped, and no more asking
    expect(refused.size).toBe(0);
    expect(refused.pending).toBe(false);
    const askedThen = asked;
    await sleep(100);
    expect(asked).toBe(askedThen);
  });

  it('stays pending while a check runs, so that a delivery verified meanwhile waits for it before it claims', async () => {
    const signed = await after.signedSource(kyc('pending'));
    const key = await importPublicKey(after.publicKey);
    let held: Awaited<ReturnType<typeof importPublicKey>> | undefined; // no key when it was refused
    const refused = new RefusedDeliveries({ get: async () => key, refresh: async () => key, lastKey: () => held }, undefined);
    let release!: () => void;
    const told = new Promise<void>((resolve) => { release = resolve; });
    let recorded = false;
    refused.onAuthentic(async () => { await told; recorded = true; });
    refused.keep(new TextEncoder().encode(kyc('pending')), String(signed.header('x-webhook-timestamp')), String(signed.header('x-webhook-signature')), Date.now(), Date.now());
    held = key;
    const check = refused.recheck();
    await sleep(20);
    expect(refused.size).toBe(0); // taken out for the check
    expect(refused.pending).toBe(true);
    release();
    await check;
    expect(recorded).toBe(true);
    expect(refused.pending).toBe(false);
  });
});
