// A receiver configured with a weak Ed25519 key (the all-zero placeholder of an .env template,
// a small-order point) must not accept the keyless forgery R = small-order point, S = 0: it
// answers 500 receiver_misconfigured, over real HTTP, for every delivery, so nothing is
// acknowledged before the configuration is fixed.
import { createServer } from 'node:http';
import { createPublicKeyProvider, WebhookSignatureError } from '@capi/webhook-signature';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookReceiver, toNodeHandler, type WebhookReceiver } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

const IDENTITY = Buffer.from(`01${'00'.repeat(31)}`, 'hex');
const WEAK_KEYS: [string, string][] = [
  ['the all-zero placeholder key', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='],
  ['the identity point (hex)', IDENTITY.toString('hex')],
  ['the identity point (PEM)', `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), IDENTITY]).toString('base64')}\n-----END PUBLIC KEY-----\n`],
  ['a non-canonical y = p', `ed${'ff'.repeat(30)}7f`],
];
// R = identity, S = 0: valid under the identity key for every message, with no private key.
const FORGED_SIGNATURE = Buffer.concat([IDENTITY, Buffer.alloc(32)]).toString('base64');

/** POSTs the keyless forgery for each of 16 consecutive timestamps (a small-order key accepts some). */
async function deliverForgeries(url: string): Promise<{ status: number; body: { code?: string } }[]> {
  const now = Math.floor(Date.now() / 1000);
  const replies = [];
  for (let i = 0; i < 16; i++) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-timestamp': String(now - i), 'x-webhook-signature': FORGED_SIGNATURE },
      body: eventBody('user.created', `forged-${i}`),
    });
    replies.push({ status: response.status, body: (await response.json()) as { code?: string } });
  }
  return replies;
}

const adapters: [string, (receiver: WebhookReceiver) => Promise<RunningServer>][] = [
  ['toNodeHandler on node:http', (receiver) => listen(createServer(toNodeHandler(receiver)))],
  ['handle(Request) on a fetch server', (receiver) => listenFetch((request) => receiver.handle(request))],
];

describe.each(adapters)('a receiver given a weak public key (%s)', (_, serve) => {
  it.each(WEAK_KEYS)('%s: every forged delivery is answered 500 receiver_misconfigured, and onError gets invalid_public_key', async (_, publicKey) => {
    const reported: unknown[] = [];
    let dispatched = 0;
    const receiver = createWebhookReceiver({ publicKey, onError: (error) => void reported.push(error) }).onAny(() => {
      dispatched++;
    });
    const server = await serve(receiver);
    running.push(server);
    const replies = await deliverForgeries(`${server.url}/webhooks`);
    for (const reply of replies) {
      expect(reply.status).toBe(500);
      expect(reply.body.code).toBe('receiver_misconfigured');
    }
    expect(dispatched).toBe(0);
    expect(reported.length).toBeGreaterThan(0);
    for (const error of reported) {
      expect(error).toBeInstanceOf(WebhookSignatureError);
      expect(error).toMatchObject({ code: 'invalid_public_key' });
    }
  });
});

describe('a receiver whose key provider serves a weak key', () => {
  it('answers every forged delivery with a 5xx, never 2xx, and reports the provider error', async () => {
    const keyServer = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, publicKey: WEAK_KEYS[0]![1] }));
    });
    running.push(keyServer);
    const reported: unknown[] = [];
    const receiver = createWebhookReceiver({ publicKey: createPublicKeyProvider({ url: `${keyServer.url}/api/v1/public-key` }), onError: (error) => void reported.push(error) });
    const server = await listen(createServer(toNodeHandler(receiver)));
    running.push(server);
    for (const reply of await deliverForgeries(`${server.url}/webhooks`)) {
      expect(reply.status).toBeGreaterThanOrEqual(500);
      expect(['receiver_misconfigured', 'public_key_unavailable']).toContain(reply.body.code);
    }
    expect(reported[0]).toMatchObject({ name: 'PublicKeyFetchError', code: 'malformed_response' });
    expect((reported[0] as Error).message).toContain('the all-zero placeholder key');
  });
});
