import { afterAll, describe, expect, it } from 'vitest';
import { SandboxConfigError, startSandbox, type DeliveryAttemptLogEntry, type RequestLogEntry, type Sandbox, type SandboxLogEntry } from '../src/index.js';
import { startPlainReceiver } from './support/webhook-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function sandboxWithLog(onLog: (entry: SandboxLogEntry) => void): Promise<Sandbox> {
  const sandbox = await startSandbox({ users: [{ email: 'log@example.com' }], timeScale: 600, onLog });
  closers.push(() => sandbox.close());
  return sandbox;
}

describe('onLog receives one entry per request answered and per webhook delivery attempt', () => {
  it('a request: method, path without its query, status, duration and the printed line; preflights and refusals too', async () => {
    const entries: SandboxLogEntry[] = [];
    const sandbox = await sandboxWithLog((entry) => entries.push(entry));
    await (await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`)).text();
    await (await fetch(`${sandbox.baseUrl}/__sandbox/deliveries?url=${encodeURIComponent('http://secret.example')}`)).text();
    await (await fetch(`${sandbox.baseUrl}/user-api/user/account/limit`)).text();
    await (await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`, { method: 'OPTIONS', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET' } })).text();
    await (await fetch(`${sandbox.webhooksUrl}/api/v1/public-key`)).text();
    for (let i = 0; i < 100 && entries.length < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const requests = entries as RequestLogEntry[];
    expect(requests.map(({ kind, method, path, status }) => ({ kind, method, path, status }))).toEqual([
      { kind: 'request', method: 'GET', path: '/api/v1/auth/nonce', status: 200 },
      { kind: 'request', method: 'GET', path: '/__sandbox/deliveries', status: 200 },
      // The limit is the newer generation's: this (older) sandbox refuses it with 404.
      { kind: 'request', method: 'GET', path: '/user-api/user/account/limit', status: 404 },
      { kind: 'request', method: 'OPTIONS', path: '/api/v1/auth/nonce', status: 204 },
      { kind: 'request', method: 'GET', path: '/api/v1/public-key', status: 200 },
    ]);
    for (const entry of requests) {
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(entry.time))).toBe(false);
      expect(entry.message).toBe(`${entry.method} ${entry.path} ${entry.status} ${entry.durationMs} ms`);
    }
    expect(JSON.stringify(entries)).not.toContain('secret');
  });

  it('a delivery attempt: event type, URL, attempt, status, the receiver\'s code, and the next attempt until it is given up', async () => {
    const entries: SandboxLogEntry[] = [];
    const sandbox = await sandboxWithLog((entry) => entries.push(entry));
    const partner = await startPlainReceiver({ publicKey: sandbox.publicKey, answer: (_, index) => (index === 0 ? 503 : 204) });
    closers.push(partner.close);
    const [delivery] = sandbox.sendEvent('kyc.status.changed', undefined, { to: [partner.url] });
    await sandbox.whenDeliveriesSettled();
    const attempts = entries.filter((entry): entry is DeliveryAttemptLogEntry => entry.kind === 'delivery-attempt');
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ deliveryId: delivery!.id, eventType: 'kyc.status.changed', url: partner.url, attempt: 1, status: 503, outcome: 'failed' });
    expect(attempts[0]!.nextAttemptAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(attempts[0]!.message).toBe(
      `webhook kyc.status.changed -> ${partner.url} attempt 1 (${attempts[0]!.durationMs} ms): HTTP 503 failed: refused with 503; attempt 2 of 4 at ${attempts[0]!.nextAttemptAt}`,
    );
    expect(attempts[1]).toMatchObject({ attempt: 2, status: 204, outcome: 'succeeded', nextAttemptAt: null });
    expect(attempts[1]!.receiverCode).toBeUndefined();
    expect(attempts[1]!.message).toBe(`webhook kyc.status.changed -> ${partner.url} attempt 2 (${attempts[1]!.durationMs} ms): HTTP 204 succeeded`);
  });

  it('an onLog that throws is reported once as a warning and disturbs neither requests nor deliveries', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const sandbox = await sandboxWithLog(() => {
        throw new Error('log sink full');
      });
      const partner = await startPlainReceiver({ publicKey: sandbox.publicKey });
      closers.push(partner.close);
      for (let i = 0; i < 3; i++) expect((await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`)).status).toBe(200);
      sandbox.sendEvent('user.created', undefined, { to: [partner.url] });
      await sandbox.whenDeliveriesSettled();
      expect(sandbox.deliveries().map((delivery) => delivery.state)).toEqual(['succeeded']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => /onLog threw \(log sink full\)/.test(warning.message))).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('refuses an onLog that is not a function', async () => {
    await expect(startSandbox({ onLog: 'console' as never })).rejects.toThrow(SandboxConfigError);
    await expect(startSandbox({ onLog: 'console' as never })).rejects.toThrow(/onLog must be a function taking one log entry/);
  });
});
