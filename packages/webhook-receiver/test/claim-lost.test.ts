// A delivery's handlers that finish after the deduplication store lost their claim (it expired
// after claimTtlMs and another delivery took the subject, or a Redis restart without persistence
// lost it) ran at the same time as another event of the subject: the partner's data holds
// whichever wrote last. onError is told (claim_lost), on the memory store and a real redis-server.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryDedupeStore,
  createRedisDedupeStore,
  createWebhookReceiver,
  WebhookReceiverError,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiver,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { createFakeService, type FakeService } from './helpers/service.js';

let service: FakeService;
let redisServer: RedisServer;
let redis: Redis;
beforeAll(async () => {
  [service, redisServer] = await Promise.all([createFakeService(), startRedisServer()]);
  redis = new Redis({ host: '127.0.0.1', port: redisServer.port });
});
afterAll(async () => {
  redis?.disconnect();
  await redisServer?.close();
});

async function deliver(receiver: WebhookReceiver, body: string) {
  const { status, code } = await service.receive(receiver, body);
  return `${status} ${code}`;
}

/**
 * A receiver whose KYC handler waits for `release()` on the first call (`holding` resolves once
 * it does); `written` is the partner's data.
 */
function partner(dedupe: DedupeStore) {
  const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
  const written: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  let holdingStarted!: () => void;
  const holding = new Promise<void>((resolve) => { holdingStarted = resolve; });
  let calls = 0;
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, dedupe, subjectWaitMs: 5_000, onError: (error, context) => { reports.push({ error, context }); } })
    .on('kyc.status.changed', async (event) => {
      if (calls++ === 0) {
        holdingStarted();
        await held;
      }
      written.push(event.data.kycStatus);
    });
  return { receiver, reports, written, release, holding };
}

const lost = (reports: Array<{ error: unknown }>) => reports.filter(({ error }) => error instanceof WebhookReceiverError && error.code === 'claim_lost');

describe('a handler that finishes after its claim was lost is reported (claim_lost)', () => {
  it('on the memory store, when the claim expired (claimTtlMs: a store that does not renew claims, or one unreachable that long) and the next event of the subject took it', async () => {
    // Without renewClaim: the receiver cannot keep the claim of the handler still running.
    const { renewClaim: _renewClaim, claimTtlMs: _claimTtlMs, ...withoutRenewal } = createMemoryDedupeStore({ claimTtlMs: 100 });
    const { receiver, reports, written, release, holding } = partner(withoutRenewal);
    const first = deliver(receiver, eventBody('kyc.status.changed', 'u1', { kycStatus: 'pending' }));
    // Its handler runs (the two deliveries, sent at once, could reach the claim in either order).
    await holding;
    // The next event waits in line, then finds the claim expired and takes the subject.
    expect(await deliver(receiver, eventBody('kyc.status.changed', 'u1', { kycStatus: 'approved' }))).toBe('200 processed');
    expect(reports).toEqual([]);
    release();
    expect(await first).toBe('200 processed');
    expect(written).toEqual(['approved', 'pending']);
    expect(lost(reports)).toHaveLength(1);
    expect(lost(reports)[0]).toMatchObject({ context: { outcome: 'processed', afterReply: false, delivery: { bodySha256: expect.any(String) } } });
    expect((lost(reports)[0]!.error as Error).message).toMatch(/^The handlers of kyc\.status\.changed:u1 finished, but the deduplication store no longer held this delivery's claim: it expired \(claimTtlMs/);
  });

  it('on a real redis-server, when Redis lost the claim (restarted empty) while the handler ran', async () => {
    const keyPrefix = `claim-lost:${process.pid}:`;
    const { receiver, reports, written, release, holding } = partner(createRedisDedupeStore({ client: redis, keyPrefix }));
    const first = deliver(receiver, eventBody('kyc.status.changed', 'u2', { kycStatus: 'pending' }));
    await holding;
    expect(await redis.keys(`${keyPrefix}*`)).toHaveLength(1);
    await redis.flushall(); // what a restart without persistence leaves
    // Another process on the same Redis (a second receiver) finds the subject free, and handles
    // the next event while the first handler still runs.
    const other = createWebhookReceiver({ publicKey: service.publicKey, dedupe: createRedisDedupeStore({ client: redis, keyPrefix }), onError: () => undefined })
      .on('kyc.status.changed', (event) => { written.push(event.data.kycStatus); });
    expect(await deliver(other, eventBody('kyc.status.changed', 'u2', { kycStatus: 'approved' }))).toBe('200 processed');
    release();
    expect(await first).toBe('200 processed');
    expect(written).toEqual(['approved', 'pending']);
    expect(lost(reports)).toHaveLength(1);
    expect((lost(reports)[0]!.error as Error).message).toContain('or the store lost it (a Redis restart or failover without persistence)');
  });
});
