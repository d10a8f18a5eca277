// The webhook key service under the partner's control (reference 2.8 and 4.5): rotate the
// signing key, and make the key endpoint answer `success: false`, over HTTP (/__sandbox/) and
// through the programmatic API.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicKeyProvider, isValidWebhookSignature } from '@capi/webhook-signature';
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
    let keyUrl = '';
    // A refetch is allowed at once (the default waits a minute between refetches, against floods of forged webhooks).
    const partner = await providerReceiver(() => keyUrl, 0);
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    keyUrl = `${sandbox.webhooksUrl}/api/v1/public-key`;

    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();
    expect(partner.keyFetches()).toBe(1);
    await sandbox.rotateWebhookKey();
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();

    // The cached key failed on the second delivery; the provider fetched the new one and it verified, first time.
    expect(partner.verified).toEqual(['user.created', 'kyc.status.changed']);
    expect(partner.keyFetches()).toBe(2);
    expect(sandbox.deliveries().map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[204], [204]]);
  });
});

/**
 * A partner's receiver that verifies with a createPublicKeyProvider of the sandbox's key
 * endpoint (`keyUrl`, read at the first delivery), answering 204, or 401 when verification
 * fails: its URL, the event types it verified, and how often the provider fetched the key.
 */
async function providerReceiver(keyUrl: () => string, minRefreshIntervalMs?: number) {
  let provider: ReturnType<typeof createPublicKeyProvider> | undefined;
  let keyFetches = 0;
  const verified: string[] = [];
  const endpoint = createServer((request, response) => {
    let rawBody = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (rawBody += chunk));
    request.on('end', async () => {
      provider ??= createPublicKeyProvider({
        url: keyUrl(),
        ...(minRefreshIntervalMs === undefined ? {} : { minRefreshIntervalMs }),
        fetch: (input, init) => {
          keyFetches++;
          return fetch(input, init);
        },
      });
      const timestamp = String(request.headers['x-webhook-timestamp']);
      const signature = String(request.headers['x-webhook-signature']);
      const valid = await isValidWebhookSignature({ rawBody, timestamp, signature, publicKey: provider });
      if (valid) verified.push(JSON.parse(rawBody).eventType);
      response.writeHead(valid ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => endpoint.close(() => resolve())));
  return { url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/webhooks`, verified, keyFetches: () => keyFetches };
}

describe('a rotation under a time scale: the provider refetches in time only with minRefreshIntervalMs scaled too', () => {
  it('timeScale N with minRefreshIntervalMs 15_000 / N: the delivery signed with the new key verifies by its first retry; with the default 15 s all 4 attempts get 401', async () => {
    const timeScale = 600; // retries after 100 ms, 500 ms, 1.5 s
    let keyUrl = '';
    const scaled = (await providerReceiver(() => keyUrl, 15_000 / timeScale)).url;
    const unscaled = (await providerReceiver(() => keyUrl)).url;
    const sandbox = await sandboxWith({ timeScale, webhookUrls: [scaled, unscaled] });
    keyUrl = `${sandbox.webhooksUrl}/api/v1/public-key`;
    // Both providers fetch the key with the first event, then the key rotates.
    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();
    expect(sandbox.deliveries().map((delivery) => delivery.state)).toEqual(['succeeded', 'succeeded']);
    await sandbox.rotateWebhookKey();
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();

    const after = sandbox.deliveries().filter((delivery) => delivery.eventType === 'kyc.status.changed');
    const byUrl = (url: string) => after.find((delivery) => delivery.url === url)!;
    expect(byUrl(scaled).state).toBe('succeeded');
    expect(byUrl(scaled).attempts.length).toBeLessThanOrEqual(2);
    expect(byUrl(unscaled).state).toBe('failed');
    expect(byUrl(unscaled).attempts.map((attempt) => attempt.status)).toEqual([401, 401, 401, 401]);
  });
});

describe('signs with a fixed key given as webhookPrivateKey (--webhook-private-key FILE), the same at every start', () => {
  const pem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  it('serves the public key of the given private key at every start, and its deliveries verify with it', async () => {
    const privateKey = pem();
    const first = await sandboxWith({ webhookPrivateKey: privateKey });
    const second = await sandboxWith({ webhookPrivateKey: privateKey });
    expect(second.publicKey).toBe(first.publicKey);
    expect(await keyAnswer(second)).toEqual({ success: true, publicKey: first.publicKey });
    expect((await sandboxWith()).publicKey).not.toBe(first.publicKey);

    // A receiver given the key once (CAPI_WEBHOOK_PUBLIC_KEY) verifies the deliveries of a restarted sandbox.
    const partner = await startPlainReceiver({ publicKey: first.publicKey });
    closers.push(partner.close);
    await first.close();
    second.sendEvent('user.created', undefined, { to: [partner.url] });
    await second.whenDeliveriesSettled();
    expect(partner.rejected).toEqual([]);
    expect(partner.received).toHaveLength(1);

    // A rotation replaces it until the next start.
    const rotated = await second.rotateWebhookKey();
    expect(rotated).not.toBe(first.publicKey);
    expect((await sandboxWith({ webhookPrivateKey: privateKey })).publicKey).toBe(first.publicKey);
  });

  it.each([
    ['a value that is not a string', 42, /webhookPrivateKey must be the text of a PKCS8 PEM Ed25519 private key/],
    ['a public key', generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(), /webhookPrivateKey must be the text of a PKCS8 PEM Ed25519 private key/],
    ['a damaged PEM', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /webhookPrivateKey is not a usable PKCS8 PEM Ed25519 private key/],
    ['an RSA key', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), /not a usable .*: the key is an rsa key, not Ed25519/],
  ])('refuses %s with SandboxConfigError invalid_option', async (_, webhookPrivateKey, message) => {
    await expect(startSandbox({ webhookPrivateKey: webhookPrivateKey as string })).rejects.toMatchObject({ name: 'SandboxConfigError', code: 'invalid_option', message: expect.stringMatching(message) });
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
