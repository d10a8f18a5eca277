import { execFileSync } from 'node:child_process';
import { signWebhook } from '@capi/webhook-signature';
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
