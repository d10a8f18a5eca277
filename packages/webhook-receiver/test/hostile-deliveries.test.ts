// Hostile, malformed, truncated and concurrent deliveries over real HTTP, through both adapters.
// What must hold whatever arrives: the answer has the documented status of its case, a handler
// runs only for a verified, valid, first-seen event and then exactly once, nothing the sender
// caused is a 500, and nothing escapes as an unhandled rejection or a request left hanging.
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';
import { getRequestListener } from '@hono/node-server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createMemoryDedupeStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { listen, type RunningServer } from './helpers/servers.js';

const SEED = 20261121;
const MAX_BODY_BYTES = 4096;
const TOLERANCE = 300;
// The receiver's clock, on a whole second, so that the tolerance edges (±300 s in, ±301 s out) are exact.
const NOW_SECONDS = 1_800_000_000;
const now = () => NOW_SECONDS * 1000;

let privateKey: string;
let publicKey: string;
let otherPrivateKey: string;
let redis: RedisServer;
let ioredis: Redis;
const running: RunningServer[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => { unhandled.push(reason); };

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  ({ privateKey, publicKey } = await generateWebhookKeyPair());
  ({ privateKey: otherPrivateKey } = await generateWebhookKeyPair());
  redis = await startRedisServer();
  ioredis = new Redis({ port: redis.port, host: '127.0.0.1' });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
  // Give a rejection left behind by the test a turn to surface before checking.
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled.splice(0)).toEqual([]);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  ioredis?.disconnect();
  await redis?.close();
});

/**
 * A receiver served over real HTTP, whose handler promises are tracked: `pending()` counts the
 * deliveries whose handling has not settled yet, and `listenersLeft()` the request listeners
 * the receiver added and did not remove.
 */
interface Served {
  readonly url: string;
  readonly port: number;
  pending(): number;
  listenersLeft(): number;
  /** What the receiver's own promise (toNodeHandler's, or handle()'s) rejected with. */
  readonly failures: readonly unknown[];
}

type Serve = (receiver: WebhookReceiver, options?: { beforeReceiver?: (req: IncomingMessage) => Promise<void> }) => Promise<Served>;

const REQUEST_EVENTS = ['data', 'end', 'error', 'close', 'aborted'] as const;
const listenerCounts = (req: IncomingMessage) => REQUEST_EVENTS.map((name) => req.listenerCount(name));

function track(handle: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>, beforeReceiver?: (req: IncomingMessage) => Promise<void>, countListeners = true) {
  let pending = 0;
  let listenersLeft = 0;
  const failures: unknown[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    pending += 1;
    void (async () => {
      try {
        await beforeReceiver?.(req);
        const before = listenerCounts(req);
        await handle(req, res);
        const after = listenerCounts(req);
        if (countListeners) listenersLeft += after.reduce((sum, count, index) => sum + Math.max(0, count - before[index]!), 0);
      } catch (error) {
        failures.push(error);
      } finally {
        pending -= 1;
      }
    })();
  };
  return { listener, pending: () => pending, listenersLeft: () => listenersLeft, failures };
}

async function served(listener: (req: IncomingMessage, res: ServerResponse) => void, tracked: Omit<Served, 'url' | 'port'>): Promise<Served> {
  const server = await listen(listener);
  running.push(server);
  return { url: `${server.url}/webhooks`, port: Number(new URL(server.url).port), ...tracked };
}

const servings: Array<[string, Serve]> = [
  ['node:http with toNodeHandler', (receiver, options) => {
    const handler = toNodeHandler(receiver);
    const tracked = track((req, res) => handler(req, res), options?.beforeReceiver);
    return served(tracked.listener, tracked);
  }],
  ['Web handle(Request) behind a node:http bridge', (receiver, options) => {
    // Hono's Node bridge. The receiver does not touch the Node request here (the bridge's own
    // listeners are the bridge's), so only handle()'s promise is tracked.
    const handling = new WeakMap<IncomingMessage, Promise<Response>>();
    const bridge = getRequestListener((request, env: { incoming: unknown }) => {
      const response = receiver.handle(request);
      handling.set(env.incoming as IncomingMessage, response);
      return response;
    });
    const tracked = track(async (req, res) => {
      // The bridge's promise rejects when the sender left mid-body: that is the bridge's affair.
      await bridge(req, res).catch(() => undefined);
      await handling.get(req);
    }, options?.beforeReceiver, false);
    return served(tracked.listener, tracked);
  }],
];

/** One POST over a fresh connection: the headers exactly as given (an array sends the header twice), the body in one piece or chunked. */
function post(url: string, body: Uint8Array, headers: OutgoingHttpHeaders, framing: 'content-length' | 'chunked'): Promise<{ status: number; code: string }> {
  return new Promise((resolve, reject) => {
    const all: OutgoingHttpHeaders = { ...headers };
    if (framing === 'content-length') all['content-length'] = String(body.byteLength);
    const req = httpRequest(url, { method: 'POST', headers: all, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, code: text === '' ? '' : (JSON.parse(text) as { code: string }).code });
      });
      res.on('error', reject);
    });
    // A 413 may close the connection while the rest of the body is still being written.
    req.on('error', reject);
    if (framing === 'chunked') {
      const middle = body.byteLength >> 1;
      req.write(body.subarray(0, middle));
      req.write(body.subarray(middle));
    } else {
      req.write(body);
    }
    req.end();
  });
}

const KNOWN_EVENT_TYPES = ['user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed'] as const;
const encode = (text: string) => new TextEncoder().encode(text);
let userCounter = 0;

type BodyCase =
  | { kind: 'event'; eventType: (typeof KNOWN_EVENT_TYPES)[number]; deliverTwice: boolean }
  | { kind: 'unknown_type'; eventType: string; data: unknown }
  | { kind: 'wrong_shape'; value: unknown }
  | { kind: 'not_json'; text: string }
  | { kind: 'non_utf8'; bytes: Uint8Array }
  | { kind: 'empty' }
  | { kind: 'oversized'; extra: number; declared: boolean };

type SignatureCase =
  | { kind: 'valid' | 'missing' | 'empty' | 'other_key' | 'other_body' | 'duplicated' }
  | { kind: 'wrong_length'; length: number }
  | { kind: 'wrong_alphabet'; at: number; char: string };

type TimestampCase = { kind: 'offset'; seconds: number } | { kind: 'missing' | 'duplicated' } | { kind: 'malformed'; text: string };

const isObjectWithStringType = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { eventType?: unknown }).eventType === 'string';
const notJson = (text: string) => { try { JSON.parse(text); return false; } catch { return true; } };

const bodyCase: fc.Arbitrary<BodyCase> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('event' as const), eventType: fc.constantFrom(...KNOWN_EVENT_TYPES), deliverTwice: fc.boolean() }) },
  fc.record({
    kind: fc.constant('unknown_type' as const),
    eventType: fc.string({ maxLength: 30 }).filter((type) => !(KNOWN_EVENT_TYPES as readonly string[]).includes(type) && type !== 'card.transaction.created'),
    data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  }),
  fc.record({
    kind: fc.constant('wrong_shape' as const),
    value: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).filter((value) => !isObjectWithStringType(value)),
      fc.record({ eventType: fc.constantFrom(...KNOWN_EVENT_TYPES), data: fc.jsonValue({ maxDepth: 2 }) }),
    ),
  }),
  fc.record({ kind: fc.constant('not_json' as const), text: fc.string({ maxLength: 200 }).filter(notJson) }),
  fc.record({ kind: fc.constant('non_utf8' as const), bytes: fc.uint8Array({ maxLength: 200 }).map((bytes) => Uint8Array.of(0x7b, 0xff, ...bytes)) }),
  fc.record({ kind: fc.constant('empty' as const) }),
  fc.record({ kind: fc.constant('oversized' as const), extra: fc.integer({ min: 1, max: 20_000 }), declared: fc.boolean() }),
);

const signatureCase: fc.Arbitrary<SignatureCase> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'valid' as const }) },
  fc.constantFrom(...(['missing', 'empty', 'other_key', 'other_body', 'duplicated'] as const).map((kind) => ({ kind }))),
  fc.record({ kind: fc.constant('wrong_length' as const), length: fc.integer({ min: 1, max: 200 }).filter((length) => length !== 86 && length !== 88) }),
  fc.record({ kind: fc.constant('wrong_alphabet' as const), at: fc.integer({ min: 1, max: 84 }), char: fc.constantFrom('-', '_', '!', '.', '~', ' ', 'é', '%') }),
);

const timestampCase: fc.Arbitrary<TimestampCase> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('offset' as const), seconds: fc.oneof(
    fc.constantFrom(0, -TOLERANCE, TOLERANCE, -TOLERANCE - 1, TOLERANCE + 1),
    fc.integer({ min: -3 * TOLERANCE, max: 3 * TOLERANCE }),
    fc.integer({ min: -1e9, max: 1e9 }),
  ) }) },
  fc.constantFrom({ kind: 'missing' as const }, { kind: 'duplicated' as const }),
  // Servers trim a header's surrounding spaces, so the text starts and ends with a visible character.
  fc.record({ kind: fc.constant('malformed' as const), text: fc.stringMatching(/^[!-~]([ -~]{0,18}[!-~])?$/).filter((text) => !/^[0-9]{1,15}$/.test(text)) }),
);

// Headers the service does not send; they must change nothing.
const extraHeaders = fc.dictionary(fc.stringMatching(/^x-[a-z]{1,10}$/), fc.stringMatching(/^[!-~]([ -~]{0,60}[!-~])?$/), { maxKeys: 4 });

interface Hostile {
  body: BodyCase;
  signature: SignatureCase;
  timestamp: TimestampCase;
  framing: 'content-length' | 'chunked';
  contentType: string;
  extra: Record<string, string>;
}

const hostileDelivery: fc.Arbitrary<Hostile> = fc.record({
  body: bodyCase,
  signature: signatureCase,
  timestamp: timestampCase,
  framing: fc.constantFrom('content-length' as const, 'chunked' as const),
  contentType: fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded'),
  extra: extraHeaders,
});

/** The documented answers of a case (reference 6.2, the status list): the status, and the codes it may carry. */
function expectedAnswer(delivery: Hostile): { status: number; codes: string[] } {
  if (delivery.body.kind === 'oversized') return { status: 413, codes: ['body_too_large'] };
  const faults: string[] = [];
  const { timestamp, signature } = delivery;
  if (timestamp.kind === 'missing') faults.push('missing_timestamp');
  if (timestamp.kind === 'malformed' || timestamp.kind === 'duplicated') faults.push('malformed_timestamp');
  if (signature.kind === 'missing' || signature.kind === 'empty') faults.push('missing_signature');
  if (signature.kind === 'wrong_length' || signature.kind === 'wrong_alphabet' || signature.kind === 'duplicated') faults.push('malformed_signature');
  if (timestamp.kind === 'offset' && timestamp.seconds < -TOLERANCE) faults.push('timestamp_too_old');
  if (timestamp.kind === 'offset' && timestamp.seconds > TOLERANCE) faults.push('timestamp_in_future');
  if (signature.kind === 'other_key' || signature.kind === 'other_body') faults.push('invalid_signature');
  if (faults.length > 0) return { status: 401, codes: faults };
  switch (delivery.body.kind) {
    // Authentic but not an event this SDK accepts: never 4xx. With neither a dead-letter store
    // nor onInvalidEvent no code has taken it, so the service is made to retry.
    case 'empty':
    case 'not_json':
    case 'non_utf8':
    case 'wrong_shape':
      return { status: 500, codes: ['invalid_event_unhandled'] };
    case 'unknown_type':
      return { status: 200, codes: ['unknown_event_type'] };
    case 'event':
      return { status: 200, codes: ['processed'] };
  }
}

async function materialise(delivery: Hostile): Promise<{ body: Uint8Array; headers: OutgoingHttpHeaders; userId?: string }> {
  let body: Uint8Array;
  let userId: string | undefined;
  switch (delivery.body.kind) {
    case 'event':
      userId = `hostile-${process.pid}-${++userCounter}`;
      body = encode(eventBody(delivery.body.eventType, userId));
      break;
    case 'unknown_type':
      body = encode(JSON.stringify({ eventType: delivery.body.eventType, data: delivery.body.data }));
      break;
    case 'wrong_shape':
      body = encode(JSON.stringify(delivery.body.value));
      break;
    case 'not_json':
      body = encode(delivery.body.text);
      break;
    case 'non_utf8':
      body = delivery.body.bytes;
      break;
    case 'empty':
      body = new Uint8Array(0);
      break;
    case 'oversized':
      userId = `hostile-${process.pid}-${++userCounter}`;
      body = encode(eventBody('user.created', userId, { address2: 'x'.repeat(MAX_BODY_BYTES + delivery.body.extra) }));
      break;
  }
  const { timestamp, signature } = delivery;
  const seconds = NOW_SECONDS + (timestamp.kind === 'offset' ? timestamp.seconds : 0);
  const signingKey = signature.kind === 'other_key' ? otherPrivateKey : privateKey;
  const signedBody = signature.kind === 'other_body' ? encode(eventBody('user.created', 'someone-else')) : body;
  const signed = await signWebhook({ rawBody: signedBody, privateKey: signingKey, timestamp: seconds });
  const headers: OutgoingHttpHeaders = { 'content-type': delivery.contentType, ...delivery.extra };
  if (timestamp.kind === 'offset') headers['x-webhook-timestamp'] = signed.timestamp;
  if (timestamp.kind === 'duplicated') headers['x-webhook-timestamp'] = [signed.timestamp, signed.timestamp];
  if (timestamp.kind === 'malformed') headers['x-webhook-timestamp'] = timestamp.text;
  switch (signature.kind) {
    case 'missing':
      break;
    case 'empty':
      headers['x-webhook-signature'] = '';
      break;
    case 'duplicated':
      headers['x-webhook-signature'] = [signed.signature, signed.signature];
      break;
    case 'wrong_length':
      headers['x-webhook-signature'] = signed.signature.repeat(3).slice(0, signature.length);
      break;
    case 'wrong_alphabet':
      headers['x-webhook-signature'] = signed.signature.slice(0, signature.at) + signature.char + signed.signature.slice(signature.at + 1);
      break;
    default:
      headers['x-webhook-signature'] = signed.signature;
  }
  return { body, headers, userId };
}

describe.each(servings)('over %s', (_name, serve) => {
  async function start(options: Partial<WebhookReceiverOptions> = {}, setup?: (receiver: WebhookReceiver) => void, beforeReceiver?: (req: IncomingMessage) => Promise<void>) {
    const reported: WebhookErrorContext[] = [];
    // The reports of 401s for a signature or timestamp (at most one a minute, and `now` stands still here).
    const signatureReports: WebhookErrorContext[] = [];
    const dispatched: string[] = [];
    const unknown: string[] = [];
    const receiver = createWebhookReceiver({
      publicKey,
      now,
      toleranceSeconds: TOLERANCE,
      maxBodyBytes: MAX_BODY_BYTES,
      onError: (error, context) => ((error as { code?: unknown } | undefined)?.code === 'signatures_rejected' ? signatureReports : reported).push(context),
      onUnknownEvent: (event) => { unknown.push(event.eventType); },
      ...options,
    });
    if (setup) setup(receiver);
    else receiver.onAny((event) => { dispatched.push((event.data as { id: string }).id); });
    const server = await serve(receiver, { beforeReceiver });
    return { server, reported, signatureReports, dispatched, unknown };
  }

  describe('answers every hostile delivery with the documented status, and dispatches only verified, valid, first-seen events, once', () => {
    it('holds for random bodies, signatures, timestamps around the tolerance edges, headers and framings', async () => {
      const { server, reported, signatureReports, dispatched, unknown } = await start();
      const keyOrClock: string[] = [];
      await fc.assert(
        fc.asyncProperty(hostileDelivery, async (delivery) => {
          const { body, headers, userId } = await materialise(delivery);
          const framing = delivery.body.kind === 'oversized' && !delivery.body.declared ? 'chunked' : delivery.framing;
          const expected = expectedAnswer(delivery);
          const unknownBefore = unknown.length;
          const reportedBefore = reported.length;
          const answer = await post(server.url, body, headers, framing);
          expect(answer.status).toBe(expected.status);
          expect(expected.codes).toContain(answer.code);
          if (['invalid_signature', 'timestamp_too_old', 'timestamp_in_future'].includes(answer.code)) keyOrClock.push(answer.code);
          const dispatchedOnce = expected.codes[0] === 'processed';
          if (userId !== undefined) expect(dispatched.filter((id) => id === userId)).toHaveLength(dispatchedOnce ? 1 : 0);
          expect(unknown.length - unknownBefore).toBe(expected.codes[0] === 'unknown_event_type' ? 1 : 0);
          if (delivery.body.kind === 'event' && delivery.body.deliverTwice && dispatchedOnce) {
            // The service's retry of the same body, re-signed a second later.
            const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS + 1 });
            const again = await post(server.url, body, { ...headers, ...signed.headers }, framing);
            expect(again).toEqual({ status: 200, code: 'duplicate' });
            expect(dispatched.filter((id) => id === userId)).toHaveLength(1);
          }
          // Nothing else the sender caused is the receiver's failure; an authentic invalid body
          // is reported once, as the schema drift it may be.
          const invalidAuthentic = expected.codes[0] === 'invalid_event_unhandled';
          expect(reported.slice(reportedBefore)).toEqual(invalidAuthentic ? [expect.objectContaining({ outcome: 'invalid_event_unhandled' })] : []);
        }),
        { seed: SEED, numRuns: 300 },
      );
      // A wrong key or clock looks like a forgery: the first such 401 is reported, the others of
      // the same minute only counted.
      expect(keyOrClock.length).toBeGreaterThan(0);
      expect(signatureReports).toEqual([{ outcome: keyOrClock[0], afterReply: false }]);
      await vi.waitFor(() => expect(server.pending()).toBe(0));
      expect(server.listenersLeft()).toBe(0);
      expect(server.failures).toEqual([]);
    });
  });

  describe('runs a handler that throws, rejects or hangs as documented: 500 and released, or the reply waits', () => {
    type Behaviour = 'returns' | 'resolves' | 'throws' | 'rejects' | 'throws a non-Error' | 'hangs, then resolves' | 'hangs, then rejects';
    const behaviours: Behaviour[] = ['returns', 'resolves', 'throws', 'rejects', 'throws a non-Error', 'hangs, then resolves', 'hangs, then rejects'];

    it('answers 200 for a handler that succeeds and 500 handler_failed for one that fails, and the retry after a failure is processed', async () => {
      let behaviour: Behaviour = 'returns';
      let release!: () => void;
      let started!: () => void;
      const calls: string[] = [];
      // subjectWaitMs 0: a copy that arrives while the handler hangs is answered 409 at once
      // instead of waiting for it (the default), so that the test can release the handler after.
      const { server, reported } = await start({ subjectWaitMs: 0 }, (receiver) => receiver.onAny(async (event) => {
        calls.push((event.data as { id: string }).id);
        switch (behaviour) {
          case 'returns': return undefined;
          case 'resolves': return Promise.resolve();
          case 'throws': throw new Error('handler failed');
          case 'rejects': return Promise.reject(new Error('handler rejected'));
          case 'throws a non-Error': throw undefined;
          case 'hangs, then resolves':
          case 'hangs, then rejects': {
            const hang = new Promise<void>((resolve) => { release = resolve; });
            started();
            await hang;
            if (behaviour === 'hangs, then rejects') throw new Error('failed after hanging');
          }
        }
      }));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...behaviours), fc.constantFrom(...KNOWN_EVENT_TYPES), async (chosen, eventType) => {
          behaviour = chosen;
          reported.length = 0;
          const userId = `handler-${process.pid}-${++userCounter}`;
          const body = encode(eventBody(eventType, userId));
          const deliver = async () => {
            const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
            return post(server.url, body, { 'content-type': 'application/json', ...signed.headers }, 'content-length');
          };
          const fails = chosen === 'throws' || chosen === 'rejects' || chosen === 'throws a non-Error' || chosen === 'hangs, then rejects';
          let answer: { status: number; code: string };
          if (chosen.startsWith('hangs')) {
            const handlerStarted = new Promise<void>((resolve) => { started = resolve; });
            const first = deliver();
            await handlerStarted;
            // A copy while the handler hangs is told to come back later, and is not dispatched.
            expect(await deliver()).toEqual({ status: 409, code: 'duplicate_in_progress' });
            release();
            answer = await first;
          } else {
            answer = await deliver();
          }
          expect(answer).toEqual(fails ? { status: 500, code: 'handler_failed' } : { status: 200, code: 'processed' });
          expect(reported.map((context) => context.outcome)).toEqual(fails ? ['handler_failed'] : []);
          behaviour = 'returns';
          // The service's retry: processed when the first failed, a duplicate when it succeeded.
          expect(await deliver()).toEqual(fails ? { status: 200, code: 'processed' } : { status: 200, code: 'duplicate' });
          expect(calls.filter((id) => id === userId)).toHaveLength(fails ? 2 : 1);
        }),
        { seed: SEED, numRuns: 30 },
      );
      await vi.waitFor(() => expect(server.pending()).toBe(0));
    });
  });

  describe('dispatches the same body sent concurrently over many connections exactly once', () => {
    const stores: Array<[string, () => DedupeStore]> = [
      ['memory store', () => createMemoryDedupeStore()],
      ['Redis store', () => createRedisDedupeStore({ client: ioredis, keyPrefix: `hostile:${process.pid}:${++userCounter}:` })],
    ];

    it.each(stores)('with the %s', async (_store, createStore) => {
      const { server, dispatched, reported } = await start({ dedupe: createStore() }, (receiver) => receiver.onAny(async (event) => {
        // Stay in the handler across a few turns, so that the copies overlap it.
        await new Promise((resolve) => setTimeout(resolve, 5));
        dispatched.push((event.data as { id: string }).id);
      }));
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 2, max: 25 }), fc.constantFrom(...KNOWN_EVENT_TYPES), async (copies, eventType) => {
          const userId = `concurrent-${process.pid}-${++userCounter}`;
          const body = encode(eventBody(eventType, userId));
          const answers = await Promise.all(Array.from({ length: copies }, async (_, copy) => {
            // Each copy re-signed with its own timestamp, as the service's retries are.
            const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS - copy });
            return post(server.url, body, { 'content-type': 'application/json', ...signed.headers }, copy % 2 === 0 ? 'content-length' : 'chunked');
          }));
          expect(answers.filter((answer) => answer.code === 'processed')).toEqual([{ status: 200, code: 'processed' }]);
          for (const answer of answers.filter((each) => each.code !== 'processed')) {
            expect([{ status: 200, code: 'duplicate' }, { status: 409, code: 'duplicate_in_progress' }]).toContainEqual(answer);
          }
          expect(dispatched.filter((id) => id === userId)).toHaveLength(1);
        }),
        { seed: SEED, numRuns: 8 },
      );
      expect(reported).toEqual([]);
      await vi.waitFor(() => expect(server.pending()).toBe(0));
    });
  });

  describe('settles every delivery whose sender disconnects, at any stage, dispatching nothing it did not verify', () => {
    type Stage = 'in the headers' | 'after the headers' | 'mid-body' | 'before the receiver ran' | 'while the handler runs' | 'after the reply';
    const stages: Stage[] = ['in the headers', 'after the headers', 'mid-body', 'before the receiver ran', 'while the handler runs', 'after the reply'];

    it.each(stages)('%s', async (stage) => {
      let handlerStarted!: () => void;
      const started = new Promise<void>((resolve) => { handlerStarted = resolve; });
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      const { server, dispatched, reported } = await start(
        {},
        (receiver) => receiver.onAny(async (event) => {
          handlerStarted();
          if (stage === 'while the handler runs') await released;
          dispatched.push((event.data as { id: string }).id);
        }),
        // An asynchronous middleware in front of the receiver (authentication, a rate limit):
        // here it waits until the sender has gone.
        stage === 'before the receiver ran' ? async (req) => { if (!req.destroyed) await new Promise((resolve) => req.once('close', resolve)); } : undefined,
      );
      const userId = `cut-${process.pid}-${++userCounter}`;
      const body = eventBody('user.created', userId);
      const { headers } = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
      const head = `POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n';
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      const replied = new Promise<void>((resolve) => socket.once('data', () => resolve()));
      switch (stage) {
        case 'in the headers':
          socket.write(head.slice(0, head.length >> 1));
          break;
        case 'after the headers':
          socket.write(head);
          break;
        case 'mid-body':
        case 'before the receiver ran':
          socket.write(head + body.slice(0, body.length >> 1));
          break;
        case 'while the handler runs':
          socket.write(head + body);
          await started;
          break;
        case 'after the reply':
          socket.write(head + body);
          await replied;
          break;
      }
      // Let the server read what was written before the connection goes.
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      release();
      await vi.waitFor(() => expect(server.pending()).toBe(0), { timeout: 5_000 });
      expect(server.failures).toEqual([]);
      const verified = stage === 'while the handler runs' || stage === 'after the reply';
      expect(dispatched).toEqual(verified ? [userId] : []);
      expect(reported).toEqual([]);
      expect(server.listenersLeft()).toBe(0);
      if (verified) {
        // Processed once: the service's retry of the body (its reply was lost) is a duplicate.
        const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
        expect(await post(server.url, encode(body), { 'content-type': 'application/json', ...signed.headers }, 'content-length'))
          .toEqual({ status: 200, code: 'duplicate' });
        expect(dispatched).toEqual([userId]);
      }
    });
  });

  describe('keeps failures of its own callbacks inside the receiver', () => {
    it('does not let an async onError that rejects become an unhandled rejection', async () => {
      const failedLogs: unknown[] = [];
      const { server } = await start({
        onError: async (error) => {
          failedLogs.push(error);
          throw new Error('the log service is down');
        },
      }, (receiver) => receiver.onAny(() => { throw new Error('handler failed'); }));
      const body = eventBody('user.created', `onerror-${process.pid}-${++userCounter}`);
      const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
      expect(await post(server.url, encode(body), { 'content-type': 'application/json', ...signed.headers }, 'content-length'))
        .toEqual({ status: 500, code: 'handler_failed' });
      expect(failedLogs).toHaveLength(1);
      // afterEach checks that no unhandled rejection was recorded.
    });
  });
});

describe('toNodeHandler when something else answered first', () => {
  it('leaves a response that a timeout middleware already sent, and its promise resolves', async () => {
    let release!: () => void;
    const handlerRan: string[] = [];
    const receiver = createWebhookReceiver({ publicKey, now, onError: () => undefined })
      .onAny(async (event) => {
        await new Promise<void>((resolve) => { release = resolve; });
        handlerRan.push((event.data as { id: string }).id);
      });
    const handler = toNodeHandler(receiver);
    const settled: Array<Promise<void>> = [];
    const server = await listen((req, res) => {
      settled.push(handler(req, res));
      // A timeout middleware (connect-timeout, a proxy's deadline) answers 503 while the handler runs.
      void new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('timeout');
      });
    });
    running.push(server);
    const userId = `late-${process.pid}-${++userCounter}`;
    const body = eventBody('user.created', userId);
    const signed = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
    const answer = await fetch(`${server.url}/webhooks`, { method: 'POST', headers: signed.headers, body });
    expect(answer.status).toBe(503);
    await vi.waitFor(() => expect(release).toBeTypeOf('function'));
    release();
    await expect(Promise.all(settled)).resolves.toEqual([undefined]);
    expect(handlerRan).toEqual([userId]);
  });
});

describe('toNodeHandler when the server destroys the request mid-body without an error', () => {
  it('settles as body_incomplete, dispatching nothing (a middleware timeout that calls req.destroy())', async () => {
    const dispatched: unknown[] = [];
    const reported: WebhookErrorContext[] = [];
    const receiver = createWebhookReceiver({ publicKey, now, onError: (_error, context) => reported.push(context) })
      .onAny((event) => { dispatched.push(event); });
    const handler = toNodeHandler(receiver);
    let request: IncomingMessage | undefined;
    let settled: Promise<number> | undefined;
    const server = await listen((req, res) => {
      request = req;
      settled = handler(req, res).then(() => res.statusCode);
    });
    running.push(server);
    const body = eventBody('user.created', `destroyed-${process.pid}-${++userCounter}`);
    const { headers } = await signWebhook({ rawBody: body, privateKey, timestamp: NOW_SECONDS });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(`POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n' + body.slice(0, 10));
    await vi.waitFor(() => expect(request).toBeDefined());
    request!.destroy();
    await expect(settled).resolves.toBe(400);
    socket.destroy();
    expect(dispatched).toEqual([]);
    expect(reported).toEqual([]);
  });
});
