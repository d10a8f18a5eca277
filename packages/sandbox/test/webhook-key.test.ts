// The webhook key service under the partner's control (reference 2.8 and 4.5): rotate the
// signing key, and make the key endpoint answer `success: false`, over HTTP (/__sandbox/) and
// through the programmatic API.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicKeyProvider, isValidWebhookSignature, verifyWebhookSignature } from '@capi/webhook-signature';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxConfigError, startSandbox, type Sandbox } from '../src/index.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { startPlainReceiver } from './support/webhook-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function sandboxWith(options: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({ users: [], timeScale: 600, ...options });
  closers.push(() => sandbox.close());
  return sandbox;
}

const keyAnswer = async (sandbox: Sandbox) => (await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey')).body;

describe('rotates the webhook signing key', () => {
  it('POST /__sandbox/webhook-key/rotate: the key service serves the new key, and later deliveries are signed with it', async () => {
    let knownKey = '';
    const partner = await startPlainReceiver({ publicKey: () => knownKey });
    closers.push(partner.close);
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const before = sandbox.publicKey;
    expect(await keyAnswer(sandbox)).toEqual({ success: true, publicKey: before });
    knownKey = (await keyAnswer(sandbox)).publicKey;
    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();

    const rotated = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/webhook-key/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ success: true, previousPublicKey: before, publicKey: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n/) });
    const after = rotated.body.publicKey as string;
    expect(after).not.toBe(before);
    expect(sandbox.publicKey).toBe(after);
    expect(await keyAnswer(sandbox)).toEqual({ success: true, publicKey: after });
    expect((await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/webhook-key')).body).toEqual({ publicKey: after, success: true });
    expect((await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox')).body.publicKey).toBe(after);

    // The partner fetches the key again, as after a failed verification.
    knownKey = (await keyAnswer(sandbox)).publicKey;
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event.eventType)).toEqual(['user.created', 'kyc.status.changed']);
    const [first, second] = partner.received as [(typeof partner.received)[number], (typeof partner.received)[number]];
    expect(await isValidWebhookSignature({ rawBody: first.rawBody, timestamp: first.timestamp, signature: first.signature, publicKey: after })).toBe(false);
    expect(await isValidWebhookSignature({ rawBody: second.rawBody, timestamp: second.timestamp, signature: second.signature, publicKey: before })).toBe(false);
  });

  it('sandbox.rotateWebhookKey(): the delivery before verifies with the old key only, the one after with the new key only', async () => {
    const bodies: { rawBody: string; timestamp: string; signature: string }[] = [];
    const endpoint = createServer((request, response) => {
      let rawBody = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (rawBody += chunk));
      request.on('end', () => {
        bodies.push({ rawBody, timestamp: String(request.headers['x-webhook-timestamp']), signature: String(request.headers['x-webhook-signature']) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => endpoint.close(() => resolve())));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/webhooks`;
    const sandbox = await sandboxWith({ webhookUrls: [url] });

    const oldKey = sandbox.publicKey;
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();
    const newKey = await sandbox.rotateWebhookKey();
    expect(newKey).toBe(sandbox.publicKey);
    expect(newKey).not.toBe(oldKey);
    expect((await keyAnswer(sandbox)).publicKey).toBe(newKey);
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();

    expect(bodies).toHaveLength(2);
    const [before, after] = bodies as [(typeof bodies)[number], (typeof bodies)[number]];
    expect(await isValidWebhookSignature({ ...before, publicKey: oldKey })).toBe(true);
    expect(await isValidWebhookSignature({ ...before, publicKey: newKey })).toBe(false);
    expect(await isValidWebhookSignature({ ...after, publicKey: newKey })).toBe(true);
    expect(await isValidWebhookSignature({ ...after, publicKey: oldKey })).toBe(false);
  });

  it("a receiver's createPublicKeyProvider keeps verifying across a rotation: it refetches the key once a signature fails", async () => {
    let keyFetches = 0;
    const verified: string[] = [];
    const refused: string[] = [];
    let provider: ReturnType<typeof createPublicKeyProvider> | undefined;
    const endpoint = createServer((request, response) => {
      let rawBody = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (rawBody += chunk));
      request.on('end', async () => {
        const timestamp = String(request.headers['x-webhook-timestamp']);
        const signature = String(request.headers['x-webhook-signature']);
        try {
          await verifyWebhookSignature({ rawBody, timestamp, signature, publicKey: provider! });
          verified.push(JSON.parse(rawBody).eventType);
          response.writeHead(204).end();
        } catch (error) {
          refused.push((error as { code?: string }).code ?? String(error));
          response.writeHead(401).end();
        }
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => endpoint.close(() => resolve())));
    const sandbox = await sandboxWith({ webhookUrls: [`http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/webhooks`] });
    // A refetch is allowed at once (the default waits a minute between refetches, against floods of forged webhooks).
    provider = createPublicKeyProvider({
      url: `${sandbox.webhooksUrl}/api/v1/public-key`,
      minRefreshIntervalMs: 0,
      fetch: (input, init) => {
        keyFetches++;
        return fetch(input, init);
      },
    });

    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();
    expect(keyFetches).toBe(1);
    await sandbox.rotateWebhookKey();
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();

    // The cached key failed on the second delivery; the provider fetched the new one and it verified, first time.
    expect(verified).toEqual(['user.created', 'kyc.status.changed']);
    expect(refused).toEqual([]);
    expect(keyFetches).toBe(2);
    expect(sandbox.deliveries().map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[204], [204]]);
  });
});

describe('answers success: false from the key endpoint until restored (reference 2.8)', () => {
  it('PUT /__sandbox/webhook-key {success: false}: the key service answers {success: false, publicKey: ""}; deliveries go on; {success: true} restores it', async () => {
    const sandbox = await sandboxWith();
    const off = await callAdmin(sandbox.baseUrl, 'PUT', '/__sandbox/webhook-key', { success: false });
    expect(off).toEqual({ status: 200, body: { publicKey: sandbox.publicKey, success: false } });
    // callOperation checks the answer against the spec's WebhookPublicKey.
    const answer = await keyAnswer(sandbox);
    expect(answer).toMatchObject({ success: false, publicKey: '' });
    expect(answer.message).toMatch(/not available .*PUT \/__sandbox\/webhook-key \{"success": true\}/);
    expect((await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox')).body.webhookKeySuccess).toBe(false);

    // What a receiver's provider makes of it: no key (key_unavailable), with the sandbox's reason.
    const provider = createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` });
    await expect(provider.get()).rejects.toMatchObject({ name: 'PublicKeyFetchError', code: 'key_unavailable', message: expect.stringMatching(/success: false \(The webhook key is not available/) });

    const on = await callAdmin(sandbox.baseUrl, 'PUT', '/__sandbox/webhook-key', { success: true });
    expect(on.body.success).toBe(true);
    expect(await keyAnswer(sandbox)).toEqual({ success: true, publicKey: sandbox.publicKey });
    await expect(createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` }).get()).resolves.toBeDefined();
  });

  it('sandbox.setWebhookKeySuccess(false) does the same, and deliveries are still signed meanwhile', async () => {
    const partner = await startPlainReceiver({ publicKey: () => sandbox.publicKey });
    closers.push(partner.close);
    const sandbox = await sandboxWith({});
    sandbox.setWebhookKeySuccess(false);
    expect((await keyAnswer(sandbox)).success).toBe(false);
    sandbox.sendEvent('user.created', undefined, { to: [partner.url] });
    await sandbox.whenDeliveriesSettled();
    expect(partner.received).toHaveLength(1);
    expect(partner.rejected).toEqual([]);
    sandbox.setWebhookKeySuccess(true);
    expect((await keyAnswer(sandbox)).success).toBe(true);
  });

  it('refuses a success that is not true or false', async () => {
    const sandbox = await sandboxWith();
    const refused = await callAdmin(sandbox.baseUrl, 'PUT', '/__sandbox/webhook-key', { success: 'no' });
    expect(refused).toMatchObject({ status: 422, body: { code: 'ValidationError', message: expect.stringMatching(/success must be true or false/) } });
    expect(() => sandbox.setWebhookKeySuccess('no' as never)).toThrow(SandboxConfigError);
    expect((await keyAnswer(sandbox)).success).toBe(true);
  });
});
