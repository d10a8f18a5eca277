import { createMemoryDedupeStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { serveWebhookEndpoint } from './support/webhook-receiver.js';

let sandbox: Sandbox;
const handled: { eventType: string; userId: unknown }[] = [];
let failNext = false;
let endpoint: { close(): Promise<void> };

beforeAll(async () => {
  sandbox = await startSandbox({ users: [], timeScale: 600 });
  // The partner's setup: the key comes from the sandbox's webhooks base URL, as from the live service.
  const receiver = createWebhookReceiver({
    publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` }),
    onError: () => {},
  }).onAny((event) => {
    if (failNext) {
      failNext = false;
      throw new Error('partner database unavailable');
    }
    handled.push({ eventType: event.eventType, userId: (event.data as { id?: unknown }).id });
  });
  endpoint = await serveWebhookEndpoint(sandbox, toNodeHandler(receiver));
});
afterAll(async () => {
  await sandbox.close();
  await endpoint.close();
});

describe('deliveries are accepted by @capi/webhook-receiver', () => {
  it('every user event is verified, validated and dispatched once, answered 2xx', async () => {
    const user = sandbox.users.create({ email: 'lin@example.com' });
    sandbox.users.setKycStatus(user.id, 'processing');
    sandbox.users.setPhoneValidation(user.id, true, '+3312345678');
    sandbox.users.setSourceOfFunds(user.id, true);
    sandbox.sendEvent('card.transaction.created');
    await sandbox.whenDeliveriesSettled();
    // Each event exactly once. Deliveries run concurrently and the platform promises no order
    // between them (the receiving guide, "Order: what you can rely on"), so the order is not compared.
    expect(handled.map((entry) => entry.eventType).sort()).toEqual([
      'card.transaction.created',
      'kyc.phone-validation.changed',
      'kyc.source-of-funds.changed',
      'kyc.status.changed',
      'user.created',
    ]);
    for (const delivery of sandbox.deliveries()) {
      expect(delivery.state).toBe('succeeded');
      expect(delivery.attempts[0]!.status).toBeGreaterThanOrEqual(200);
      expect(delivery.attempts[0]!.status).toBeLessThan(300);
    }
  });

  it('a handler failure answers 500 and the sandbox retry is processed', async () => {
    handled.length = 0;
    failNext = true;
    sandbox.sendEvent('kyc.status.changed');
    await sandbox.whenDeliveriesSettled();
    const last = sandbox.deliveries().at(-1)!;
    expect(last.attempts.map((attempt) => attempt.status)).toEqual([500, expect.any(Number)]);
    expect(last.state).toBe('succeeded');
    expect(handled.map((entry) => entry.eventType)).toEqual(['kyc.status.changed']);
  });

  it('an event kind the SDK does not know (sent with unknownEventType) is acknowledged 2xx and handed to no handler', async () => {
    handled.length = 0;
    sandbox.sendEvent('card.statement.created', { id: 'st_1' }, { unknownEventType: true });
    await sandbox.whenDeliveriesSettled();
    const last = sandbox.deliveries().at(-1)!;
    expect(last).toMatchObject({ eventType: 'card.statement.created', state: 'succeeded' });
    expect(last.attempts).toHaveLength(1);
    expect(last.attempts[0]!.responseBody).toMatch(/unknown_event_type/);
    expect(handled).toEqual([]);
  });
});

describe("a sandbox's shorter delivery timeout, given to the receiver's store as replyWindowMs", () => {
  it('a slow handler answered after the timeout is retried by the sandbox, and that retry is superseded by the newer event processed meanwhile: the receiver ends on the platform\'s state', async () => {
    // The sandbox waits 300 ms for an answer and retries 3 s after a failure (time scale 20).
    const short = await startSandbox({ users: [], timeScale: 20, deliveryTimeoutMs: 300 });
    const statuses: string[] = [];
    const reported: string[] = [];
    let slowDone!: () => void;
    const slow = new Promise<void>((resolve) => { slowDone = resolve; });
    const receiver = createWebhookReceiver({
      publicKey: short.publicKey,
      dedupe: createMemoryDedupeStore({ replyWindowMs: 300, minRetryDelayMs: 3_000 }),
      onError: (error) => void reported.push((error as { code?: string }).code ?? String(error)),
    }).on('kyc.status.changed', async (event) => {
      statuses.push(event.data.kycStatus);
      // The first event's handler outlives the sandbox's 300 ms: it counts the attempt failed.
      if (event.data.kycStatus === 'pending') {
        await new Promise((resolve) => setTimeout(resolve, 600));
        slowDone();
      }
    });
    const slowEndpoint = await serveWebhookEndpoint(short, toNodeHandler(receiver));
    try {
      const user = short.users.create({ email: 'ada@example.com' });
      short.users.setKycStatus(user.id, 'pending');
      await slow;
      // The newer event, sent once the slow handler is done and long before the retry (3 s).
      short.users.setKycStatus(user.id, 'approved');
      await short.whenDeliveriesSettled();

      expect(statuses).toEqual(['pending', 'approved']);
      expect(reported).toContain('handler_outlived_reply_window');
      const pending = short.deliveries().find((delivery) => delivery.eventType === 'kyc.status.changed' && delivery.attempts.length > 1)!;
      expect(pending.attempts.map((attempt) => attempt.outcome)).toEqual(['timed-out', 'succeeded']);
      expect(pending.attempts[1]!.responseBody).toMatch(/superseded/);
    } finally {
      await short.close();
      await slowEndpoint.close();
    }
  });
});

describe('a key rotation the receiver has not fetched yet', () => {
  it('an event refused 401 with the old key is recognised as authentic once the new key is fetched, and its retry does not undo the newer event processed meanwhile', async () => {
    // Retries after 1, 5 and 15 s (time scale 60); the receiver may refetch the key every 500 ms.
    const rotating = await startSandbox({ users: [], timeScale: 60 });
    const statuses: string[] = [];
    const receiver = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: `${rotating.webhooksUrl}/api/v1/public-key`, minRefreshIntervalMs: 500 }),
      dedupe: createMemoryDedupeStore({ minRetryDelayMs: 1_000 }),
      onError: () => {},
    }).on('kyc.status.changed', (event) => void statuses.push(event.data.kycStatus));
    const rotatingEndpoint = await serveWebhookEndpoint(rotating, toNodeHandler(receiver));
    try {
      const user = rotating.users.create({ email: 'grace@example.com' }); // user.created: the receiver fetches the key
      await rotating.whenDeliveriesSettled();
      await rotating.rotateWebhookKey();
      // Signed with the new key, within 500 ms of the last fetch: answered 401, retried in 1 s.
      rotating.users.setKycStatus(user.id, 'pending');
      await vi.waitFor(() => expect(rotating.deliveries().at(-1)!.attempts[0]?.status).toBe(401));
      // Past the refetch interval, before that retry: the newer event makes the receiver fetch
      // the new key, and is processed.
      await new Promise((resolve) => setTimeout(resolve, 600));
      rotating.users.setKycStatus(user.id, 'approved');
      await rotating.whenDeliveriesSettled();

      expect(statuses).toEqual(['approved']);
      const pending = rotating.deliveries().find((delivery) => delivery.attempts[0]?.status === 401)!;
      expect(pending.attempts.map((attempt) => attempt.status)).toEqual([401, 200]);
      expect(pending.attempts[1]!.responseBody).toMatch(/superseded/);
    } finally {
      await rotating.close();
      await rotatingEndpoint.close();
    }
  });
});
