import { execFileSync } from 'node:child_process';
import { signWebhook } from '@capi/webhook-signature';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createWebhookReceiver,
  toNodeHandler,
  type WebhookDelivery,
  type WebhookReceiver,
} from '../src/index.js';
import { makeUser } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';

// Bodies of hundreds of KB (a user with thousands of cards) over real HTTP: the same rules as the
// small bodies of the other suites, and the digest checked against openssl.
const LARGE = 256 * 1024;

let service: FakeService;
const running: RunningServer[] = [];
beforeAll(async () => { service = await createFakeService(); });
afterEach(async () => { await Promise.all(running.splice(0).map((server) => server.close())); });

/** A user event of about `bytes` bytes: a user with many cards, as a card-heavy account sends. */
function largeBody(eventType: 'user.created' | 'kyc.status.changed', userId: string, bytes: number, overrides: Record<string, unknown> = {}): string {
  const user = makeUser(userId, overrides);
  const card = (index: number) => ({ id: `card-${userId}-${index}`, cardToken: `tok-${userId}-${index}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: null, virtual: true });
  const cards = [];
  for (let size = JSON.stringify({ eventType, data: { ...user, cards: [] } }).length; size < bytes; size += JSON.stringify(cards.at(-1)).length + 1) cards.push(card(cards.length));
  const body = JSON.stringify({ eventType, data: { ...user, cards } });
  expect(body.length).toBeGreaterThanOrEqual(bytes);
  return body;
}

const opensslSha256 = (text: string) =>
  /([0-9a-f]{64})\s*$/.exec(execFileSync('openssl', ['dgst', '-sha256'], { input: text, encoding: 'utf8' }))![1];

const servings: Array<[string, (receiver: WebhookReceiver) => Promise<RunningServer>]> = [
  ['node:http with toNodeHandler', (receiver) => listen(toNodeHandler(receiver))],
  ['Web handle(Request) behind a node:http bridge', (receiver) => listenFetch((request) => receiver.handle(request))],
];

describe.each(servings)('large bodies through %s', (_name, serve) => {
  async function start(setup: (receiver: WebhookReceiver) => void, options: Partial<Parameters<typeof createWebhookReceiver>[0]> = {}) {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, maxBodyBytes: 4 * 1024 * 1024, onError: () => undefined, ...options });
    setup(receiver);
    const server = await serve(receiver);
    running.push(server);
    return { url: `${server.url}/webhooks`, receiver };
  }

  it('gives handlers the SHA-256 openssl computes, dispatches A -> B -> A three times and a retry of the latest not at all', async () => {
    const seen: Array<{ kycStatus: string; delivery: WebhookDelivery }> = [];
    const { url } = await start((receiver) => receiver.on('kyc.status.changed', (event, delivery) => { seen.push({ kycStatus: event.data.kycStatus, delivery }); }));
    const pending = largeBody('kyc.status.changed', 'big-1', LARGE, { kycStatus: 'pending' });
    const resubmit = largeBody('kyc.status.changed', 'big-1', LARGE, { kycStatus: 'resubmissionRequested' });
    for (const body of [pending, resubmit, pending]) expect(await service.deliver(url, body)).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(await service.deliver(url, pending)).toMatchObject({ status: 200, body: { code: 'duplicate' } });
    expect(seen.map((entry) => entry.kycStatus)).toEqual(['pending', 'resubmissionRequested', 'pending']);
    expect(seen.map((entry) => entry.delivery.bodySha256)).toEqual([opensslSha256(pending), opensslSha256(resubmit), opensslSha256(pending)]);
  });

  it('refuses a large body signed by another key, or signed for another body, with 401 invalid_signature and no dispatch', async () => {
    const seen: string[] = [];
    const { url } = await start((receiver) => receiver.on('kyc.status.changed', (event) => { seen.push(event.data.kycStatus); }));
    const body = largeBody('kyc.status.changed', 'big-3', LARGE, { kycStatus: 'approved' });
    const forger = await createFakeService();
    expect(await forger.deliver(url, body)).toMatchObject({ status: 401, body: { code: 'invalid_signature' } });
    const signedForAnother = await signWebhook({ rawBody: body.replace('"approved"', '"rejected"'), privateKey: service.privateKey });
    expect(await service.deliver(url, body, { headers: signedForAnother.headers })).toMatchObject({ status: 401, body: { code: 'invalid_signature' } });
    expect(seen).toEqual([]);
  });

  it('dead-letters a large drifted body under its digest and replays it once the validator accepts it', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const body = largeBody('kyc.status.changed', 'big-2', LARGE + LARGE / 2, { kycStatus: 'someNewValue' });
    const { url } = await start(() => undefined, { deadLetters });
    expect(await service.deliver(url, body)).toMatchObject({ status: 202, body: { code: 'invalid_event_dead_lettered' } });
    const [entry] = await deadLetters.list(10);
    expect(entry?.bodySha256).toBe(opensslSha256(body));

    const replayed: string[] = [];
    const upgraded = createWebhookReceiver({
      publicKey: service.publicKey,
      deadLetters,
      validator: (rawBody) => ({ ok: true, event: JSON.parse(new TextDecoder().decode(rawBody)) }),
    }).onAny((_event, delivery) => { replayed.push(delivery.bodySha256); });
    expect(await upgraded.replay()).toEqual({ results: [{ bodySha256: opensslSha256(body), outcome: 'processed', deleted: true }] });
    expect(replayed).toEqual([opensslSha256(body)]);
  });
});

// From 128 KiB on (with more than one CPU, as in CI), the receiver decodes a body while its
// signature is checked on the thread pool, and the default validator parses that text: every
// body must be judged exactly as the validator judges its bytes, and a forged one never reaches it.
describe('large bodies decoded while the signature is checked', () => {
  const encoder = new TextEncoder();
  const bytes = (...parts: Array<string | number[]>) => new Uint8Array(parts.flatMap((part) => (typeof part === 'string' ? [...encoder.encode(part)] : part)));
  const BOM = [0xef, 0xbb, 0xbf];
  const valid = () => largeBody('kyc.status.changed', 'big-judged', LARGE, { kycStatus: 'approved' });
  const cases: Array<[string, () => Uint8Array]> = [
    ['a valid event', () => bytes(valid())],
    ['a valid event after a BOM', () => bytes(BOM, valid())],
    ['a valid event after two BOMs', () => bytes(BOM, BOM, valid())],
    ['bytes that are not UTF-8', () => bytes(valid().slice(0, -2), [0xff], '}}')],
    ['text that is not JSON', () => bytes(valid().slice(0, -1))],
    ['a drifted enum value', () => bytes(valid().replace('"approved"', '"someNewValue"'))],
    ['a prototype key', () => bytes(valid().replace('"cards":', '"__proto__":{"polluted":true},"cards":'))],
    ['nesting deeper than 64 levels', () => bytes(valid().replace('"cards":', `"deep":${'['.repeat(80)}${']'.repeat(80)},"cards":`))],
  ];

  /** The receive() source of a signed body, answering the header names in lower case as the receiver asks. */
  const sourceOf = (signed: Awaited<ReturnType<typeof signWebhook>>, rawBody: Uint8Array) => {
    const headers = new Map(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]));
    // A source that ignores the limit, so that the validator's own size check is reached too.
    return { method: 'POST', header: (name: string) => headers.get(name) ?? null, readRawBody: async () => rawBody };
  };

  async function judge(rawBody: Uint8Array, maxBodyBytes = 4 * 1024 * 1024) {
    const seen = { dispatched: 0, invalid: [] as unknown[] };
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, maxBodyBytes, onError: () => undefined, onInvalidEvent: (event) => { seen.invalid.push(event.errors); } })
      .onAny(() => { seen.dispatched += 1; });
    const signed = await signWebhook({ rawBody, privateKey: service.privateKey });
    const { reply } = await receiver.receive(sourceOf(signed, rawBody));
    return { status: reply.status, code: JSON.parse(reply.body).code as string, ...seen };
  }

  it.each(cases)('%s: the outcome and the errors the validator gives for its bytes', async (_name, make) => {
    const rawBody = make();
    expect(rawBody.byteLength).toBeGreaterThanOrEqual(128 * 1024);
    const expected = parseWebhookEvent(rawBody, { maxBytes: 4 * 1024 * 1024 });
    const judged = await judge(rawBody);
    if (expected.ok) {
      expect(judged).toMatchObject({ status: 200, code: 'processed', dispatched: 1, invalid: [] });
    } else {
      expect(expected.errors.length).toBeGreaterThan(0);
      expect(judged).toMatchObject({ dispatched: 0, invalid: [expected.errors] });
    }
  });

  it('a body over maxBodyBytes from a source that ignores the limit: refused by the validator for its size, as its bytes are', async () => {
    const rawBody = bytes(valid());
    const judged = await judge(rawBody, 200 * 1024);
    const expected = parseWebhookEvent(rawBody, { maxBytes: 200 * 1024 });
    expect(expected.ok).toBe(false);
    expect(judged.invalid).toEqual([!expected.ok && expected.errors]);
    expect(judged.invalid).toEqual([[expect.objectContaining({ keyword: 'maxBytes' })]]);
  });

  it('a forged large body is answered 401 and never reaches the validator or a hook', async () => {
    const rawBody = bytes(valid().replace('"approved"', '"someNewValue"'));
    const forger = await createFakeService();
    const seen: unknown[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: () => undefined, onInvalidEvent: (event) => { seen.push(event); } }).onAny((event) => { seen.push(event); });
    const signed = await signWebhook({ rawBody, privateKey: forger.privateKey });
    const { reply } = await receiver.receive(sourceOf(signed, rawBody));
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'invalid_signature' });
    expect(seen).toEqual([]);
  });
});
