import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { PublicKeyFetchError, WebhookSignatureError, createPublicKeyProvider, signWebhook } from '@capi/webhook-signature';
import Fastify from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDurableObjectDeadLetterStore, createDurableObjectDedupeStore } from '../src/durable-object.js';
import { createMemoryDeadLetterStore, createMemoryDedupeStore, createRedisDeadLetterStore, createRedisDedupeStore, createWebhookReceiver, toNodeHandler, WebhookReceiverError, type DedupeStore, type WebhookErrorContext } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, type RunningServer } from './helpers/servers.js';

let service: FakeService;
const running: RunningServer[] = [];

beforeAll(async () => {
  service = await createFakeService();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function signedRequest(body: string, init: RequestInit = {}): Promise<Request> {
  const { headers } = await signWebhook({ rawBody: body, privateKey: service.privateKey });
  return new Request('http://127.0.0.1/webhooks', { method: 'POST', headers, body, ...init });
}

// Never called: the option checks come first.
const redisCommand = async () => null;
const namespace = { idFromName: (name: string) => name, get: () => ({ fetch: async () => new Response('{}') }) };

describe('rejects wrong options at creation with invalid_options naming the option', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['no options', () => createWebhookReceiver(undefined as never), /needs an options object/],
    ['no publicKey', () => createWebhookReceiver({} as never), /publicKey is required/],
    ['a misspelt option (JavaScript has no type check)', () => createWebhookReceiver({ publicKey: service.publicKey, toleranceSecond: 5 } as never), /createWebhookReceiver has no option "toleranceSecond"; did you mean toleranceSeconds\? Its options: publicKey, toleranceSeconds,/],
    ['an option of another library', () => createWebhookReceiver({ publicKey: service.publicKey, logger: console } as never), /createWebhookReceiver has no option "logger"\. Its options: .*onError\.$/],
    ['maxBodyBytes of 0', () => createWebhookReceiver({ publicKey: service.publicKey, maxBodyBytes: 0 }), /maxBodyBytes must be a positive integer/],
    ['a negative tolerance', () => createWebhookReceiver({ publicKey: service.publicKey, toleranceSeconds: -1 }), /toleranceSeconds must be a number of seconds >= 0/],
    ['a dedupe store without release', () => createWebhookReceiver({ publicKey: service.publicKey, dedupe: { claim: () => ({ state: 'processed' }) } as never }), /dedupe must be a store with claim, markProcessed and release/],
    ['acknowledgeEarly given as the string "false"', () => createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: 'false' as never }), /acknowledgeEarly must be true or false, got "false"/],
    ['a subjectWaitMs past the service\'s 30 s', () => createWebhookReceiver({ publicKey: service.publicKey, subjectWaitMs: 30_001 }), /subjectWaitMs must be an integer number of ms from 0 to 30000 \(the service waits 30 s for an answer\), got 30001/],
    ['a negative subjectWaitMs', () => createWebhookReceiver({ publicKey: service.publicKey, subjectWaitMs: -1 }), /subjectWaitMs must be an integer number of ms from 0 to 30000/],
    ['subjectWaitMs given as a string', () => createWebhookReceiver({ publicKey: service.publicKey, subjectWaitMs: '100' as never }), /subjectWaitMs must be an integer number of ms from 0 to 30000 .*got "100"/],
    ['strict given as a number', () => createWebhookReceiver({ publicKey: service.publicKey, strict: 1 as never }), /strict must be true or false, got 1/],
    ['a dead-letter store without list', () => createWebhookReceiver({ publicKey: service.publicKey, deadLetters: { put: () => undefined, delete: () => undefined } as never }), /deadLetters must be a store with put, list and delete/],
    ['an onInvalidEvent that is not a function', () => createWebhookReceiver({ publicKey: service.publicKey, onInvalidEvent: true as never }), /onInvalidEvent must be a function/],
    ['a validator that is not a function', () => createWebhookReceiver({ publicKey: service.publicKey, validator: {} as never }), /validator must be a function/],
    ['an onError that is not a function', () => createWebhookReceiver({ publicKey: service.publicKey, onError: 'log' as never }), /onError must be a function/],
    ['a handler for an event type the SDK does not know', () => createWebhookReceiver({ publicKey: service.publicKey }).on('account.frozen' as never, () => undefined), /not an event type this SDK version knows; handle new kinds with onUnknownEvent/],
    ['a handler that is not a function', () => createWebhookReceiver({ publicKey: service.publicKey }).on('user.created', undefined as never), /needs a handler function/],
    ['toNodeHandler given something other than a receiver', () => toNodeHandler({} as never), /toNodeHandler\(receiver\) needs the receiver that createWebhookReceiver/],
    ['toNodeHandler given nothing', () => toNodeHandler(undefined as never), /toNodeHandler\(receiver\) needs the receiver/],
    // The stores refuse names they do not take too: a misspelt minRetryDelayMs kept its default.
    ['a misspelt memory store option', () => createMemoryDedupeStore({ minRetryDelay: 1 } as never), /createMemoryDedupeStore has no option "minRetryDelay"; did you mean minRetryDelayMs\? Its options: ttlMs, claimTtlMs,/],
    ['a misspelt Redis store option', () => createRedisDedupeStore({ client: redisCommand, keyprefix: 'eu:' } as never), /createRedisDedupeStore has no option "keyprefix"; did you mean keyPrefix\?/],
    ['a misspelt Durable Object store option', () => createDurableObjectDedupeStore({ namespace, claimTTL: 5 } as never), /createDurableObjectDedupeStore has no option "claimTTL"; did you mean claimTtlMs\?/],
    ['a misspelt memory dead-letter store option', () => createMemoryDeadLetterStore({ maxEntires: 5 } as never), /createMemoryDeadLetterStore has no option "maxEntires"; did you mean maxEntries\?/],
    ['a misspelt Redis dead-letter store option', () => createRedisDeadLetterStore({ client: redisCommand, commandTimeout: 5 } as never), /createRedisDeadLetterStore has no option "commandTimeout"; did you mean commandTimeoutMs\?/],
    ['an unknown Durable Object dead-letter store option', () => createDurableObjectDeadLetterStore({ namespace, ttlMs: 5 } as never), /createDurableObjectDeadLetterStore has no option "ttlMs"\. Its options: namespace, keyPrefix\.$/],
  ];
  it.each(cases)('throws for %s', (_name, create, message) => {
    expect(create).toThrow(WebhookReceiverError);
    expect(create).toThrow(message);
    try { create(); } catch (error) { expect((error as WebhookReceiverError).code).toBe('invalid_options'); }
  });
});

describe('bounds subjectWaitMs by the service\'s reply window, read from the dedupe store (its replyWindowMs)', () => {
  const create = (dedupe: DedupeStore, subjectWaitMs?: number) => () => createWebhookReceiver({ publicKey: service.publicKey, dedupe, subjectWaitMs });
  const refused = (create: () => unknown, message: RegExp) => {
    expect(create).toThrow(WebhookReceiverError);
    expect(create).toThrow(message);
    try { create(); } catch (error) { expect((error as WebhookReceiverError).code).toBe('invalid_options'); }
  };

  it('refuses a subjectWaitMs past a store\'s shorter window (a sandbox\'s --delivery-timeout 200), naming it, and takes one up to it', () => {
    const dedupe = createMemoryDedupeStore({ replyWindowMs: 200 });
    refused(create(dedupe, 201), /^subjectWaitMs must be an integer number of ms from 0 to 200 \(the service waits 200 ms for an answer: the dedupe store's replyWindowMs\), got 201\.$/);
    expect(create(dedupe, 200)).not.toThrow();
  });

  it('takes a subjectWaitMs past 30 s when the store\'s window is longer (60 s), up to that window', () => {
    const dedupe = createMemoryDedupeStore({ replyWindowMs: 60_000 });
    expect(create(dedupe, 45_000)).not.toThrow();
    refused(create(dedupe, 60_001), /^subjectWaitMs must be an integer number of ms from 0 to 60000 \(the service waits 60000 ms for an answer: the dedupe store's replyWindowMs\), got 60001\.$/);
  });

  it('counts 30 s for a store without replyWindowMs (one a partner wrote), and refuses a store whose replyWindowMs is not a whole number of ms above 0', () => {
    const partnerStore = (replyWindowMs?: unknown): DedupeStore => ({
      claim: () => ({ state: 'claimed', token: 't' }), markProcessed: () => undefined, release: () => undefined,
      ...(replyWindowMs === undefined ? {} : { replyWindowMs: replyWindowMs as number }),
    });
    expect(create(partnerStore(), 30_000)).not.toThrow();
    refused(create(partnerStore(), 30_001), /subjectWaitMs must be an integer number of ms from 0 to 30000 \(the service waits 30 s for an answer\), got 30001/);
    refused(create(partnerStore('200')), /^The dedupe store's replyWindowMs must be a whole number of ms above 0 .*got string\.$/);
    refused(create(partnerStore(0)), /^The dedupe store's replyWindowMs must be a whole number of ms above 0 .*got 0\.$/);
  });

  it('waits a third of a store\'s shorter window by default (600 ms: 200 ms) before answering 409, not 10 s', async () => {
    const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe: createMemoryDedupeStore({ replyWindowMs: 600 }), onError: (error, context) => { reports.push({ error, context }); } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => { started = resolve; });
    receiver.on('user.created', async () => { started(); await held; });
    const body = eventBody('user.created', 'short-window');
    const first = service.receive(receiver, body);
    await handlerStarted;
    const began = Date.now();
    expect(await service.receive(receiver, body)).toEqual({ status: 409, code: 'duplicate_in_progress' });
    expect(Date.now() - began).toBeLessThan(5_000);
    release();
    expect(await first).toEqual({ status: 200, code: 'processed' });
    const waits = reports.filter(({ error }) => (error as { code?: unknown }).code === 'subject_wait_exceeded').map(({ error }) => (error as Error).message);
    expect(waits).toEqual([expect.stringContaining('(subjectWaitMs 200) while an earlier event of its subject was still being handled')]);
    expect(waits[0]).toContain('or raise it (at most 600).');
  });
});

describe('says which adapter to use when a request of the other kind is passed', () => {
  it('receiver.handle given a node:http request (Express) rejects with invalid_options naming toNodeHandler', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey });
    let failure: unknown;
    const server = createServer((req, res) => {
      receiver.handle(req as never).then(() => res.end(), (error: unknown) => { failure = error; res.statusCode = 500; res.end(); });
    });
    running.push(await listen(server));
    const answer = await fetch(running[0]!.url, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(500);
    expect(failure).toBeInstanceOf(WebhookReceiverError);
    expect(failure).toMatchObject({ code: 'invalid_options', message: expect.stringContaining('serve toNodeHandler(receiver) instead') });
  });

  it('the handler from toNodeHandler given a Web Request rejects with invalid_options naming receiver.handle', async () => {
    const handler = toNodeHandler(createWebhookReceiver({ publicKey: service.publicKey }));
    const request = await signedRequest(eventBody('user.created', 'user-1'));
    await expect(handler(request as never, {} as never)).rejects.toMatchObject({
      code: 'invalid_options', message: expect.stringContaining('call receiver.handle(request) instead'),
    });
  });
});

/** A key endpoint serving the service's key, or answering 502 while `failing`. */
async function keyEndpointThatFails(failing: boolean): Promise<{ url: string; failing: boolean }> {
  const endpoint = { url: '', failing };
  const server = await listen(createServer((_req, res) => {
    if (endpoint.failing) return void res.writeHead(502).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, publicKey: service.publicKey }));
  }));
  running.push(server);
  endpoint.url = `${server.url}/api/v1/public-key`;
  return endpoint;
}

describe('takes the public key from the key endpoint through a provider', () => {
  it('verifies with the key the endpoint serves, and answers 503 public_key_unavailable while it fails', async () => {
    let keyEndpointUp = true;
    const keyServer = await listen(createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(keyEndpointUp ? { success: true, publicKey: service.publicKey } : { success: false, publicKey: '' }));
    }));
    running.push(keyServer);
    const reported: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    const receiver = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: `${keyServer.url}/api/v1/public-key` }),
      onError: (error, context) => reported.push({ error, context }),
    });
    expect((await receiver.handle(await signedRequest(eventBody('user.created', 'p1')))).status).toBe(200);

    keyEndpointUp = false;
    const receiverWithoutKey = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: `${keyServer.url}/api/v1/public-key` }),
      onError: (error, context) => reported.push({ error, context }),
    });
    const response = await receiverWithoutKey.handle(await signedRequest(eventBody('user.created', 'p2')));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'public_key_unavailable' });
    expect(reported).toHaveLength(1);
    expect(reported[0]!.error).toBeInstanceOf(PublicKeyFetchError);
    expect(reported[0]!.context.outcome).toBe('public_key_unavailable');
  });

  it('starts without the key when its first fetch fails (the receiving guide: catch it and listen anyway), answers 503 meanwhile, and processes the retry once the endpoint answers', async () => {
    const keyEndpoint = await keyEndpointThatFails(true);
    const publicKey = createPublicKeyProvider({ url: keyEndpoint.url });
    await expect(publicKey.get()).rejects.toBeInstanceOf(PublicKeyFetchError);
    const receiver = createWebhookReceiver({ publicKey, onError: () => {} });
    const body = eventBody('user.created', 'boot1');
    const refused = await receiver.handle(await signedRequest(body));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'public_key_unavailable' });
    keyEndpoint.failing = false;
    const retried = await receiver.handle(await signedRequest(body));
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ code: 'processed' });
  });

  it('keeps processing with the key it has when the key endpoint goes down after the cache TTL, and reports nothing', async () => {
    const keyEndpoint = await keyEndpointThatFails(false);
    let clock = Date.now();
    const reported: string[] = [];
    const receiver = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: keyEndpoint.url, now: () => clock }),
      onError: (_error, context) => reported.push(context.outcome),
    });
    expect((await receiver.handle(await signedRequest(eventBody('user.created', 's1')))).status).toBe(200);
    keyEndpoint.failing = true;
    clock += 2 * 3_600_000;
    expect((await receiver.handle(await signedRequest(eventBody('user.created', 's2')))).status).toBe(200);
    expect(reported).toEqual([]);
  });

  it('answers 503 public_key_unavailable too for a provider from another copy of @capi/webhook-signature (its CommonJS build)', async () => {
    const otherCopy = createRequire(import.meta.url)('@capi/webhook-signature') as typeof import('@capi/webhook-signature');
    const keyServer = await listen(createServer((_req, res) => { res.writeHead(200).end(JSON.stringify({ success: false })); }));
    running.push(keyServer);
    const reported: string[] = [];
    const receiver = createWebhookReceiver({
      publicKey: otherCopy.createPublicKeyProvider({ url: `${keyServer.url}/api/v1/public-key` }),
      onError: (_error, context) => reported.push(context.outcome),
    });
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'p3')));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'public_key_unavailable' });
    expect(reported).toEqual(['public_key_unavailable']);
  });
});

describe('answers 500 when the receiver itself is misconfigured, so that deliveries wait for the fix', () => {
  it('answers 500 receiver_misconfigured for a public key that is not a key, and reports invalid_public_key', async () => {
    const reported: unknown[] = [];
    const receiver = createWebhookReceiver({ publicKey: 'not-a-key', onError: (error) => reported.push(error) });
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'm1')));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: 'receiver_misconfigured' });
    expect(reported[0]).toBeInstanceOf(WebhookSignatureError);
    expect(reported[0]).toMatchObject({ code: 'invalid_public_key' });
  });

  it('answers 500 body_already_consumed for a Request whose body was read before handle', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: () => undefined });
    const request = await signedRequest(eventBody('user.created', 'm2'));
    await request.text();
    const response = await receiver.handle(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: 'body_already_consumed', message: expect.stringContaining('Pass the untouched Request') });
  });

  it('answers 500 body_already_consumed when something read the Node request stream before toNodeHandler', async () => {
    const reported: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (_error, context) => reported.push(context.outcome) });
    const handleWebhook = toNodeHandler(receiver);
    const server = await listen(createServer(async (req, res) => {
      for await (const chunk of req) void chunk; // a middleware that drains the body without setting req.body
      await handleWebhook(req, res);
    }));
    running.push(server);
    const reply = await service.deliver(`${server.url}/webhooks`, eventBody('user.created', 'drained'));
    expect(reply.status).toBe(500);
    expect(reply.body).toMatchObject({ code: 'body_already_consumed', message: expect.stringContaining('request stream was already read') });
    expect(reported).toEqual(['body_already_consumed']);
  });

  it('answers 500 internal_error when a server adapter fails unexpectedly, and reports it', async () => {
    const failure = new Error('socket reset');
    const reported: Array<[unknown, string]> = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (error, context) => reported.push([error, context.outcome]) });
    const { reply } = await receiver.receive({ method: 'POST', header: () => undefined, readRawBody: () => Promise.reject(failure) });
    expect(reply.status).toBe(500);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'internal_error' });
    expect(reported).toEqual([[failure, 'internal_error']]);
  });
});

describe('keeps acknowledged work alive through waitUntil on runtimes that freeze after the reply', () => {
  it('hands the handlers still running after a 202 to waitUntil', async () => {
    const handled: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true })
      .onAny(async (event) => { await new Promise((resolve) => setImmediate(resolve)); handled.push(event.data.id as string); });
    const pending: Array<Promise<unknown>> = [];
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'w1')), { waitUntil: (work) => pending.push(work) });
    expect(response.status).toBe(202);
    expect(pending).toHaveLength(1);
    await pending[0];
    expect(handled).toEqual(['w1']);
  });

  it('calls waitUntil on the options object, so that handle(request, ctx) keeps ctx as its this', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true }).onAny(() => undefined);
    const ctx = { kept: [] as Array<Promise<unknown>>, waitUntil(this: { kept: Array<Promise<unknown>> }, work: Promise<unknown>) { this.kept.push(work); } };
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'w2')), ctx);
    expect(response.status).toBe(202);
    expect(ctx.kept).toHaveLength(1);
  });

  it('refuses a waitUntil that is not a function, or options that are not an object, with invalid_options before reading the body', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true });
    const request = await signedRequest(eventBody('user.created', 'w3'));
    await expect(receiver.handle(request, { waitUntil: 'later' } as never)).rejects.toThrow(
      expect.objectContaining({ name: 'WebhookReceiverError', code: 'invalid_options', message: expect.stringMatching(/waitUntil to be a function \(Workers: ctx\.waitUntil\.bind\(ctx\)\), got string/) }));
    await expect(receiver.handle(request, 'ctx' as never)).rejects.toThrow(/takes an options object \(\{ waitUntil \}\), got string/);
    expect(request.bodyUsed).toBe(false);
  });

  it('still acknowledges early without waitUntil on Node (a long-lived process keeps the handlers running), and reports nothing', async () => {
    const errors: unknown[] = [];
    let handled!: (id: string) => void;
    const ran = new Promise<string>((resolve) => { handled = resolve; });
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, onError: (error) => void errors.push(error) })
      .onAny(async (event) => { await new Promise((resolve) => setTimeout(resolve, 20)); handled(event.data.id as string); });
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'w4')));
    expect(response.status).toBe(202);
    expect(await ran).toBe('w4');
    expect(errors).toEqual([]);
  });
});

describe('acknowledges early: the 202 is written before any handler code runs', () => {
  it('through toNodeHandler, even when the handler is synchronous', async () => {
    const order: string[] = [];
    let handlerRan!: () => void;
    const ran = new Promise<void>((resolve) => { handlerRan = resolve; });
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true })
      .onAny(() => { order.push('handler'); handlerRan(); });
    const handleWebhook = toNodeHandler(receiver);
    const server = await listen((req, res) => {
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
      res.writeHead = ((...args: unknown[]) => { order.push('reply'); return writeHead(...args); }) as typeof res.writeHead;
      void handleWebhook(req, res);
    });
    running.push(server);
    expect((await service.deliver(`${server.url}/webhooks`, eventBody('user.created', 'e1'))).status).toBe(202);
    await ran;
    expect(order).toEqual(['reply', 'handler']);
  });

  it('through handle(request): the Response is returned before the handler starts', async () => {
    const order: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true })
      .onAny(() => { order.push('handler'); });
    const afterReply: Array<Promise<unknown>> = [];
    const response = await receiver.handle(await signedRequest(eventBody('user.created', 'e2')), { waitUntil: (work) => afterReply.push(work) });
    order.push('reply');
    expect(response.status).toBe(202);
    await Promise.all(afterReply);
    expect(order).toEqual(['reply', 'handler']);
  });
});

describe('serves Fastify through toNodeHandler when Fastify leaves the body unread', () => {
  it('processes deliveries on a route whose content-type parser does not consume the body', async () => {
    const handled: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey }).onAny((event) => { handled.push(event.data.id as string); });
    const handleWebhook = toNodeHandler(receiver);
    const app = Fastify();
    await app.register(async (webhooks) => {
      webhooks.removeAllContentTypeParsers();
      webhooks.addContentTypeParser('*', (_request, _payload, done) => done(null));
      webhooks.post('/webhooks', async (request, reply) => {
        reply.hijack();
        await handleWebhook(request.raw, reply.raw);
      });
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    running.push({ url: address, close: () => app.close() });
    expect(await service.deliver(`${address}/webhooks`, eventBody('user.created', 'f1'))).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(handled).toEqual(['f1']);
  });
});
