import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryDeadLetterStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { validateWebhookEvent } from '@capi/webhook-validator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_DELAYS_MS, startSandbox, type Delivery, type Sandbox } from '../src/index.js';
import { DeliveryScheduler } from '../src/webhooks/delivery-scheduler.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { startPlainReceiver } from './support/webhook-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function sandboxWith(options: Parameters<typeof startSandbox>[0]) {
  const sandbox = await startSandbox({ users: [], ...options });
  closers.push(() => sandbox.close());
  return sandbox;
}

async function receiver(options: Parameters<typeof startPlainReceiver>[0]) {
  const started = await startPlainReceiver(options);
  closers.push(started.close);
  return started;
}

/** What a partner does: fetch the key from the webhooks base URL. */
async function fetchPublicKey(sandbox: Sandbox): Promise<string> {
  const response = await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey');
  expect(response.status).toBe(200);
  return response.body.publicKey;
}

const sampleKycStatus = (delivery: Delivery) => (delivery.event as { data: { kycStatus: string } }).data.kycStatus;

const gapsBetweenAttempts = (delivery: Delivery) =>
  delivery.attempts.slice(1).map((attempt, i) => Date.parse(attempt.startedAt) - Date.parse(delivery.attempts[i]!.finishedAt));

describe('serves the webhook public key on the webhooks base URL', () => {
  it('answers {success: true, publicKey} with a PEM SPKI key that @capi/webhook-signature reads', async () => {
    const sandbox = await sandboxWith({});
    const response = await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey');
    expect(response.body.success).toBe(true);
    expect(response.body.publicKey).toBe(sandbox.publicKey);
    expect(response.body.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const provider = createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` });
    await expect(provider.get()).resolves.toBeDefined();
  });

  it('points a client that asks the core base URL to the webhooks base URL', async () => {
    const sandbox = await sandboxWith({});
    const response = await fetch(`${sandbox.baseUrl}/api/v1/public-key`);
    expect(response.status).toBe(404);
    expect((await response.json()).message).toContain(`${sandbox.webhooksUrl}/api/v1/public-key`);
  });
});

describe('emits the event of each user change, signed, to a plain node:http receiver that verifies it', () => {
  it('user.created on creation, then kyc.status.changed, kyc.phone-validation.changed, kyc.source-of-funds.changed; no event when nothing changes', async () => {
    let publicKey = '';
    const partner = await receiver({ publicKey: () => publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    publicKey = await fetchPublicKey(sandbox);

    const created = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { email: 'ada@example.com', signInWallets: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'] });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const kyc = await callAdmin(sandbox.baseUrl, 'PUT', `/__sandbox/users/${id}/kyc-status`, { kycStatus: 'approved' });
    expect(kyc.body).toMatchObject({ eventEmitted: true, user: { kycStatus: 'approved' } });
    const unchanged = await callAdmin(sandbox.baseUrl, 'PUT', `/__sandbox/users/${id}/kyc-status`, { kycStatus: 'approved' });
    expect(unchanged.body.eventEmitted).toBe(false);
    await callAdmin(sandbox.baseUrl, 'PUT', `/__sandbox/users/${id}/phone-validation`, { isPhoneValidated: true, phone: '+4915112345678' });
    await callAdmin(sandbox.baseUrl, 'PUT', `/__sandbox/users/${id}/source-of-funds`, { isSourceOfFundsAnswered: true });
    await sandbox.whenDeliveriesSettled();

    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event.eventType)).toEqual([
      'user.created',
      'kyc.status.changed',
      'kyc.phone-validation.changed',
      'kyc.source-of-funds.changed',
    ]);
    const last = partner.received.at(-1)!.event.data;
    expect(last).toMatchObject({ id, kycStatus: 'approved', isPhoneValidated: true, phone: '+4915112345678', isSourceOfFundsAnswered: true });
    // The data is the complete User: every field present (reference 2.1).
    expect(Object.keys(last)).toHaveLength(20);
    for (const delivery of partner.received) {
      expect(delivery.timestamp).toMatch(/^\d+$/);
      expect(Buffer.from(delivery.signature, 'base64')).toHaveLength(64);
    }
  });

  it('emits the same events when users are changed through the programmatic API', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const user = sandbox.users.create({ firstName: 'Grace' });
    sandbox.users.setKycStatus(user.id, 'pending');
    sandbox.users.setPhoneValidation(user.id, true);
    sandbox.users.setSourceOfFunds(user.id, true);
    await sandbox.whenDeliveriesSettled();
    expect(partner.received.map((delivery) => delivery.event.eventType)).toEqual([
      'user.created',
      'kyc.status.changed',
      'kyc.phone-validation.changed',
      'kyc.source-of-funds.changed',
    ]);
  });
});

describe('retries a failed delivery after 1, 5 and 15 minutes, divided by the time scale', () => {
  it('four attempts in order, each re-signed over the same body, spaced by the scaled 1/5/15-minute delays', async () => {
    const timeScale = 300; // 1, 5, 15 minutes -> 200 ms, 1 s, 3 s
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 503 });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url], timeScale });
    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();

    const [delivery] = sandbox.deliveries();
    expect(delivery!.state).toBe('failed');
    expect(delivery!.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4]);
    expect(delivery!.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 503, 503]);
    expect(delivery!.attempts.map((attempt) => attempt.unscaledDelayMs)).toEqual([0, ...RETRY_DELAYS_MS]);
    expect(delivery!.attempts.map((attempt) => attempt.delayMs)).toEqual([0, 200, 1000, 3000]);
    // Spacing from the log: each wait is at least its scheduled delay and the waits grow.
    const gaps = gapsBetweenAttempts(delivery!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delivery!.attempts[i + 1]!.delayMs - 2));
    expect(gaps[0]).toBeLessThan(gaps[1]!);
    expect(gaps[1]).toBeLessThan(gaps[2]!);
    // Every attempt reached the receiver, verified, with the same body.
    expect(partner.rejected).toEqual([]);
    expect(new Set(partner.received.map((received) => received.rawBody)).size).toBe(1);
    expect(partner.received).toHaveLength(4);
  });

  it('stops retrying once an attempt succeeds', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: (_delivery, index) => (index === 0 ? 500 : 200) });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url], timeScale: 600 });
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();
    const [delivery] = sandbox.deliveries();
    expect(delivery!.state).toBe('succeeded');
    expect(delivery!.attempts.map((attempt) => [attempt.status, attempt.outcome])).toEqual([
      [500, 'failed'],
      [200, 'succeeded'],
    ]);
    expect(delivery!.attempts[0]!.responseBody).toBe('refused with 500');
  });

  it('counts a receiver that does not answer within the timeout, and one that cannot be reached, as failed attempts', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: (_delivery, index) => (index === 0 ? 'hang' : 204) });
    const unreachable = await receiver({ publicKey: '' });
    await unreachable.close();
    // The timeout also bounds the second attempt, which must succeed: 1 s leaves a loaded CI
    // machine room for a real HTTP round trip and a signature check.
    const sandbox = await sandboxWith({ webhookUrls: [partner.url, unreachable.url], timeScale: 6000, deliveryTimeoutMs: 1000 });
    sandbox.sendEvent('kyc.source-of-funds.changed');
    await sandbox.whenDeliveriesSettled();
    const [toPartner, toNowhere] = sandbox.deliveries();
    expect(toPartner!.attempts.map((attempt) => attempt.outcome)).toEqual(['timed-out', 'succeeded']);
    expect(toPartner!.attempts[0]!.status).toBeNull();
    expect(toPartner!.attempts[0]!.error).toMatch(/within 1000 ms/);
    expect(toNowhere!.state).toBe('failed');
    expect(toNowhere!.attempts.map((attempt) => attempt.outcome)).toEqual(['network-error', 'network-error', 'network-error', 'network-error']);
  });
});

describe('counts an attempt delivered when its whole answer came within the timeout (the spec\'s x-delivery x-assumption)', () => {
  it('times out a 2xx whose body is still coming at the timeout, and takes one whose body ends in time', async () => {
    let calls = 0;
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        calls += 1;
        // The status line and a first chunk at once; the rest 1.5 s later on the first attempt.
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"ok"');
        setTimeout(() => response.end(':true}'), calls === 1 ? 1_500 : 10);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
    const sandbox = await sandboxWith({ webhookUrls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`], timeScale: 6000, deliveryTimeoutMs: 1000 });
    sandbox.sendEvent('kyc.source-of-funds.changed');
    await sandbox.whenDeliveriesSettled();
    const [delivery] = sandbox.deliveries();
    expect(delivery!.attempts.map((attempt) => attempt.outcome)).toEqual(['timed-out', 'succeeded']);
    expect(delivery!.attempts[0]!.error).toMatch(/no complete answer within 1000 ms/);
    expect(delivery!.attempts[1]).toMatchObject({ status: 200, responseBody: '{"ok":true}' });
  });
});

describe('sends the events of changes made in quick succession in the order they were made', () => {
  /** A node:http endpoint that records each body as it arrives (before any asynchronous work) and answers 204. */
  async function arrivals() {
    const bodies: string[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, bodies };
  }

  it('signs one attempt at a time, in order, so a signature that finishes early does not send its event first', async () => {
    // The first signature takes longest: signed all at once, the events would go out 3, 2, 1.
    const delays = [60, 40, 20];
    const signing: string[] = [];
    const scheduler = new DeliveryScheduler({
      signer: {
        publicKey: '',
        sign: async (rawBody) => {
          signing.push(rawBody);
          await new Promise((resolve) => setTimeout(resolve, delays[signing.length - 1]));
          return { timestamp: '1', headers: { 'x-webhook-timestamp': '1', 'x-webhook-signature': 'sig' } };
        },
      },
      timeScale: 1,
      deliveryTimeoutMs: 2_000,
    });
    const endpoint = await arrivals();
    const bodies = ['first', 'second', 'third'].map((name) => JSON.stringify({ eventType: 'user.created', data: { id: name } }));
    for (const body of bodies) scheduler.deliver(new URL(endpoint.url), 'user.created', body);
    await scheduler.whenIdle();
    expect(signing).toEqual(bodies);
    expect(endpoint.bodies).toEqual(bodies);
  });

  it('delivers eight KYC changes made at once in the order they were made, round after round (the real signer)', async () => {
    const endpoint = await arrivals();
    const sandbox = await sandboxWith({ webhookUrls: [endpoint.url] });
    const user = sandbox.users.create({});
    await sandbox.whenDeliveriesSettled();
    const statuses = ['pending', 'requiresAction', 'resubmissionRequested', 'pending', 'processing', 'rejected', 'documentsRequested', 'approved'] as const;
    for (let round = 0; round < 3; round++) {
      endpoint.bodies.length = 0;
      for (const kycStatus of statuses) sandbox.users.setKycStatus(user.id, kycStatus);
      await sandbox.whenDeliveriesSettled();
      expect(endpoint.bodies.map((body) => JSON.parse(body).data.kycStatus)).toEqual(statuses);
      sandbox.users.setKycStatus(user.id, 'notStarted');
      await sandbox.whenDeliveriesSettled();
    }
  });
});

describe('sends nothing once closed, even an event emitted just before close()', () => {
  it('ends the delivery failed without a request and without waiting for the delivery timeout', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 'hang' });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url], deliveryTimeoutMs: 300 });
    sandbox.sendEvent('user.created');
    await sandbox.close();
    await sandbox.whenDeliveriesSettled();
    const [delivery] = sandbox.deliveries();
    expect(delivery!.state).toBe('failed');
    expect(delivery!.attempts.map((attempt) => [attempt.outcome, attempt.status])).toEqual([['network-error', null]]);
    expect(delivery!.attempts[0]!.error).toMatch(/sandbox was closed/);
    expect(partner.received).toEqual([]);
  });
});

describe('sends duplicates as the service may (reference 6.2), each copy a delivery of its own', () => {
  it('duplicateRate 1 sends every event twice: the same body, each signed afresh, the copy naming the first (copyOf), and a receiver handles it once', async () => {
    const handled: string[] = [];
    const sandbox = await sandboxWith({ duplicateRate: 1 });
    const receiver = createWebhookReceiver({ publicKey: sandbox.publicKey, onError: () => undefined })
      .on('kyc.status.changed', async (event) => {
        // Slow enough for the copy, sent beside the first, to arrive while it is handled.
        await new Promise((resolve) => setTimeout(resolve, 50));
        handled.push(event.data.kycStatus);
      });
    const server = createServer(toNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const [first, copy] = sandbox.sendEvent('kyc.status.changed', undefined, { to: [url] });
    expect(copy).toMatchObject({ copyOf: first!.id, url: first!.url, eventType: 'kyc.status.changed', event: first!.event });
    expect(first!.copyOf).toBeUndefined();
    await sandbox.whenDeliveriesSettled();
    const log = sandbox.deliveries();
    expect(log.map((delivery) => [delivery.state, delivery.copyOf])).toEqual([['succeeded', undefined], ['succeeded', first!.id]]);
    // One dispatch; the copy is answered as a duplicate (it waited for the first, or came after it).
    expect(handled).toEqual([sampleKycStatus(first!)]);
    expect(log.map((delivery) => (JSON.parse(delivery.attempts[0]!.responseBody!) as { code: string }).code).sort()).toEqual(['duplicate', 'processed']);
  });

  it('duplicateAfterMs starts the copy that much later, scheduled until then, the same body signed afresh', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 200 });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url], duplicateRate: 1, duplicateAfterMs: 300 });
    const [first, copy] = sandbox.sendEvent('user.created');
    expect(sandbox.deliveries({ id: copy!.id })[0]).toMatchObject({ state: 'scheduled', attempts: [], copyOf: first!.id });
    expect(sandbox.deliveries({ state: 'scheduled' }).map((delivery) => delivery.id)).toEqual([copy!.id]);
    await sandbox.whenDeliveriesSettled();
    const [logged, loggedCopy] = sandbox.deliveries();
    expect([logged!.state, loggedCopy!.state]).toEqual(['succeeded', 'succeeded']);
    expect(Date.parse(loggedCopy!.attempts[0]!.startedAt) - Date.parse(logged!.attempts[0]!.startedAt)).toBeGreaterThanOrEqual(290);
    expect(partner.received.map((received) => received.rawBody)).toEqual([JSON.stringify(first!.event), JSON.stringify(first!.event)]);
    expect(partner.rejected).toEqual([]);
  });

  it('duplicate: false sends once and duplicate: true twice, whatever the rate (sendEvent, POST /__sandbox/events); anything else is refused', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 200 });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    expect(sandbox.sendEvent('user.created').map((delivery) => delivery.copyOf)).toEqual([undefined]);
    const [first, copy] = sandbox.sendEvent('user.created', undefined, { duplicate: true });
    expect(copy!.copyOf).toBe(first!.id);
    const twice = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'user.created', duplicate: true });
    expect(twice.status).toBe(202);
    expect((twice.body.deliveries as Delivery[]).map((delivery) => delivery.copyOf === undefined)).toEqual([true, false]);
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'user.created', duplicate: 'yes' })).toMatchObject({ status: 422, body: { message: expect.stringContaining('duplicate must be true or false') } });
    await sandbox.whenDeliveriesSettled();
    expect(partner.received).toHaveLength(5);
    const alwaysPartner = await receiver({ publicKey: () => always.publicKey, answer: () => 200 });
    const always = await sandboxWith({ webhookUrls: [alwaysPartner.url], duplicateRate: 1 });
    expect(always.sendEvent('user.created', undefined, { duplicate: false })).toHaveLength(1);
    await always.whenDeliveriesSettled();
    expect(alwaysPartner.received).toHaveLength(1);
  });

  it('close() ends a duplicate still scheduled as failed, without a request', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 200 });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url], duplicateRate: 1, duplicateAfterMs: 60_000 });
    const [sent, pending] = sandbox.sendEvent('user.created');
    await expect.poll(() => sandbox.deliveries({ id: sent!.id })[0]!.state).toBe('succeeded');
    await sandbox.close();
    await sandbox.whenDeliveriesSettled();
    expect(sandbox.deliveries({ id: pending!.id })[0]).toMatchObject({ state: 'failed', attempts: [] });
    expect(partner.received).toHaveLength(1);
  });

  it('refuses a duplicateRate outside 0 to 1 and a duplicateAfterMs below 0, naming the option', async () => {
    await expect(startSandbox({ duplicateRate: 2 })).rejects.toThrow(/duplicateRate must be the share of deliveries sent twice, a number from 0 to 1/);
    await expect(startSandbox({ duplicateRate: Number.NaN })).rejects.toThrow(/duplicateRate/);
    await expect(startSandbox({ duplicateAfterMs: -1 })).rejects.toThrow(/duplicateAfterMs must be a number of milliseconds >= 0/);
  });
});

describe('sends an event of a named user on request (POST /__sandbox/events with userId)', () => {
  it('sends that user as a user event, and a sample transaction of that user (never the User itself) as card.transaction.created', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const user = sandbox.users.create({ email: 'grace@example.com' });
    await sandbox.whenDeliveriesSettled();
    partner.received.length = 0;
    for (const eventType of ['kyc.status.changed', 'card.transaction.created', 'card.transaction.created']) {
      expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType, userId: user.id })).status).toBe(202);
    }
    await sandbox.whenDeliveriesSettled();
    const events = partner.received.map((delivery) => delivery.event);
    expect(events).toHaveLength(3);
    expect(events.find((event) => event.eventType === 'kyc.status.changed')).toEqual({ eventType: 'kyc.status.changed', data: user });
    const transactions = events.filter((event) => event.eventType === 'card.transaction.created');
    for (const transaction of transactions) {
      expect(transaction.data).toMatchObject({ id: expect.stringMatching(/^txn_sandbox_[0-9a-f-]{36}$/), userId: user.id, amount: 1250, currency: 'USD' });
      expect(transaction.data).not.toHaveProperty('email');
    }
    // Two transactions, two ids (a partner keys them by id; the receiver orders per id).
    expect(new Set(transactions.map((transaction) => (transaction.data as { id: string }).id)).size).toBe(2);
  });
});

describe('keeps a delivery log of every delivery and attempt under /__sandbox/deliveries', () => {
  it('lists deliveries with the event, the endpoint, the state and each attempt; filters; clears', async () => {
    const ok = await receiver({ publicKey: () => sandbox.publicKey });
    const failing = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 400 });
    const sandbox = await sandboxWith({ webhookUrls: [ok.url, failing.url], timeScale: 6000 });
    const sent = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'card.transaction.created' });
    expect(sent.status).toBe(202);
    expect(sent.body.deliveries).toHaveLength(2);
    await sandbox.whenDeliveriesSettled();

    const log = await callAdmin<{ deliveries: Delivery[] }>(sandbox.baseUrl, 'GET', '/__sandbox/deliveries');
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toEqual(sandbox.deliveries());
    const [first, second] = log.body.deliveries;
    expect(first).toMatchObject({ eventType: 'card.transaction.created', url: ok.url, state: 'succeeded', nextAttemptAt: null });
    expect(first!.attempts).toHaveLength(1);
    expect(first!.attempts[0]).toMatchObject({ attempt: 1, delayMs: 0, status: 204, outcome: 'succeeded' });
    expect(first!.event).toEqual(ok.received[0]!.event);
    expect(second).toMatchObject({ url: failing.url, state: 'failed' });
    expect(second!.attempts.map((attempt) => attempt.status)).toEqual([400, 400, 400, 400]);
    for (const attempt of second!.attempts) expect(Date.parse(attempt.finishedAt)).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt));

    const failed = await callAdmin<{ deliveries: Delivery[] }>(sandbox.baseUrl, 'GET', '/__sandbox/deliveries?state=failed');
    expect(failed.body.deliveries.map((delivery) => delivery.url)).toEqual([failing.url]);
    const byUrl = await callAdmin<{ deliveries: Delivery[] }>(sandbox.baseUrl, 'GET', `/__sandbox/deliveries?url=${encodeURIComponent(ok.url)}`);
    expect(byUrl.body.deliveries).toHaveLength(1);
    expect((await callAdmin(sandbox.baseUrl, 'DELETE', '/__sandbox/deliveries')).body.deliveries).toEqual([]);
    expect(sandbox.deliveries()).toEqual([]);
  });

  it('GET /__sandbox/deliveries/settled answers once the deliveries have settled, those a cleared log no longer shows included; 504 naming them after timeoutMs', async () => {
    let failures = 1;
    const flaky = await receiver({ publicKey: () => sandbox.publicKey, answer: () => (failures-- > 0 ? 500 : 204) });
    const sandbox = await sandboxWith({ webhookUrls: [flaky.url], timeScale: 60 });
    await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'user.created' });
    while (sandbox.deliveries()[0]?.state !== 'retrying') await new Promise((resolve) => setTimeout(resolve, 10));
    // Cleared while its retry is due (a second away): the log is empty, the retry goes on.
    await callAdmin(sandbox.baseUrl, 'DELETE', '/__sandbox/deliveries');
    const tooSoon = await callAdmin<{ code: string; message: string; unsettled: Delivery[] }>(sandbox.baseUrl, 'GET', '/__sandbox/deliveries/settled?timeoutMs=20');
    expect(tooSoon.status).toBe(504);
    expect(tooSoon.body.code).toBe('deliveries_not_settled');
    expect(tooSoon.body.unsettled.map((delivery) => [delivery.eventType, delivery.state])).toEqual([['user.created', 'retrying']]);
    expect(tooSoon.body.message).toMatch(/user\.created to .*: retrying, 1 attempt, last failed \(HTTP 500\), next attempt at /);
    const settled = await callAdmin(sandbox.baseUrl, 'GET', `/__sandbox/deliveries/settled?timeoutMs=10000&eventType=user.created&url=${encodeURIComponent(flaky.url)}`);
    expect(settled).toMatchObject({ status: 200, body: { settled: true } });
    expect(flaky.received).toHaveLength(2);
    for (const query of ['timeoutMs=0', 'timeoutMs=1.5', 'timeoutMs=600001', 'state=failed']) {
      expect((await callAdmin(sandbox.baseUrl, 'GET', `/__sandbox/deliveries/settled?${query}`)).status).toBe(422);
    }
  });

  it('shows a delivery waiting for its retry as retrying, with the time of the next attempt', async () => {
    const failing = await receiver({ publicKey: () => sandbox.publicKey, answer: () => 500 });
    const sandbox = await sandboxWith({ webhookUrls: [failing.url] });
    sandbox.sendEvent('user.created');
    while (sandbox.deliveries()[0]!.attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const [delivery] = sandbox.deliveries();
    expect(delivery!.state).toBe('retrying');
    expect(Date.parse(delivery!.nextAttemptAt!) - Date.parse(delivery!.attempts[0]!.finishedAt)).toBeGreaterThanOrEqual(59_000);
    await sandbox.close();
    expect(sandbox.deliveries()[0]!.state).toBe('failed');
  });
});

describe('configures webhook endpoints at run time, like the partner dashboard', () => {
  it('adds, lists and removes endpoints; refuses URLs that are not http(s)', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({});
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/webhook-endpoints', { url: partner.url })).status).toBe(201);
    expect((await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/webhook-endpoints')).body.endpoints).toEqual([partner.url]);
    sandbox.sendEvent('user.created');
    await sandbox.whenDeliveriesSettled();
    expect(partner.received).toHaveLength(1);
    expect((await callAdmin(sandbox.baseUrl, 'DELETE', `/__sandbox/webhook-endpoints?url=${encodeURIComponent(partner.url)}`)).body.endpoints).toEqual([]);
    const bad = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/webhook-endpoints', { url: 'ftp://example.com' });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/not an http\(s\) URL/);
    expect((await callAdmin(sandbox.baseUrl, 'DELETE', `/__sandbox/webhook-endpoints?url=${encodeURIComponent(partner.url)}`)).status).toBe(404);
  });
});

describe('sends an event kind the SDK does not know, only when asked to (reference 6.1: other kinds are not shown)', () => {
  it('POST /__sandbox/events with unknownEventType: true delivers {eventType, data} as given, signed like any event', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const sent = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'card.statement.created', data: { id: 'st_1', total: 1250 }, unknownEventType: true });
    expect(sent.status).toBe(202);
    expect(sent.body.deliveries).toHaveLength(1);
    // Without data, the data is {}.
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'other.kind', unknownEventType: true })).status).toBe(202);
    await sandbox.whenDeliveriesSettled();
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.rawBody)).toEqual(['{"eventType":"card.statement.created","data":{"id":"st_1","total":1250}}', '{"eventType":"other.kind","data":{}}']);
    expect(sandbox.deliveries().map((delivery) => [delivery.eventType, delivery.state])).toEqual([
      ['card.statement.created', 'succeeded'],
      ['other.kind', 'succeeded'],
    ]);
  });

  it('sandbox.sendEvent(type, data, { unknownEventType: true }) does the same', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const [delivery] = sandbox.sendEvent('account.frozen', { id: 'acc_1' }, { unknownEventType: true });
    expect(delivery!.eventType).toBe('account.frozen');
    await sandbox.whenDeliveriesSettled();
    expect(partner.received.map((received) => received.event)).toEqual([{ eventType: 'account.frozen', data: { id: 'acc_1' } }]);
  });

  it('still refuses a typo of a known kind without the opt-in, suggesting the known kind, over HTTP and in code', async () => {
    const sandbox = await sandboxWith({});
    const typo = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.chnaged' });
    expect(typo).toMatchObject({ status: 422, body: { code: 'ValidationError', message: expect.stringMatching(/got "kyc\.status\.chnaged"\. Did you mean "kyc\.status\.changed"\?$/) } });
    expect(() => sandbox.sendEvent('user.creatd' as never)).toThrow(expect.objectContaining({ name: 'EventPublishError', code: 'invalid_event', message: expect.stringMatching(/Did you mean "user\.created"\?$/) }));
    expect(sandbox.deliveries()).toEqual([]);
  });

  it('refuses the opt-in with a known kind, with data that is not an object, with userId, or with a non-boolean', async () => {
    const sandbox = await sandboxWith({});
    const post = (body: unknown) => callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', body);
    const known = await post({ eventType: 'user.created', data: {}, unknownEventType: true });
    expect(known).toMatchObject({ status: 422, body: { code: 'invalid_event', message: expect.stringMatching(/user\.created is an event kind the SDK knows; leave out unknownEventType/) } });
    expect((await post({ eventType: 'other.kind', data: [1], unknownEventType: true })).body.message).toMatch(/data must be a JSON object/);
    expect((await post({ eventType: '', unknownEventType: true })).body.message).toMatch(/eventType must be a string of 1 to 200 characters/);
    expect((await post({ eventType: 'other.kind', userId: 'x', unknownEventType: true })).body.message).toMatch(/userId picks the data of a known event kind/);
    expect((await post({ eventType: 'other.kind', unknownEventType: 'yes' })).body.message).toMatch(/unknownEventType must be true or false/);
    expect(() => sandbox.sendEvent('kyc.status.changed', {}, { unknownEventType: true })).toThrow(/is an event kind the SDK knows/);
    expect(sandbox.deliveries()).toEqual([]);
  });
});

describe('sends a known kind only with the fields the spec defines, unless allowUnknownFields (tolerance tests)', () => {
  const withPan = (user: Record<string, any>) => ({ ...user, cards: [{ ...user.cards[0], pan: '4111111111111111' }] });
  const withAccount = (user: Record<string, any>) => ({ ...user, account: { foo: 1 } });
  const card = { id: 'crd_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true };

  it('POST /__sandbox/events answers 422 invalid_event naming the JSON path of each unknown field, over HTTP and in code; sends nothing', async () => {
    const sandbox = await sandboxWith({});
    const user = sandbox.users.create({ email: 'ada@example.com', cards: [card] });
    const post = (body: unknown) => callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', body);
    const pan = await post({ eventType: 'kyc.status.changed', data: withPan(user) });
    expect(pan).toMatchObject({ status: 422, body: { code: 'invalid_event' } });
    expect(pan.body.message).toMatch(/^The kyc\.status\.changed event's data has a field its schema does not define: data\.cards\[0\]\.pan \(the Card fields are id, cardToken, lastFourDigits, embossedName, activatedAt, virtual\)\./);
    expect(pan.body.message).toMatch(/remove it/);
    expect(pan.body.message).toMatch(/"allowUnknownFields": true/);
    expect(pan.body.message).toMatch(/"unknownEventType": true/);
    const account = await post({ eventType: 'user.created', data: withAccount(withPan(user)) });
    expect(account).toMatchObject({ status: 422, body: { code: 'invalid_event', message: expect.stringMatching(/has fields its schema does not define: data\.account \(the User fields are id, email, .*\); data\.cards\[0\]\.pan \(the Card fields/) } });
    const wallets = await post({ eventType: 'kyc.source-of-funds.changed', data: { ...user, signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', ens: 'ada.eth', x: 1 }] } });
    expect(wallets.body.message).toMatch(/data\.signInWallets\[0\]\.ens, data\.signInWallets\[0\]\.x \(the SignInWallet fields are address\)/);
    expect(() => sandbox.sendEvent('kyc.phone-validation.changed', { ...user, bankingDetails: { providerIban: null, providerBic: null, providerIbanStatus: null, address: null, secret: 1 } })).toThrow(
      expect.objectContaining({ name: 'EventPublishError', code: 'invalid_event', message: expect.stringMatching(/data\.bankingDetails\.secret \(the BankingDetails fields are/) }),
    );
    // The open schema lets these through; strict validation (no field beyond the spec's) does not, like the sandbox.
    for (const data of [withPan(user), withAccount(user)]) expect(validateWebhookEvent({ eventType: 'user.created', data }).ok).toBe(true);
    for (const data of [withPan(user), withAccount(user)]) expect(validateWebhookEvent({ eventType: 'user.created', data }, { strict: true }).ok).toBe(false);
    await sandbox.whenDeliveriesSettled();
    expect(sandbox.deliveries().filter((delivery) => delivery.eventType !== 'user.created')).toEqual([]);
  });

  it('with "allowUnknownFields": true (sendEvent: { allowUnknownFields: true }) sends them, so that a receiver\'s tolerance of newer fields can be tested', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const user = sandbox.users.create({ email: 'grace@example.com', cards: [card] });
    await sandbox.whenDeliveriesSettled();
    partner.received.length = 0;
    const sent = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', data: withAccount(withPan(user)), allowUnknownFields: true });
    expect(sent.status).toBe(202);
    sandbox.sendEvent('user.created', withPan(user), { allowUnknownFields: true });
    await sandbox.whenDeliveriesSettled();
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event)).toEqual([
      { eventType: 'kyc.status.changed', data: withAccount(withPan(user)) },
      { eventType: 'user.created', data: withPan(user) },
    ]);
    // Only unknown fields are let through: the data must still match the event's schema.
    const broken = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', data: { ...withPan(user), kycStatus: 'done' }, allowUnknownFields: true });
    expect(broken).toMatchObject({ status: 422, body: { code: 'invalid_event', message: expect.stringMatching(/does not match the spec/) } });
    const notBoolean = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', allowUnknownFields: 'yes' });
    expect(notBoolean).toMatchObject({ status: 422, body: { code: 'ValidationError', message: 'allowUnknownFields must be true or false; got "yes".' } });
  });

  it('leaves card.transaction.created alone: its data is not shown in the reference, so no field is unknown', async () => {
    const sandbox = await sandboxWith({});
    const sent = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'card.transaction.created', data: { id: 'txn_1', merchant: { name: 'Café', mcc: '5814' } } });
    expect(sent.status).toBe(202);
  });
});

describe('sends a known kind\'s data unchecked on request ("unchecked": true), signed like any event: schema drift for a receiver\'s dead-letter path', () => {
  const card = { id: 'crd_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true };

  it('POST /__sandbox/events with "unchecked": true sends a kycStatus today\'s schema does not have and a User without email, signed with the sandbox key; without it 422 names the opt-in', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const user = sandbox.users.create({ email: 'ada@example.com', cards: [card] });
    await sandbox.whenDeliveriesSettled();
    partner.received.length = 0;
    const drifted = { ...user, kycStatus: 'verifiedByPartner' };
    const { email: _email, ...withoutEmail } = user;
    const post = (body: unknown) => callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', body);

    const refused = await post({ eventType: 'kyc.status.changed', data: drifted });
    expect(refused).toMatchObject({ status: 422, body: { code: 'invalid_event' } });
    expect(refused.body.message).toMatch(/^The kyc\.status\.changed event does not match the spec: \/data\/kycStatus must be one of: .*\. .*schema drift .*dead-letter store and replay\(\)\), add "unchecked": true \(sendEvent\(type, data, \{ unchecked: true \}\)\)\.$/);

    expect((await post({ eventType: 'kyc.status.changed', data: drifted, unchecked: true })).status).toBe(202);
    expect((await post({ eventType: 'user.created', data: withoutEmail, unchecked: true })).status).toBe(202);
    await sandbox.whenDeliveriesSettled();
    // Verified with the key the sandbox serves, as any event.
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event)).toEqual([
      { eventType: 'kyc.status.changed', data: drifted },
      { eventType: 'user.created', data: withoutEmail },
    ]);
    for (const { event } of partner.received) expect(validateWebhookEvent(event).ok).toBe(false);
  });

  it('sandbox.sendEvent(type, data, { unchecked: true }) does the same; the data must still be a JSON object, the kind a known one, the flag a boolean', async () => {
    const partner = await receiver({ publicKey: () => sandbox.publicKey });
    const sandbox = await sandboxWith({ webhookUrls: [partner.url] });
    const [delivery] = sandbox.sendEvent('kyc.status.changed', { id: 'usr_1', kycStatus: 'verifiedByPartner' }, { unchecked: true });
    expect(delivery!.eventType).toBe('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();
    expect(partner.received.map((received) => received.rawBody)).toEqual(['{"eventType":"kyc.status.changed","data":{"id":"usr_1","kycStatus":"verifiedByPartner"}}']);
    expect(() => sandbox.sendEvent('kyc.status.changed', { id: 'usr_1', kycStatus: 'x' })).toThrow(expect.objectContaining({ name: 'EventPublishError', message: expect.stringMatching(/add "unchecked": true/) }));

    const post = (body: unknown) => callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', body);
    expect(await post({ eventType: 'kyc.status.changed', data: [1], unchecked: true })).toMatchObject({ status: 422, body: { code: 'invalid_event', message: expect.stringMatching(/data must be a JSON object .*got an array/) } });
    expect(await post({ eventType: 'kyc.status.changed', data: 'text', unchecked: true })).toMatchObject({ status: 422, body: { message: expect.stringMatching(/data must be a JSON object/) } });
    expect(await post({ eventType: 'kyc.status.changed', unchecked: 'yes' })).toMatchObject({ status: 422, body: { code: 'ValidationError', message: 'unchecked must be true or false; got "yes".' } });
    expect(await post({ eventType: 'card.statement.created', data: {}, unchecked: true })).toMatchObject({ status: 422, body: { message: expect.stringMatching(/add "unknownEventType": true/) } });
    expect(() => sandbox.sendEvent('kyc.status.changed', 'text', { unchecked: true })).toThrow(/data must be a JSON object/);
    expect(sandbox.deliveries()).toHaveLength(1);
  });

  it("a @capi/webhook-receiver with a dead-letter store keeps the drifted event (202 invalid_event_dead_lettered), as guide 03 describes", async () => {
    const sandbox = await sandboxWith({});
    const deadLetters = createMemoryDeadLetterStore();
    const handled: string[] = [];
    const errors: string[] = [];
    const webhookReceiver = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` }),
      deadLetters,
      onError: (error) => void errors.push((error as { code?: string }).code ?? String(error)),
    }).on('kyc.status.changed', async (event) => {
      handled.push(event.data.kycStatus);
    });
    const server = createServer(toNodeHandler(webhookReceiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    sandbox.addWebhookEndpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
    const user = sandbox.users.create({ email: 'ada@example.com' });
    sandbox.sendEvent('kyc.status.changed', { ...user, kycStatus: 'verifiedByPartner' }, { unchecked: true });
    await sandbox.whenDeliveriesSettled();
    const drifted = sandbox.deliveries().find((delivery) => delivery.eventType === 'kyc.status.changed')!;
    expect(drifted.state).toBe('succeeded');
    expect(drifted.attempts.map((attempt) => attempt.status)).toEqual([202]);
    expect(drifted.attempts[0]!.responseBody).toMatch(/invalid_event_dead_lettered/);
    expect(handled).toEqual([]);
    expect(await deadLetters.list(10)).toHaveLength(1);
    expect(errors).toHaveLength(1); // onError hears of the refused event
  });
});

describe('checks the cards of a User sent as event data as it checks seeded users: four-digit lastFourDigits', () => {
  const card = { id: 'crd_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true };

  it('refuses lastFourDigits that are not four digits in explicit data (422 over HTTP, EventPublishError in code, also with allowUnknownFields); unchecked sends it', async () => {
    const sandbox = await sandboxWith({});
    const user = sandbox.users.create({ email: 'ada@example.com', cards: [card] });
    const bad = { ...user, cards: [card, { ...card, id: 'crd_2', lastFourDigits: 'ab' }] };
    const refused = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', data: bad });
    expect(refused).toMatchObject({ status: 422, body: { code: 'invalid_event', message: expect.stringMatching(/does not match the spec: data\.cards\[1\]\.lastFourDigits must be the last four digits of the card number, e\.g\. "4242"; got "ab"\./) } });
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'user.created', data: bad, allowUnknownFields: true })).status).toBe(422);
    expect(() => sandbox.sendEvent('kyc.status.changed', { ...user, cards: [{ ...card, lastFourDigits: '42424' }] })).toThrow(
      expect.objectContaining({ name: 'EventPublishError', code: 'invalid_event', message: expect.stringMatching(/data\.cards\[0\]\.lastFourDigits must be the last four digits/) }),
    );
    await sandbox.whenDeliveriesSettled();
    const before = sandbox.deliveries().length;
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', data: bad, unchecked: true })).status).toBe(202);
    expect(sandbox.deliveries().length).toBe(before); // no endpoint: accepted, nothing to deliver to
    // card.transaction.created's data is not a User: not checked so.
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'card.transaction.created', data: { id: 'txn_1', cards: [{ lastFourDigits: 'ab' }] } })).status).toBe(202);
  });
});

describe('refuses events and users that do not match the spec', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ users: [] });
  });
  afterAll(() => sandbox.close());

  it('answers 422 invalid_user, naming the path, for an unknown field inside a card, a wallet, bankingDetails or availableFeatures, and for lastFourDigits that are not four digits', async () => {
    const card = { id: 'crd_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true };
    const banking = { providerIban: null, providerBic: null, providerIbanStatus: null, address: null };
    const cases: [unknown, RegExp][] = [
      [{ cards: [card, { ...card, id: 'crd_2', pan: '4111111111111111' }] }, /cards\[1\] has an unknown field "pan"; the Card fields are id, cardToken, lastFourDigits, embossedName, activatedAt, virtual\.$/],
      [{ bankingDetails: { ...banking, secret: 1 } }, /bankingDetails has an unknown field "secret"; the BankingDetails fields are providerIban, providerBic, providerIbanStatus, address\.$/],
      [{ availableFeatures: { providerIban: true, other: true } }, /availableFeatures has an unknown field "other"; the AvailableFeatures fields are providerIban\.$/],
      [{ smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100', label: 'main' }] }, /smartWallets\[0\] has an unknown field "label"; the SmartWallet fields are address, chainId\.$/],
      [{ signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', ens: 'ada.eth', x: 1 }] }, /signInWallets\[0\] has unknown fields "ens", "x"; the SignInWallet fields are address\.$/],
      [{ cards: [{ ...card, lastFourDigits: 'ab' }] }, /cards\[0\]\.lastFourDigits must be the last four digits of the card number, e\.g\. "4242"; got "ab"\.$/],
      [{ cards: [{ ...card, lastFourDigits: '42424' }] }, /cards\[0\]\.lastFourDigits must be the last four digits/],
    ];
    const own = await sandboxWith({});
    for (const [seed, pattern] of cases) {
      const refused = await callAdmin(own.baseUrl, 'POST', '/__sandbox/users', seed);
      expect(refused, JSON.stringify(seed)).toMatchObject({ status: 422, body: { code: 'invalid_user', message: expect.stringMatching(pattern) } });
      expect(() => own.users.create(seed as never)).toThrow(expect.objectContaining({ name: 'UserRegistryError', code: 'invalid_user' }));
    }
    expect(own.users.list()).toEqual([]);
    expect(own.deliveries()).toEqual([]);
    // Seeds at start are refused the same way.
    await expect(startSandbox({ users: [cases[0]![0] as never] })).rejects.toThrow(expect.objectContaining({ name: 'SandboxConfigError', code: 'invalid_user', message: expect.stringMatching(/User 1 of the seeded users is unusable: cards\[1\] has an unknown field "pan"/) }));
    // The same records with exactly their fields are accepted.
    const accepted = await callAdmin(own.baseUrl, 'POST', '/__sandbox/users', { cards: [card], bankingDetails: banking, availableFeatures: { providerIban: true } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.cards).toEqual([card]);
  });

  it('answers 422 for an unknown event type and for data that is not a User', async () => {
    const unknown = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'user.deleted' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toMatch(/eventType must be one of/);
    // Far from every known kind: the message says how to send it on purpose.
    const other = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'other.kind', data: {} });
    expect(other).toMatchObject({ status: 422, body: { code: 'ValidationError', message: expect.stringMatching(/got "other\.kind"\. To send an event kind the SDK does not know .*add "unknownEventType": true/) } });
    const badData = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', data: { id: 'x' } });
    expect(badData.status).toBe(422);
    expect(badData.body.code).toBe('invalid_event');
    expect(() => sandbox.sendEvent('user.created', { id: 1 })).toThrow(/does not match the spec/);
  });

  it('refuses a sendEvent `to` that is not a list of URLs', () => {
    expect(() => sandbox.sendEvent('user.created', undefined, { to: 'http://localhost:3000/webhooks' as never })).toThrow(
      expect.objectContaining({ name: 'EventPublishError', code: 'invalid_endpoint', message: expect.stringMatching(/to must be an array of endpoint URLs/) }),
    );
    expect(sandbox.deliveries()).toEqual([]);
  });

  it('answers 422 for an invalid user, 409 for a wallet already taken, 404 for an unknown user, 400 for a body that is not JSON', async () => {
    const invalid = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { kycStatus: 'done' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toMatch(/kycStatus/);
    const misspelt = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { emial: 'ada@example.com' });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.message).toMatch(/unknown User field "emial"; the fields are id, email, phone/);
    expect(sandbox.users.list()).toEqual([]);
    const wallet = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { signInWallets: [wallet] })).status).toBe(201);
    const taken = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { signInWallets: [wallet.toLowerCase()] });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toMatch(/already belongs/);
    const notAWallet = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', { signInWallets: ['0x123'] });
    expect(notAWallet.status).toBe(422);
    expect((await callAdmin(sandbox.baseUrl, 'PUT', '/__sandbox/users/nope/kyc-status', { kycStatus: 'approved' })).status).toBe(404);
    const badStatus = await callAdmin(sandbox.baseUrl, 'PUT', `/__sandbox/users/${sandbox.users.list()[0]!.id}/kyc-status`, { kycStatus: 'done' });
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.message).toMatch(/notStarted, documentsRequested/);
    const notJson = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users', '{');
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('InvalidJson');
    expect((await callAdmin(sandbox.baseUrl, 'PATCH', '/__sandbox/users')).status).toBe(405);
  });
});
