import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { signWebhook } from '@capi/webhook-signature';
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createWebhookReceiver,
  toNodeHandler,
  type WebhookDelivery,
  type WebhookErrorContext,
  type WebhookEventParser,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../src/index.js';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';

let service: FakeService;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => { resolve = done; });
  return { promise, resolve };
}
const running: RunningServer[] = [];

beforeAll(async () => {
  service = await createFakeService();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

type Options = Omit<WebhookReceiverOptions, 'publicKey'>;
type Serve = (receiver: WebhookReceiver) => Promise<RunningServer>;

// The Node handler and the Web handler are one pipeline behind two adapters: every behaviour
// is checked through both, each over real HTTP.
const servings: Array<[string, Serve]> = [
  ['node:http with toNodeHandler', (receiver) => listen(toNodeHandler(receiver))],
  ['Web handle(Request) behind a node:http bridge', (receiver) => listenFetch((request) => receiver.handle(request))],
];

describe.each(servings)('over %s', (_name, serve) => {
  const errors: Array<{ error: unknown; context: WebhookErrorContext }> = [];

  async function start(options: Options = {}, setup?: (receiver: WebhookReceiver) => void): Promise<{ url: string; receiver: WebhookReceiver }> {
    errors.length = 0;
    const receiver = createWebhookReceiver({
      publicKey: service.publicKey,
      onError: (error, context) => errors.push({ error, context }),
      ...options,
    });
    setup?.(receiver);
    const server = await serve(receiver);
    running.push(server);
    return { url: `${server.url}/webhooks`, receiver };
  }

  describe('acknowledges a verified, valid event with 2xx once its handlers succeeded', () => {
    it('answers 200 processed and gives the handler the typed event and the delivery', async () => {
      const seen: Array<{ kycStatus: string; delivery: WebhookDelivery }> = [];
      const { url } = await start({}, (receiver) =>
        receiver.on('kyc.status.changed', (event, delivery) => { seen.push({ kycStatus: event.data.kycStatus, delivery }); }));
      const body = eventBody('kyc.status.changed', 'u1', { kycStatus: 'pending' });
      const timestamp = Math.floor(Date.now() / 1000);
      const reply = await service.deliver(url, body, { timestamp });
      expect(reply).toEqual({ status: 200, body: { code: 'processed', message: 'The event was processed.' } });
      expect(seen).toEqual([{ kycStatus: 'pending', delivery: { timestamp, bodySha256: createHash('sha256').update(body).digest('hex'), receivedAt: expect.any(Number) } }]);
      expect(Math.abs(seen[0]!.delivery.receivedAt - Date.now())).toBeLessThan(10_000);
    });

    it('runs the handlers of the event type and the onAny handlers, in registration order, and no others', async () => {
      const calls: string[] = [];
      const { url } = await start({}, (receiver) => receiver
        .on('user.created', () => { calls.push('user.created #1'); })
        .onAny((event) => { calls.push(`any ${event.eventType}`); })
        .on('kyc.status.changed', () => { calls.push('kyc.status.changed'); })
        .on('user.created', async () => { calls.push('user.created #2'); }));
      expect((await service.deliver(url, eventBody('user.created', 'u2'))).status).toBe(200);
      expect(calls).toEqual(['user.created #1', 'any user.created', 'user.created #2']);
    });
  });

  describe('rejects a missing or invalid signature with 401', () => {
    it('answers 401 missing_signature without the signature header', async () => {
      const { url } = await start();
      const response = await fetch(url, { method: 'POST', headers: { 'X-Webhook-Timestamp': String(Math.floor(Date.now() / 1000)) }, body: eventBody('user.created', 'u') });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'missing_signature' });
    });

    it('answers 401 missing_timestamp without the timestamp header', async () => {
      const { url } = await start();
      const response = await fetch(url, { method: 'POST', headers: { 'X-Webhook-Signature': 'A'.repeat(86) + '==' }, body: eventBody('user.created', 'u') });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'missing_timestamp' });
    });

    it('answers 401 invalid_signature when the body was changed after signing', async () => {
      const handled: unknown[] = [];
      const { url } = await start({}, (receiver) => receiver.onAny((event) => { handled.push(event); }));
      const body = eventBody('user.created', 'u3');
      const signed = await import('@capi/webhook-signature').then(({ signWebhook }) => signWebhook({ rawBody: body, privateKey: service.privateKey }));
      const response = await fetch(url, { method: 'POST', headers: signed.headers, body: body.replace('u3', 'u4') });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'invalid_signature' });
      expect(handled).toEqual([]);
    });

    it('answers 401 invalid_signature for a body signed by another key', async () => {
      const { url } = await start();
      const impostor = await createFakeService();
      expect(await impostor.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 401, body: { code: 'invalid_signature' } });
    });

    it('answers 401 malformed_signature for a signature that is not base64 of 64 bytes', async () => {
      const { url } = await start();
      const reply = await service.deliver(url, eventBody('user.created', 'u'), { headers: { 'X-Webhook-Signature': 'not-a-signature' } });
      expect(reply).toMatchObject({ status: 401, body: { code: 'malformed_signature' } });
    });
  });

  describe('rejects a timestamp outside the tolerance with 401', () => {
    it('answers 401 timestamp_too_old for a delivery signed 301 s ago with the default 300 s tolerance', async () => {
      const { url } = await start();
      const reply = await service.deliver(url, eventBody('user.created', 'u'), { timestamp: Math.floor(Date.now() / 1000) - 301 });
      expect(reply).toMatchObject({ status: 401, body: { code: 'timestamp_too_old' } });
    });

    it('answers 401 timestamp_in_future for a delivery dated beyond the tolerance', async () => {
      const { url } = await start({ toleranceSeconds: 60 });
      const reply = await service.deliver(url, eventBody('user.created', 'u'), { timestamp: Math.floor(Date.now() / 1000) + 120 });
      expect(reply).toMatchObject({ status: 401, body: { code: 'timestamp_in_future' } });
    });

    it('answers 401 malformed_timestamp for a timestamp in milliseconds or with non-digits', async () => {
      const { url } = await start();
      const reply = await service.deliver(url, eventBody('user.created', 'u'), { headers: { 'X-Webhook-Timestamp': '17e8' } });
      expect(reply).toMatchObject({ status: 401, body: { code: 'malformed_timestamp' } });
    });
  });

  describe('never answers an authentic body 4xx: one the schema refuses is answered 500 when no code took it', () => {
    it('answers 500 invalid_event_unhandled for a signed body that is not JSON, and tells onError', async () => {
      const { url } = await start();
      expect(await service.deliver(url, '{"eventType": "user.created", ')).toMatchObject({ status: 500, body: { code: 'invalid_event_unhandled' } });
      expect(errors).toHaveLength(1);
      expect(errors[0]!.error).toMatchObject({ name: 'InvalidWebhookEventError', errors: [expect.objectContaining({ keyword: 'json' })] });
    });

    it('names the offending field in the reply', async () => {
      const { url } = await start();
      const body = JSON.stringify({ eventType: 'kyc.status.changed', data: { ...JSON.parse(eventBody('user.created', 'u')).data, kycStatus: 'sleeping' } });
      const reply = await service.deliver(url, body);
      expect(reply.status).toBe(500);
      expect(reply.body.code).toBe('invalid_event_unhandled');
      expect(reply.body.message).toContain('/data/kycStatus');
    });

    it('answers 500 invalid_event_unhandled for an event without data', async () => {
      const { url } = await start();
      expect(await service.deliver(url, '{"eventType":"user.created"}')).toMatchObject({ status: 500, body: { code: 'invalid_event_unhandled' } });
    });
  });

  describe('rejects a body over maxBodyBytes with 413 and stops reading it', () => {
    it('answers 413 from the Content-Length alone', async () => {
      const { url } = await start({ maxBodyBytes: 1024 });
      const reply = await service.deliver(url, eventBody('user.created', 'u', { address2: 'x'.repeat(2048) }));
      expect(reply).toMatchObject({ status: 413, body: { code: 'body_too_large' } });
    });

    it('answers 413 to a chunked body as soon as maxBodyBytes is passed, while the sender is still sending', async () => {
      const { url } = await start({ maxBodyBytes: 1024 });
      // The request is never ended: a 413 can only arrive if the receiver stopped reading early.
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(url, { method: 'POST', headers: { 'transfer-encoding': 'chunked', 'X-Webhook-Timestamp': '1', 'X-Webhook-Signature': 'x' } });
        request.on('response', (response) => { resolve(response.statusCode ?? 0); response.resume(); request.destroy(); });
        request.on('error', reject);
        request.write('x'.repeat(4096));
      });
      expect(status).toBe(413);
    });
  });

  describe('rejects a method other than POST with 405', () => {
    it.each(['GET', 'PUT', 'DELETE'])('answers 405 to %s with Allow: POST', async (method) => {
      const { url } = await start();
      const response = await fetch(url, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toMatchObject({ code: 'method_not_allowed' });
    });
  });

  describe('acknowledges an unknown event type with 2xx and gives it to onUnknownEvent', () => {
    it('answers 200 unknown_event_type, calls onUnknownEvent once per body and no handler', async () => {
      const unknown: unknown[] = [];
      const handled: unknown[] = [];
      const { url } = await start({ onUnknownEvent: (event, delivery) => { unknown.push({ eventType: event.eventType, data: event.data, sha: delivery.bodySha256.length }); } },
        (receiver) => receiver.onAny((event) => { handled.push(event); }));
      const body = JSON.stringify({ eventType: 'account.frozen', data: { id: 'u9' } });
      expect(await service.deliver(url, body)).toMatchObject({ status: 200, body: { code: 'unknown_event_type' } });
      expect(await service.deliver(url, body)).toMatchObject({ status: 200, body: { code: 'duplicate' } });
      expect(unknown).toEqual([{ eventType: 'account.frozen', data: { id: 'u9' }, sha: 64 }]);
      expect(handled).toEqual([]);
    });

    it('still answers 2xx when onUnknownEvent throws, and reports the error', async () => {
      const { url } = await start({ onUnknownEvent: () => { throw new Error('no table for it'); } });
      const reply = await service.deliver(url, JSON.stringify({ eventType: 'account.frozen', data: {} }));
      expect(reply.status).toBe(200);
      expect(errors.map(({ context }) => context.outcome)).toEqual(['unknown_event_type']);
    });
  });

  describe('answers 500 when a handler throws and releases the claim so that the retry is processed', () => {
    it('answers 500 handler_failed, reports the error, then processes the retry', async () => {
      let attempts = 0;
      const processed: string[] = [];
      const { url } = await start({}, (receiver) => receiver.on('user.created', (event) => {
        attempts += 1;
        if (attempts === 1) throw new Error('database down');
        processed.push(event.data.id);
      }));
      const body = eventBody('user.created', 'u5');
      const replies = await service.deliverUntilAcknowledged(url, body);
      expect(replies.map((reply) => reply.status)).toEqual([500, 200]);
      expect(replies[0]!.body.code).toBe('handler_failed');
      expect(processed).toEqual(['u5']);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.context).toMatchObject({ outcome: 'handler_failed', afterReply: false });
      expect((errors[0]!.error as Error).message).toBe('database down');
    });
  });

  describe('dispatches duplicates once', () => {
    it('answers 200 duplicate to a re-signed retry of a processed body without calling the handler', async () => {
      const processed: string[] = [];
      const { url } = await start({}, (receiver) => receiver.onAny((event) => { processed.push(event.data.id as string); }));
      const body = eventBody('kyc.phone-validation.changed', 'u6');
      expect((await service.deliver(url, body)).body.code).toBe('processed');
      expect(await service.deliver(url, body, { timestamp: Math.floor(Date.now() / 1000) + 5 })).toMatchObject({ status: 200, body: { code: 'duplicate' } });
      expect(processed).toEqual(['u6']);
    });

    it('makes a copy that arrives while the first is being handled wait for it, then answers it 200 duplicate without dispatching it', async () => {
      const handlerStarted = deferred();
      const handlerMayFinish = deferred();
      let calls = 0;
      const { url } = await start({}, (receiver) => receiver.onAny(async () => {
        calls += 1;
        handlerStarted.resolve();
        await handlerMayFinish.promise;
      }));
      const body = eventBody('user.created', 'u7');
      const first = service.deliver(url, body);
      await handlerStarted.promise;
      const copy = service.deliver(url, body);
      handlerMayFinish.resolve();
      expect((await first).body.code).toBe('processed');
      expect(await copy).toMatchObject({ status: 200, body: { code: 'duplicate' } });
      expect(calls).toBe(1);
    });

    it('answers that copy 409 duplicate_in_progress at once with subjectWaitMs 0', async () => {
      const handlerStarted = deferred();
      const handlerMayFinish = deferred();
      const { url } = await start({ subjectWaitMs: 0 }, (receiver) => receiver.onAny(async () => {
        handlerStarted.resolve();
        await handlerMayFinish.promise;
      }));
      const body = eventBody('user.created', 'u7b');
      const first = service.deliver(url, body);
      await handlerStarted.promise;
      expect(await service.deliver(url, body)).toMatchObject({ status: 409, body: { code: 'duplicate_in_progress' } });
      handlerMayFinish.resolve();
      expect((await first).status).toBe(200);
      expect(await service.deliver(url, body)).toMatchObject({ status: 200, body: { code: 'duplicate' } });
    });

    it('dispatches an event that brings a subject back to an earlier state (A -> B -> A gives three dispatches), and not a retry of the latest', async () => {
      const seen: boolean[] = [];
      const { url } = await start({}, (receiver) => receiver.on('kyc.phone-validation.changed', (event) => { seen.push(event.data.isPhoneValidated); }));
      const validated = eventBody('kyc.phone-validation.changed', 'u9', { isPhoneValidated: true });
      const invalidated = eventBody('kyc.phone-validation.changed', 'u9', { isPhoneValidated: false });
      expect((await service.deliver(url, validated)).body.code).toBe('processed');
      expect((await service.deliver(url, invalidated)).body.code).toBe('processed');
      expect((await service.deliver(url, validated)).body.code).toBe('processed');
      expect(await service.deliver(url, validated, { timestamp: Math.floor(Date.now() / 1000) + 5 })).toMatchObject({ status: 200, body: { code: 'duplicate' } });
      expect(seen).toEqual([true, false, true]);
    });

    it('dispatches pending -> resubmissionRequested -> pending three times, and the same states of another user independently', async () => {
      const seen: string[] = [];
      const { url } = await start({}, (receiver) => receiver.on('kyc.status.changed', (event) => { seen.push(`${event.data.id}:${event.data.kycStatus}`); }));
      for (const [id, kycStatus] of [['u10', 'pending'], ['u10', 'resubmissionRequested'], ['u11', 'pending'], ['u10', 'pending']] as const) {
        expect((await service.deliver(url, eventBody('kyc.status.changed', id, { kycStatus }))).body.code).toBe('processed');
      }
      expect(seen).toEqual(['u10:pending', 'u10:resubmissionRequested', 'u11:pending', 'u10:pending']);
    });

    it('never supersedes a card transaction: the late retry of a failed one is dispatched after a later one of the same data.id, and a repeat of a processed one is a duplicate', async () => {
      let failNext = false;
      const seen: string[] = [];
      let minutesLater = 0;
      const dedupe = createMemoryDedupeStore({ now: () => Date.now() + minutesLater * 60_000 });
      const { url } = await start({ dedupe }, (receiver) => receiver.on('card.transaction.created', (event) => {
        if (failNext) { failNext = false; throw new Error('database down'); }
        seen.push(String((event.data as { amount?: unknown }).amount));
      }));
      // The payload is not shown in the reference: here its data.id names the card, not the transaction.
      const transaction = (amount: number) => JSON.stringify({ eventType: 'card.transaction.created', data: { id: 'card-7', amount } });
      failNext = true;
      expect((await service.deliver(url, transaction(1200))).status).toBe(500);
      expect((await service.deliver(url, transaction(300))).body.code).toBe('processed');
      minutesLater = 1;
      expect((await service.deliver(url, transaction(1200), { timestamp: Math.floor(Date.now() / 1000) + 60 })).body.code).toBe('processed');
      expect(seen).toEqual(['300', '1200']);
      expect((await service.deliver(url, transaction(300))).body.code).toBe('duplicate');
      expect(seen).toEqual(['300', '1200']);
    });

    it('dispatches an event that repeats the state before a failed one (true, false fails, true again), and answers the late retry of the failed one superseded: the subject ends on the platform\'s state', async () => {
      let failNext = false;
      const seen: boolean[] = [];
      const superseded: boolean[] = [];
      // The store's clock moves on a minute before the service's retry, as the service waits one.
      let minutesLater = 0;
      const dedupe = createMemoryDedupeStore({ now: () => Date.now() + minutesLater * 60_000 });
      const { url } = await start({ dedupe, onSuperseded: (event) => { if (event.eventType === 'kyc.phone-validation.changed') superseded.push(event.data.isPhoneValidated); } },
        (receiver) => receiver.on('kyc.phone-validation.changed', (event) => {
          if (failNext) { failNext = false; throw new Error('database down'); }
          seen.push(event.data.isPhoneValidated);
        }));
      const validated = eventBody('kyc.phone-validation.changed', 'u12', { isPhoneValidated: true });
      const invalidated = eventBody('kyc.phone-validation.changed', 'u12', { isPhoneValidated: false });
      expect((await service.deliver(url, validated)).body.code).toBe('processed');
      failNext = true;
      expect((await service.deliver(url, invalidated)).status).toBe(500);
      // The user validated the phone again before the service retried `false`: a new event.
      expect((await service.deliver(url, validated)).body.code).toBe('processed');
      // The service's retry of `false` comes after it: handled, it would leave the partner on
      // `false` while the platform says `true`. Acknowledged, not dispatched, given to onSuperseded.
      minutesLater = 1;
      expect(await service.deliver(url, invalidated, { timestamp: Math.floor(Date.now() / 1000) + 60 })).toMatchObject({ status: 200, body: { code: 'superseded' } });
      expect(seen).toEqual([true, true]);
      expect(superseded).toEqual([false]);
      // A later `false` is the user's next change: dispatched.
      minutesLater = 2;
      expect((await service.deliver(url, invalidated, { timestamp: Math.floor(Date.now() / 1000) + 120 })).body.code).toBe('processed');
      expect(seen).toEqual([true, true, false]);
    });

    it('dispatches both events when two fail in a row (a database outage): their retries are processed in turn and none is superseded', async () => {
      let down = true;
      const seen: string[] = [];
      const { url } = await start({ onError: () => undefined }, (receiver) => receiver.on('kyc.status.changed', (event) => {
        if (down) throw new Error('database down');
        seen.push(event.data.kycStatus);
      }));
      const pending = eventBody('kyc.status.changed', 'u12d', { kycStatus: 'pending' });
      const approved = eventBody('kyc.status.changed', 'u12d', { kycStatus: 'approved' });
      expect((await service.deliver(url, pending)).status).toBe(500);
      expect((await service.deliver(url, approved)).status).toBe(500);
      down = false;
      const later = Math.floor(Date.now() / 1000) + 60;
      expect((await service.deliver(url, pending, { timestamp: later })).body.code).toBe('processed');
      expect((await service.deliver(url, approved, { timestamp: later + 1 })).body.code).toBe('processed');
      expect(seen).toEqual(['pending', 'approved']);
    });

    it('processes the retry of a failed event when nothing newer of its subject came first, and supersedes nothing after a failure the reply had already acknowledged', async () => {
      let failNext = true;
      const seen: string[] = [];
      const handle = (event: { data: { kycStatus: string } }) => {
        if (failNext) { failNext = false; throw new Error('database down'); }
        seen.push(event.data.kycStatus);
      };
      const { url } = await start({}, (receiver) => receiver.on('kyc.status.changed', handle));
      const pending = eventBody('kyc.status.changed', 'u12b', { kycStatus: 'pending' });
      expect((await service.deliver(url, pending)).status).toBe(500);
      expect((await service.deliver(url, pending, { timestamp: Math.floor(Date.now() / 1000) + 60 })).body.code).toBe('processed');
      expect(seen).toEqual(['pending']);

      // acknowledgeEarly: the failure comes after the 202, so no retry will come to supersede.
      failNext = true;
      const early = await start({ acknowledgeEarly: true, onError: () => undefined }, (receiver) => receiver.on('kyc.status.changed', handle));
      const earlyPending = eventBody('kyc.status.changed', 'u12c', { kycStatus: 'pending' });
      const approved = eventBody('kyc.status.changed', 'u12c', { kycStatus: 'approved' });
      expect((await service.deliver(early.url, earlyPending)).status).toBe(202);
      await vi.waitFor(() => expect(failNext).toBe(false));
      expect((await service.deliver(early.url, approved)).status).toBe(202);
      await vi.waitFor(() => expect(seen).toEqual(['pending', 'approved']));
      expect((await service.deliver(early.url, earlyPending)).status).toBe(202);
      await vi.waitFor(() => expect(seen).toEqual(['pending', 'approved', 'pending']));
    });

    it('keeps the order of a subject\'s events that arrive while an earlier one is being handled: each waits its turn, in arrival order', async () => {
      const handlerMayFinish = deferred();
      const seen: string[] = [];
      // The validator runs just before a delivery takes its place in line: the test sends the
      // next event only once the previous one is there, so that the arrival order is certain.
      const parsed: string[] = [];
      let parsedWaiter: (() => void) | undefined;
      const validator: WebhookEventParser = (rawBody, options) => {
        const result = parseWebhookEvent(rawBody, options);
        if (result.ok) parsed.push((result.event.data as { kycStatus: string }).kycStatus);
        parsedWaiter?.();
        return result;
      };
      const parsedCount = (count: number) => new Promise<void>((resolve) => {
        parsedWaiter = () => { if (parsed.length >= count) resolve(); };
        parsedWaiter();
      });
      const { url } = await start({ validator }, (receiver) => receiver.on('kyc.status.changed', async (event) => {
        seen.push(event.data.kycStatus);
        if (event.data.kycStatus === 'pending') await handlerMayFinish.promise;
      }));
      const replies: Array<Promise<Awaited<ReturnType<typeof service.deliver>>>> = [];
      for (const [index, kycStatus] of (['pending', 'resubmissionRequested', 'approved'] as const).entries()) {
        replies.push(service.deliver(url, eventBody('kyc.status.changed', 'u13', { kycStatus })));
        await parsedCount(index + 1);
      }
      expect(seen).toEqual(['pending']);
      handlerMayFinish.resolve();
      expect((await Promise.all(replies)).map((reply) => reply.body.code)).toEqual(['processed', 'processed', 'processed']);
      expect(seen).toEqual(['pending', 'resubmissionRequested', 'approved']);
    });

    it('answers 409 duplicate_in_progress to an event still waiting after subjectWaitMs, tells onError (subject_wait_exceeded), and processes its retry', async () => {
      const handlerStarted = deferred();
      const handlerMayFinish = deferred();
      const seen: boolean[] = [];
      const reported: Array<{ error: unknown; outcome: string }> = [];
      const onError = (error: unknown, { outcome }: { outcome: string }) => void reported.push({ error, outcome });
      const { url } = await start({ subjectWaitMs: 200, onError }, (receiver) => receiver.on('kyc.phone-validation.changed', async (event) => {
        seen.push(event.data.isPhoneValidated);
        handlerStarted.resolve();
        if (event.data.isPhoneValidated) await handlerMayFinish.promise;
      }));
      const first = service.deliver(url, eventBody('kyc.phone-validation.changed', 'u14', { isPhoneValidated: true }));
      await handlerStarted.promise;
      const later = eventBody('kyc.phone-validation.changed', 'u14', { isPhoneValidated: false });
      expect(await service.deliver(url, later)).toMatchObject({ status: 409, body: { code: 'duplicate_in_progress' } });
      // The partner learns why the event comes late, and what to change.
      expect(reported).toEqual([{ outcome: 'duplicate_in_progress', error: expect.objectContaining({ code: 'subject_wait_exceeded' }) }]);
      expect((reported[0]!.error as Error).message).toMatch(/^A delivery of kyc\.phone-validation\.changed:u14 waited \d+ ms \(subjectWaitMs 200\) .* the service sends it again in 1, 5 or 15 minutes\. A delivery waits for every earlier handler of its subject in turn: keep their sum well under subjectWaitMs, or raise it/);
      handlerMayFinish.resolve();
      expect((await first).status).toBe(200);
      expect((await service.deliver(url, later)).body.code).toBe('processed');
      expect(seen).toEqual([true, false]);
      expect(reported).toHaveLength(1);
    });

    it('keeps the place of an event answered 409: a newer event processed before its retry supersedes it', async () => {
      const handlerStarted = deferred();
      const handlerMayFinish = deferred();
      const seen: string[] = [];
      const overtaken: string[] = [];
      const dedupe = createMemoryDedupeStore({ minRetryDelayMs: 0 });
      const { url } = await start({ subjectWaitMs: 200, dedupe, onSuperseded: (event) => { if (event.eventType === 'kyc.status.changed') overtaken.push(event.data.kycStatus); } },
        (receiver) => receiver.on('kyc.status.changed', async (event) => {
          seen.push(event.data.kycStatus);
          handlerStarted.resolve();
          if (event.data.kycStatus === 'pending') await handlerMayFinish.promise;
        }));
      const first = service.deliver(url, eventBody('kyc.status.changed', 'u15', { kycStatus: 'pending' }));
      await handlerStarted.promise;
      const approved = eventBody('kyc.status.changed', 'u15', { kycStatus: 'approved' });
      expect(await service.deliver(url, approved)).toMatchObject({ status: 409, body: { code: 'duplicate_in_progress' } });
      handlerMayFinish.resolve();
      expect((await first).status).toBe(200);
      // The user moved on before the service retried `approved`: the retry must not bring it back.
      expect((await service.deliver(url, eventBody('kyc.status.changed', 'u15', { kycStatus: 'rejected' }))).body.code).toBe('processed');
      expect(await service.deliver(url, approved)).toMatchObject({ status: 200, body: { code: 'superseded' } });
      expect(seen).toEqual(['pending', 'rejected']);
      expect(overtaken).toEqual(['approved']);
    });

    it('takes an event that waited in line for a newer event, not for the retry its wait made due', async () => {
      // A sandbox with a fast schedule (minRetryDelayMs 1 s): `pending` fails; a genuine
      // `pending` arrives at once, waits in line behind a slow `approved`, and gets the subject
      // after the retry of the first `pending` became due. It arrived long before that retry
      // could: a newer event, dispatched, not the superseded retry.
      const approvedStarted = deferred();
      const approvedMayFinish = deferred();
      const seen: string[] = [];
      let failNext = true;
      const dedupe = createMemoryDedupeStore({ minRetryDelayMs: 1_000 });
      const { url } = await start({ subjectWaitMs: 20_000, dedupe }, (receiver) => receiver.on('kyc.status.changed', async (event) => {
        if (event.data.kycStatus === 'pending' && failNext) {
          failNext = false;
          throw new Error('the partner database is down');
        }
        seen.push(event.data.kycStatus);
        if (event.data.kycStatus === 'approved') {
          approvedStarted.resolve();
          await approvedMayFinish.promise;
        }
      }));
      const pending = eventBody('kyc.status.changed', 'u16', { kycStatus: 'pending' });
      expect((await service.deliver(url, pending)).status).toBe(500);
      const approved = service.deliver(url, eventBody('kyc.status.changed', 'u16', { kycStatus: 'approved' }));
      await approvedStarted.promise;
      const again = service.deliver(url, pending);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // past the first retry's wait
      approvedMayFinish.resolve();
      expect((await approved).body.code).toBe('processed');
      expect((await again).body.code).toBe('processed');
      expect(seen).toEqual(['approved', 'pending']);
    });

    it('dispatches every delivery when dedupe is false', async () => {
      let calls = 0;
      const { url } = await start({ dedupe: false }, (receiver) => receiver.onAny(() => { calls += 1; }));
      const body = eventBody('user.created', 'u8');
      await service.deliver(url, body);
      await service.deliver(url, body);
      expect(calls).toBe(2);
    });
  });

  describe('answers 503 when the dedupe store is unreachable (fail closed)', () => {
    it('answers 503 dedupe_store_unavailable, does not dispatch, and reports the store error', async () => {
      const outage = new Error('store down');
      let calls = 0;
      const { url } = await start({ dedupe: { claim: () => Promise.reject(outage), markProcessed: () => undefined, release: () => undefined } },
        (receiver) => receiver.onAny(() => { calls += 1; }));
      expect(await service.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 503, body: { code: 'dedupe_store_unavailable' } });
      expect(calls).toBe(0);
      expect(errors).toEqual([{ error: outage, context: expect.objectContaining({ outcome: 'dedupe_store_unavailable' }) }]);
    });
  });

  // The stages after verification continue at once when a store or handler answers
  // synchronously, and wait when it answers with a promise: the outcomes are the same either way.
  describe('gives the same outcome whether a store or a handler answers at once, with a promise or with a thenable', () => {
    const answers = {
      'at once': <T>(value: () => T) => value(),
      'with a promise': <T>(value: () => T) => new Promise<T>((resolve) => setTimeout(resolve, 2)).then(value),
      'with a thenable': <T>(value: () => T) => ({ then: (done: (result: T) => void, failed: (error: unknown) => void) => { try { done(value()); } catch (error) { failed(error); } } }),
    };
    const storeDown = (): never => { throw new Error('store down'); };

    describe.each(Object.entries(answers))('%s', (_how, answer) => {
      it('answers 503 when the claim fails, and dispatches nothing', async () => {
        let calls = 0;
        const { url } = await start({ dedupe: { claim: () => answer(storeDown) as never, markProcessed: () => undefined, release: () => undefined } },
          (receiver) => receiver.onAny(() => { calls += 1; }));
        expect(await service.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 503, body: { code: 'dedupe_store_unavailable' } });
        expect(calls).toBe(0);
        expect(errors.map(({ context }) => context.outcome)).toEqual(['dedupe_store_unavailable']);
      });

      it('answers 200 when recording the processed event fails, and tells onError (afterReply: true)', async () => {
        const { url } = await start({ dedupe: { claim: () => answer(() => ({ state: 'claimed', token: 't' })) as never, markProcessed: () => answer(storeDown) as never, release: () => undefined } },
          (receiver) => receiver.onAny(() => undefined));
        expect(await service.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 200, body: { code: 'processed' } });
        expect(errors.map(({ context }) => [context.outcome, context.afterReply])).toEqual([['dedupe_store_unavailable', true]]);
      });

      it('answers 500 when a handler fails, and reports a release that fails too', async () => {
        const failure = new Error('handler failed');
        const { url } = await start({ dedupe: { claim: () => ({ state: 'claimed', token: 't' }), markProcessed: () => undefined, release: () => answer(storeDown) as never } },
          (receiver) => receiver.onAny(() => answer(() => { throw failure; })));
        expect(await service.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 500, body: { code: 'handler_failed' } });
        expect(errors.map(({ error, context }) => [error === failure ? 'the handler' : ((error as Error).cause as Error).message, context.outcome]))
          .toEqual([['the handler', 'handler_failed'], ['store down', 'dedupe_store_unavailable']]);
        // Said as it is: the delivery was answered 500, not 503.
        expect((errors[1]!.error as Error).message).toMatch(/^The handlers of user\.created:u failed and the delivery is answered 500 handler_failed all the same: the service sends it again 1, 5 or 15 minutes later; but the deduplication store could not release this delivery's claim/);
      });

      it('runs the handlers one after another in registration order, and answers once the last has finished', async () => {
        const calls: string[] = [];
        const { url } = await start({}, (receiver) => receiver
          .onAny(() => { calls.push('first'); })
          .onAny(() => answer(() => { calls.push('second'); }))
          .onAny(() => { calls.push('third'); }));
        expect(await service.deliver(url, eventBody('user.created', 'u'))).toMatchObject({ status: 200, body: { code: 'processed' } });
        expect(calls).toEqual(['first', 'second', 'third']);
      });
    });
  });

  describe('acknowledges early when asked: 202 after verify, validate and claim, handlers afterwards', () => {
    it('answers 202 before a slow handler finishes, and the handler still runs', async () => {
      const handlerMayFinish = deferred();
      const handlerFinished = deferred();
      const outcome: string[] = [];
      const { url } = await start({ acknowledgeEarly: true }, (receiver) => receiver.onAny(async () => {
        await handlerMayFinish.promise;
        outcome.push('done');
        handlerFinished.resolve();
      }));
      const reply = await service.deliver(url, eventBody('user.created', 'u10'));
      expect(reply).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
      expect(outcome).toEqual([]);
      handlerMayFinish.resolve();
      await handlerFinished.promise;
      expect(outcome).toEqual(['done']);
    });

    it('releases the claim and calls onError when a handler fails after the reply, so a later copy is processed', async () => {
      const reported = deferred();
      const processedOnRetry = deferred();
      let attempts = 0;
      const { url } = await start(
        { acknowledgeEarly: true, onError: (error, context) => { errors.push({ error, context }); reported.resolve(); } },
        (receiver) => receiver.onAny(() => {
          attempts += 1;
          if (attempts === 1) throw new Error('after the ack');
          processedOnRetry.resolve();
        }),
      );
      const body = eventBody('user.created', 'u11');
      expect((await service.deliver(url, body)).status).toBe(202);
      await reported.promise;
      // What to recover it from: the subject and the event itself.
      expect(errors[0]!.context).toMatchObject({ outcome: 'handler_failed', afterReply: true, subject: 'user.created:u11', event: { eventType: 'user.created', data: expect.objectContaining({ id: 'u11' }) } });
      expect((errors[0]!.error as Error).message).toBe('after the ack');
      expect((await service.deliver(url, body)).status).toBe(202);
      await processedOnRetry.promise;
      expect(attempts).toBe(2);
    });

    it('keeps an event whose handlers failed after the 202 in the deadLetters store, for replay() in the place it arrived', async () => {
      const deadLetters = createMemoryDeadLetterStore();
      const seen: string[] = [];
      let failing = true;
      const { url, receiver } = await start({ acknowledgeEarly: true, deadLetters }, (r) => r.on('kyc.status.changed', (event) => {
        if (failing) throw new Error('the partner database is down');
        seen.push(event.data.kycStatus);
      }));
      // Kept as handler_failed: each delivery is kept in_flight before its 202, until its handlers are done.
      const kept = async (count: number) => vi.waitFor(async () => {
        const entries = await deadLetters.list(10);
        expect(entries).toHaveLength(count);
        expect(entries.map((entry) => entry.reason)).toEqual(entries.map(() => 'handler_failed'));
        return entries;
      });
      const pending = eventBody('kyc.status.changed', 'u13', { kycStatus: 'pending' });
      expect((await service.deliver(url, pending)).status).toBe(202);
      const [entry] = await kept(1);
      expect(entry).toMatchObject({ bodySha256: createHash('sha256').update(pending).digest('hex'), reason: 'handler_failed', errors: [] });
      expect(new TextDecoder().decode(entry!.rawBody)).toBe(pending);
      failing = false;
      expect((await receiver.replay()).results).toEqual([{ bodySha256: entry!.bodySha256, outcome: 'processed', deleted: true }]);
      expect(seen).toEqual(['pending']);

      // A newer event of the subject processed before the replay supersedes the kept one...
      failing = true;
      const requiresAction = eventBody('kyc.status.changed', 'u13', { kycStatus: 'requiresAction' });
      expect((await service.deliver(url, requiresAction)).status).toBe(202);
      await kept(1);
      failing = false;
      expect((await service.deliver(url, eventBody('kyc.status.changed', 'u13', { kycStatus: 'approved' }))).status).toBe(202);
      await vi.waitFor(() => expect(seen).toEqual(['pending', 'approved']));
      expect((await receiver.replay()).results.map((result) => result.outcome)).toEqual(['superseded']);
      expect(seen).toEqual(['pending', 'approved']);

      // ...and a later event with the same body as a kept one takes its place: requiresAction
      // fails, processing fails, the user goes back to requiresAction and that fails too. The
      // replay runs processing, then requiresAction, and the partner ends where the platform is.
      failing = true;
      expect((await service.deliver(url, requiresAction)).status).toBe(202);
      await kept(1);
      expect((await service.deliver(url, eventBody('kyc.status.changed', 'u13', { kycStatus: 'processing' }))).status).toBe(202);
      await kept(2);
      expect((await service.deliver(url, requiresAction)).status).toBe(202);
      await vi.waitFor(() => expect(errors).toHaveLength(5));
      await kept(2);
      failing = false;
      expect((await receiver.replay()).results.map((result) => result.outcome)).toEqual(['processed', 'processed']);
      expect(seen).toEqual(['pending', 'approved', 'processing', 'requiresAction']);
      expect(errors.map(({ context }) => [context.outcome, context.afterReply])).toEqual(Array.from({ length: 5 }, () => ['handler_failed', true]));
    });

    it('tells onError when the deadLetters store cannot keep an event whose handlers failed after the 202', async () => {
      // It kept the delivery in flight before the 202, and fails when the handlers have failed.
      const downStore = { put: (entry: { reason?: string }) => { if (entry.reason === 'handler_failed') throw new Error('connection refused'); }, list: () => [], delete: () => undefined };
      const { url } = await start({ acknowledgeEarly: true, deadLetters: downStore }, (r) => r.onAny(() => { throw new Error('the partner database is down'); }));
      expect((await service.deliver(url, eventBody('user.created', 'u14'))).status).toBe(202);
      await vi.waitFor(() => expect(errors).toHaveLength(2));
      expect(errors[0]!.context).toMatchObject({ outcome: 'handler_failed', subject: 'user.created:u14', event: { eventType: 'user.created' }, afterReply: true });
      expect(errors[1]).toMatchObject({
        error: { name: 'DeadLetterStoreError', code: 'dead_letter_store_unavailable', cause: { message: 'connection refused' } },
        context: { outcome: 'acknowledged', subject: 'user.created:u14', afterReply: true },
      });
      expect((errors[1]!.error as Error).message).toBe('The handlers of user.created:u14 failed after the delivery was answered 202 acknowledged (acknowledgeEarly), and the dead-letter store could not keep the event for replay() as handler_failed (the store\'s error is the cause). ' +
        'The service does not send it again: recover it from the event in the context of the handler_failed report.');
    });

    it('logs which event failed by default (no onError): its subject and body digest', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const body = eventBody('user.created', 'u15');
        const { url } = await start({ acknowledgeEarly: true, onError: undefined }, (r) => r.onAny(() => { throw new Error('the partner database is down'); }));
        expect((await service.deliver(url, body)).status).toBe(202);
        await vi.waitFor(() => expect(logged).toHaveBeenCalledTimes(1));
        expect(logged.mock.calls[0]).toEqual([
          `[@capi/webhook-receiver] handler_failed (after the reply) (user.created:u15, body SHA-256 ${createHash('sha256').update(body).digest('hex')}):`,
          expect.objectContaining({ message: 'the partner database is down' }),
        ]);
      } finally {
        logged.mockRestore();
      }
    });

    it('logs a schema-refused event by default in one line: its problems, and the sizes of the raw body and of the list instead of their contents', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const { url } = await start({ onError: undefined, deadLetters: createMemoryDeadLetterStore() });
        const body = eventBody('kyc.status.changed', 'u16', { kycStatus: 'verifiedByPartner' as never }); // a value this SDK does not know yet
        expect((await service.deliver(url, body)).status).toBe(202);
        await vi.waitFor(() => expect(logged).toHaveBeenCalledTimes(1));
        const [prefix, line] = logged.mock.calls[0]!;
        expect(prefix).toMatch(/^\[@capi\/webhook-receiver\] invalid_event_dead_lettered \(body SHA-256 [0-9a-f]{64}\):$/);
        expect(line).toBe(`InvalidWebhookEventError: An authentic kyc.status.changed delivery does not match this SDK version's schema: ${(line as string).split('schema: ')[1]!.split('. It never')[0]}. ` +
          `It never reaches the typed handlers; keep it with a deadLetters store and receiver.replay() it after upgrading @capi/webhook-receiver. (error.rawBody: ${Buffer.byteLength(body)} bytes; error.errors: 1 problem; pass onError to handle it)`);
        expect(line).toContain('kycStatus');
      } finally {
        logged.mockRestore();
      }
    });

    it('still answers 401, and an unhandled invalid body 500, before acknowledging anything', async () => {
      const { url } = await start({ acknowledgeEarly: true });
      expect((await service.deliver(url, 'nope')).status).toBe(500);
      const impostor = await createFakeService();
      expect((await impostor.deliver(url, eventBody('user.created', 'u'))).status).toBe(401);
    });
  });
});

describe('toNodeHandler sends each reply with its Content-Length, in one piece', () => {
  // Read over a raw socket: the framing is what is under test, and a client library hides it.
  async function rawReply(url: string, rawBody: string): Promise<{ head: string; body: string }> {
    const signed = await signWebhook({ rawBody, privateKey: service.privateKey });
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const headers = Object.entries({ ...signed.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(rawBody)), connection: 'close' })
      .map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(`POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}\r\n${rawBody}`);
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const split = text.indexOf('\r\n\r\n');
    return { head: text.slice(0, split).toLowerCase(), body: text.slice(split + 4) };
  }

  it.each([
    ['a shared reply (processed)', {}, eventBody('user.created', 'length-1'), 'processed'],
    ['a reply with its own message, in UTF-8 (strict: the unknown field "prüfung" is named)', { strict: true },
      JSON.stringify({ eventType: 'user.created', data: { ...JSON.parse(eventBody('user.created', 'length-2')).data, prüfung: 1 } }), 'invalid_event_unhandled'],
  ] as const)('%s', async (_name, options, body, code) => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: () => undefined, ...options }).onAny(() => undefined);
    const server = await listen(toNodeHandler(receiver));
    running.push(server);
    const reply = await rawReply(`${server.url}/webhooks`, body);
    expect(reply.head).not.toContain('transfer-encoding');
    expect(reply.head).toContain(`content-length: ${Buffer.byteLength(reply.body)}\r\n`);
    expect(JSON.parse(reply.body)).toMatchObject({ code });
    if (code === 'invalid_event_unhandled') expect(reply.body).toContain('prüfung');
  });
});

describe('answers 400 body_incomplete, reporting nothing, when the sender leaves before the whole body arrived', () => {
  // The reply cannot reach a sender that left, so what is checked is the outcome the server
  // settled on, that no handler ran, and that onError (kept for the receiver's own failures) was not called.
  const servings: Array<[string, (receiver: WebhookReceiver, settled: (status: number) => void) => Promise<RunningServer>]> = [
    ['node:http with toNodeHandler', (receiver, settled) => {
      const handler = toNodeHandler(receiver);
      return listen((req, res) => void handler(req, res).then(() => settled(res.statusCode)));
    }],
    ['Web handle(Request) behind a node:http bridge', (receiver, settled) =>
      listenFetch(async (request) => {
        const response = await receiver.handle(request);
        settled(response.status);
        return response;
      })],
  ];

  it.each(servings)('over %s', async (_name, serve) => {
    const reported: WebhookErrorContext[] = [];
    let dispatched = 0;
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (_error, context) => reported.push(context) })
      .onAny(() => { dispatched += 1; });
    let settle!: (status: number) => void;
    const settled = new Promise<number>((resolve) => { settle = resolve; });
    const server = await serve(receiver, settle);
    running.push(server);
    const body = eventBody('user.created', 'u-cut');
    const { headers } = await signWebhook({ rawBody: body, privateKey: service.privateKey });
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
      .map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n${body.slice(0, 20)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    expect(await settled).toBe(400);
    expect(reported).toEqual([]);
    expect(dispatched).toBe(0);
  });
});
