// The partner must end on the platform's latest state when two events of one user reach the
// receivers in one order and the store hears of them in another: three ways found by an
// operations review (claims queued during a Redis outage, a first key fetch after a deploy, a
// process killed mid-handler). Real redis-server, real HTTP on loopback, the service's retry
// schedule scaled down (see helpers/service-schedule.ts); every event is a kyc.status.changed of
// one user, carrying the whole user as the platform had it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { createRedisDedupeStore, createWebhookReceiver, toNodeHandler, type WebhookReceiverOptions } from '../src/index.js';
import { bundleArrivalOrderReceiver, readRecord } from './helpers/arrival-order-processes.js';
import { startReceiverProcess, type ReceiverProcess } from './helpers/receiver-processes.js';
import { eventBody } from './helpers/events.js';
import { startRedisGate } from './helpers/redis-gate.js';
import { startRedisServer } from './helpers/redis-server.js';
import { listen } from './helpers/servers.js';
import { createFakeService, type Delivered, type FakeService } from './helpers/service.js';
import { acknowledged, deliverOnSchedule, describeAttempt, retryInRounds, sendAttempt, type AttemptResult } from './helpers/service-schedule.js';

// The service's first retry wait (1 minute) scaled 120 times; the others are 5 and 15 times it.
const MIN_RETRY_DELAY_MS = 500;
// How long an unfinished claim lives (a process that died mid-handler).
const CLAIM_TTL_MS = 1_500;
// Well under MIN_RETRY_DELAY_MS, as the README asks of a scaled schedule.
const SUBJECT_WAIT_MS = 250;
// How long a receiver waits for Redis before answering 503.
const COMMAND_TIMEOUT_MS = 300;

let service: FakeService;
let workDir: string;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  service = await createFakeService();
  workDir = mkdtempSync(join(tmpdir(), 'capi-arrival-order-'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

const kyc = (userId: string, kycStatus: 'pending' | 'approved' | 'rejected' | 'processing' | 'resubmissionRequested') => eventBody('kyc.status.changed', userId, { kycStatus });
const answered = (reply: Delivered) => `${reply.status} ${reply.body.code}`;
const attempts = (results: readonly AttemptResult[]) => results.map(describeAttempt).join(' | ');

/** An ioredis client, disconnected after the test. */
function redisClient(port: number): Redis {
  // ioredis's defaults: commands sent while it reconnects are queued and sent once it is back.
  const client = new Redis({ host: '127.0.0.1', port });
  client.on('error', () => undefined);
  cleanups.push(() => client.disconnect());
  return client;
}

/**
 * The partner's receivers in this process: each over its own Redis client (as two processes
 * would be), one store's keys; `written` is the partner's database, the KYC status of each
 * handler call that completed, in order.
 */
function partner() {
  const written: string[] = [];
  const superseded: string[] = [];
  const errors: unknown[] = [];
  const keyPrefix = `arrival-order:${process.pid}:${Math.random().toString(36).slice(2)}:`;
  const start = async (client: Redis, publicKey: WebhookReceiverOptions['publicKey']) => {
    const receiver = createWebhookReceiver({
      publicKey,
      dedupe: createRedisDedupeStore({ client, keyPrefix, minRetryDelayMs: MIN_RETRY_DELAY_MS, claimTtlMs: CLAIM_TTL_MS, commandTimeoutMs: COMMAND_TIMEOUT_MS }),
      subjectWaitMs: SUBJECT_WAIT_MS,
      onSuperseded: (event) => { if (event.eventType === 'kyc.status.changed') superseded.push(event.data.kycStatus); },
      onError: (error) => { errors.push(error); },
    }).on('kyc.status.changed', (event) => { written.push(event.data.kycStatus); });
    const server = await listen(toNodeHandler(receiver));
    cleanups.push(() => server.close());
    return `${server.url}/webhooks`;
  };
  return { written, superseded, errors, start };
}

async function startRedis() {
  const redis = await startRedisServer();
  cleanups.push(() => redis.close());
  return redis;
}

/** The service's key endpoint, just deployed: it answers the first request in 300 ms. */
async function slowFirstKeyServer(): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = await listen((_request, response) => {
    requests++;
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: true, publicKey: service.publicKey }));
    }, requests === 1 ? 300 : 0);
  });
  cleanups.push(() => server.close());
  return { url: `${server.url}/api/v1/public-key`, requests: () => requests };
}

describe('a Redis outage: the claims two receivers queued while Redis was down', () => {
  // The platform: approved (X) while Redis is down, rejected (Y) 300 ms later. X reached
  // receiver B, Y receiver A; both were answered 503 (the service retries them). Redis comes
  // back empty, and A's client happens to reconnect first, so Y's queued claim runs before X's.
  // The service retries X, then Y. The partner must end on rejected: X's retry processed, then
  // Y's retry processed (not superseded by X, which the platform sent before it).
  it('ends on the later event (rejected) whichever client reconnects first', async () => {
    const redis = await startRedis();
    // Each receiver's client reaches Redis through a gate of its own: the test says which one
    // reconnects first.
    const [gateA, gateB] = await Promise.all([startRedisGate(redis.port), startRedisGate(redis.port)]);
    cleanups.push(() => gateA.close(), () => gateB.close());
    const clientA = redisClient(gateA.port);
    const clientB = redisClient(gateB.port);
    const { written, superseded, start } = partner();
    const [urlA, urlB] = [await start(clientA, service.publicKey), await start(clientB, service.publicKey)];
    const [x, y] = [kyc('outage-user', 'approved'), kyc('outage-user', 'rejected')];
    // Before the outage the partner is on pending.
    expect(answered(await service.deliver(urlA, kyc('outage-user', 'pending')))).toBe('200 processed');

    gateA.hold();
    gateB.hold();
    await redis.stop();
    await until(() => clientA.status !== 'ready' && clientB.status !== 'ready', 'both clients lost Redis');
    const xFirst = service.deliver(urlB, x);
    await sleep(300);
    const yFirst = service.deliver(urlA, y);
    expect((await Promise.all([xFirst, yFirst])).map(answered)).toEqual(['503 dedupe_store_unavailable', '503 dedupe_store_unavailable']);
    const failedAt = Date.now();

    // Redis is back, empty. A's client gets through first and sends what it queued (Y's
    // claim and its undoing), then B's (X's). A PING sent once a client is ready is answered
    // after everything it had queued.
    await redis.start();
    for (const [gate, client] of [[gateA, clientA], [gateB, clientB]] as const) {
      gate.open();
      await until(() => client.status === 'ready', 'the client reconnected');
      await client.ping();
    }

    // The service's retries, a retry wait after the 503s, in the order it sent the events.
    await sleep(failedAt + MIN_RETRY_DELAY_MS - Date.now());
    const xRetry = answered(await service.deliver(urlB, x));
    const yRetry = answered(await service.deliver(urlA, y));
    expect({ xRetry, yRetry, partnerEndsOn: written.at(-1) }, `handlers wrote ${written.join(' > ')}; onSuperseded saw [${superseded.join(', ')}]`)
      .toEqual({ xRetry: '200 processed', yRetry: '200 processed', partnerEndsOn: 'rejected' });
  });
});

describe('a first key fetch after a deploy', () => {
  // The platform: approved (E1), then rejected (E2) 100 ms later. E1 reached receiver C, just
  // deployed, whose key provider fetches the key first (the key endpoint answers in 300 ms);
  // E2 reached receiver A, which has the key. Handlers are instant, nothing fails. The partner
  // must end on rejected: E1 is dispatched before E2, or not at all, never after it.
  it('ends on the later event (rejected) although the earlier one waited for the key', async () => {
    const redis = await startRedis();
    const keyServer = await slowFirstKeyServer();
    const { written, superseded, start } = partner();
    const urlA = await start(redisClient(redis.port), service.publicKey);
    const urlC = await start(redisClient(redis.port), createPublicKeyProvider({ url: keyServer.url }));
    expect(answered(await service.deliver(urlA, kyc('deploy-user', 'pending')))).toBe('200 processed');

    const schedule = { minRetryDelayMs: MIN_RETRY_DELAY_MS };
    const e1 = deliverOnSchedule(service, kyc('deploy-user', 'approved'), { ...schedule, urlFor: () => urlC });
    await sleep(100);
    const e2 = deliverOnSchedule(service, kyc('deploy-user', 'rejected'), { ...schedule, urlFor: () => urlA });
    const [e1Attempts, e2Attempts] = await Promise.all([e1, e2]);

    expect(keyServer.requests(), 'receiver C fetched the key').toBeGreaterThan(0);
    const story = `E1 (approved) to C: ${attempts(e1Attempts)}; E2 (rejected) to A: ${attempts(e2Attempts)}; handlers wrote ${written.join(' > ')}; onSuperseded saw [${superseded.join(', ')}]`;
    expect(written.at(-1), `the partner's final state (${story})`).toBe('rejected');
    expect(written.lastIndexOf('approved'), `approved dispatched after rejected (${story})`).toBeLessThan(written.indexOf('rejected'));
  });
});

describe('a change undone a moment later, the change verified last', () => {
  // The platform: approved (E1), then rejected (E2), then approved again (E3) 60 ms later (a
  // flag raised and withdrawn). E1 and E3 reached receiver A, which has the key; E2 reached
  // receiver C, just deployed, which fetches the key first (the key endpoint answers in 300 ms),
  // so E3's claim runs before E2's. E3 has E1's bytes, and came far sooner than E1's retry
  // could. The partner must end on approved, the platform's latest state, not on rejected.
  it('ends on approved: the event received before the undo is superseded, not dispatched over it', async () => {
    const redis = await startRedis();
    const keyServer = await slowFirstKeyServer();
    const { written, superseded, start } = partner();
    const urlA = await start(redisClient(redis.port), service.publicKey);
    const urlC = await start(redisClient(redis.port), createPublicKeyProvider({ url: keyServer.url }));
    expect(answered(await service.deliver(urlA, kyc('undo-user', 'pending')))).toBe('200 processed');

    expect(answered(await service.deliver(urlA, kyc('undo-user', 'approved')))).toBe('200 processed');
    const e2 = service.deliver(urlC, kyc('undo-user', 'rejected'));
    await sleep(60);
    const e3 = answered(await service.deliver(urlA, kyc('undo-user', 'approved')));
    const story = `E3 (approved again) to A: ${e3}; E2 (rejected) to C: ${answered(await e2)}; handlers wrote ${written.join(' > ')}; onSuperseded saw [${superseded.join(', ')}]`;
    expect(keyServer.requests(), 'receiver C fetched the key').toBeGreaterThan(0);
    expect({ e3, e2: answered(await e2), partnerEndsOn: written.at(-1), superseded }, story)
      .toEqual({ e3: '200 duplicate', e2: '200 superseded', partnerEndsOn: 'approved', superseded: ['rejected'] });
  });
});

describe('a receiver process killed mid-handler', () => {
  let bundle: Awaited<ReturnType<typeof bundleArrivalOrderReceiver>>;
  beforeAll(async () => { bundle = await bundleArrivalOrderReceiver(); });
  afterAll(() => bundle?.remove());

  /** Receiver processes A (its handler of `pending` never finishes) and B, over one Redis. */
  async function startProcesses(recordFile: string, { claimTtlMs = CLAIM_TTL_MS, minRetryDelayMs = MIN_RETRY_DELAY_MS } = {}): Promise<[ReceiverProcess, ReceiverProcess]> {
    const redis = await startRedis();
    const env = {
      REDIS_PORT: String(redis.port), PUBLIC_KEY: service.publicKey, RECORD_FILE: recordFile,
      CLAIM_TTL_MS: String(claimTtlMs), MIN_RETRY_DELAY_MS: String(minRetryDelayMs), SUBJECT_WAIT_MS: String(SUBJECT_WAIT_MS),
    };
    const processes = await Promise.all([startReceiverProcess(bundle.bundle, { ...env, HOLD_STATUS: 'pending' }), startReceiverProcess(bundle.bundle, env)]);
    cleanups.push(() => Promise.all(processes.map((child) => child.kill())));
    return processes;
  }

  /** The partner's database: the statuses whose handler completed, in order, in any process. */
  const writtenIn = (recordFile: string) => readRecord(recordFile).filter((entry) => entry.kind === 'done').map((entry) => entry.kycStatus);
  const started = (recordFile: string, kycStatus: string) => readRecord(recordFile).some((entry) => entry.kind === 'start' && entry.kycStatus === kycStatus);

  /**
   * The start both stories below share: approved (E0) processed by B, then pending (E1) sent to A,
   * whose handler of it has started (and hangs); rejected (E2) is the platform's next event.
   */
  async function pendingHeldByA(name: string) {
    const recordFile = join(workDir, `${name}.jsonl`);
    const [a, b] = await startProcesses(recordFile);
    const [e0, e1, e2] = [kyc(name, 'approved'), kyc(name, 'pending'), kyc(name, 'rejected')];
    expect(answered(await service.deliver(b.url, e0))).toBe('200 processed');
    const e1First = sendAttempt(service, a.url, e1, 1);
    await until(() => started(recordFile, 'pending'), "A's handler of pending started");
    return { recordFile, a, b, e1, e2, e1First };
  }

  // The platform: approved (E0, processed), pending (E1), rejected (E2). E1 reached receiver A,
  // whose handler hangs; E2 reached A too and waited behind E1 in A's line; A was killed
  // (SIGKILL): neither was answered. The service retries both against B, E1 first each round,
  // on its schedule (a 409 or 5xx is retried at the next step, 4 attempts in all). The partner
  // must end on rejected, and E2 must be dispatched (not answered superseded).
  it('ends on the later event (rejected) after the process that held both died', async () => {
    const { recordFile, a, b, e1, e2, e1First } = await pendingHeldByA('killed-with-two');
    const e2First = sendAttempt(service, a.url, e2, 1);
    await sleep(100); // E2 waits in A's line (for up to SUBJECT_WAIT_MS)
    await a.kill('SIGKILL');
    expect((await Promise.all([e1First, e2First])).map(describeAttempt)).toEqual(['no answer', 'no answer']);

    const [e1Retries, e2Retries] = await retryInRounds(service, [e1, e2], { url: b.url, nextAttempt: 2, failedAt: Date.now(), minRetryDelayMs: MIN_RETRY_DELAY_MS, staggerMs: 50 });
    const written = writtenIn(recordFile);
    const superseded = readRecord(recordFile).filter((entry) => entry.kind === 'superseded').map((entry) => entry.kycStatus);
    expect({ partnerEndsOn: written.at(-1), rejectedDispatched: written.includes('rejected') },
      `E1 (pending) retries to B: ${attempts(e1Retries!)}; E2 (rejected) retries to B: ${attempts(e2Retries!)}; handlers wrote ${written.join(' > ')}; onSuperseded saw [${superseded.join(', ')}]`)
      .toEqual({ partnerEndsOn: 'rejected', rejectedDispatched: true });
  });

  // The platform: approved (processed), pending (E0), processing (E1), resubmissionRequested
  // (E1b), rejected (E2). E0 reached receiver A, whose handler hangs; E1 and E1b reached A too and
  // waited behind it in A's line (E1's claim answered processing, E1b joined the line A had); A
  // was killed (SIGKILL): none was answered. E0's claim expires, E1's and E1b's places lapse; E2
  // reaches B and is processed; then the service retries E0, E1 and E1b against B on its
  // schedule. The partner must end on rejected: the retries of the older E1 and E1b are answered
  // superseded, not dispatched as new events over it. (Here claims expire long before the first
  // retry comes: CLAIM_TTL_MS 400, MIN_RETRY_DELAY_MS 1,500.)
  it('ends on the later event (rejected) when the process that died held an event and had two waiting behind it', async () => {
    const minRetryDelayMs = 1_500;
    const recordFile = join(workDir, 'killed-with-waiters.jsonl');
    const [a, b] = await startProcesses(recordFile, { claimTtlMs: 400, minRetryDelayMs });
    const [before, e0, e1, e1b, e2] = [kyc('waiters-user', 'approved'), kyc('waiters-user', 'pending'), kyc('waiters-user', 'processing'), kyc('waiters-user', 'resubmissionRequested'), kyc('waiters-user', 'rejected')];
    expect(answered(await service.deliver(b.url, before))).toBe('200 processed');

    const e0First = sendAttempt(service, a.url, e0, 1);
    await until(() => started(recordFile, 'pending'), "A's handler of pending started");
    const e1First = sendAttempt(service, a.url, e1, 1);
    await sleep(20);
    const e1bFirst = sendAttempt(service, a.url, e1b, 1);
    await sleep(80); // E1 and E1b wait in A's line (for up to SUBJECT_WAIT_MS)
    await a.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await Promise.all([e0First, e1First, e1bFirst])).map(describeAttempt)).toEqual(['no answer', 'no answer', 'no answer']);

    // E0's claim has expired (its last renewal was before the kill) and the places have lapsed.
    await sleep(killedAt + 800 - Date.now());
    const e2Answer = describeAttempt(await sendAttempt(service, b.url, e2, 1));
    const [e0Retries, e1Retries, e1bRetries] = await retryInRounds(service, [e0, e1, e1b], { url: b.url, nextAttempt: 2, failedAt: killedAt, minRetryDelayMs, staggerMs: 50 });
    const written = writtenIn(recordFile);
    const superseded = readRecord(recordFile).filter((entry) => entry.kind === 'superseded').map((entry) => entry.kycStatus);
    expect({ e2Answer, e1Retries: e1Retries!.map(describeAttempt), e1bRetries: e1bRetries!.map(describeAttempt), partnerEndsOn: written.at(-1) },
      `E0 (pending) retries to B: ${attempts(e0Retries!)}; handlers wrote ${written.join(' > ')}; onSuperseded saw [${superseded.join(', ')}]`)
      .toEqual({ e2Answer: '200 processed', e1Retries: ['200 superseded'], e1bRetries: ['200 superseded'], partnerEndsOn: 'rejected' });
  });

  // A partner's trial (the sandbox sending every event twice): E0 (pending) and its copy reached
  // A, whose handler of E0 hangs, the copy waiting behind it; A was killed. The copy's place
  // lapsed, then E0's claim expired, both before the next call to the store. Their retries reach
  // B: the partner's handler must run once, the other retry answered duplicate.
  it('handles an event once when the process that died held it and had its copy waiting behind it', async () => {
    const minRetryDelayMs = 1_500;
    const recordFile = join(workDir, 'killed-with-copy.jsonl');
    const [a, b] = await startProcesses(recordFile, { claimTtlMs: 400, minRetryDelayMs });
    const [before, e0] = [kyc('copy-user', 'approved'), kyc('copy-user', 'pending')];
    expect(answered(await service.deliver(b.url, before))).toBe('200 processed');
    const e0First = sendAttempt(service, a.url, e0, 1);
    await until(() => started(recordFile, 'pending'), "A's handler of pending started");
    const copyFirst = sendAttempt(service, a.url, e0, 1);
    await sleep(80); // the copy waits in A's line (for up to SUBJECT_WAIT_MS)
    await a.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await Promise.all([e0First, copyFirst])).map(describeAttempt)).toEqual(['no answer', 'no answer']);
    // The copy's place has lapsed, and E0's claim expired (its last renewal was before the kill).
    await sleep(killedAt + 800 - Date.now());
    const [e0Retries, copyRetries] = await retryInRounds(service, [e0, e0], { url: b.url, nextAttempt: 2, failedAt: killedAt, minRetryDelayMs, staggerMs: 50 });
    const written = writtenIn(recordFile);
    expect({ answers: [...e0Retries!, ...copyRetries!].map(describeAttempt).sort(), written }, `E0 retries: ${attempts(e0Retries!)}; its copy's: ${attempts(copyRetries!)}`)
      .toEqual({ answers: ['200 duplicate', '200 processed'], written: ['approved', 'pending'] });
  });

  // A partner trial's trace: E1 (pending) reached A, whose handler hangs, and A was killed; E2
  // (rejected) reached B and waited for the dead claim: 409. E1's retry came a retry wait after
  // E1 (to B, the claim still holding): 409 too. Once the claim expired, E2's retry was processed,
  // then E1's third attempt came. It must be superseded: E1's retry was kept in E1's place, not as
  // a new event after E2 (E2's 409 came between them), and the partner must end on rejected.
  it('ends on the later event (rejected) when the held event\'s retry came while the dead process\'s claim still held', async () => {
    const { recordFile, a, b, e1, e2, e1First } = await pendingHeldByA('killed-retry-while-held');
    const e1ArrivedBy = Date.now();
    await a.kill('SIGKILL');
    expect(describeAttempt(await e1First)).toBe('no answer');
    const e2First = describeAttempt(await sendAttempt(service, b.url, e2, 1));
    // E1's retry, once a retry wait has passed since E1 arrived, while the claim still holds.
    await sleep(e1ArrivedBy + MIN_RETRY_DELAY_MS + 50 - Date.now());
    const e1Second = describeAttempt(await sendAttempt(service, b.url, e1, 2));
    const e1SecondAt = Date.now();
    // The claim expires CLAIM_TTL_MS after its last renewal, before the kill.
    await sleep(e1ArrivedBy + CLAIM_TTL_MS + 300 - Date.now());
    const e2Second = describeAttempt(await sendAttempt(service, b.url, e2, 2));
    await sleep(e1SecondAt + 5 * MIN_RETRY_DELAY_MS + 50 - Date.now());
    const e1Third = describeAttempt(await sendAttempt(service, b.url, e1, 3));
    const written = writtenIn(recordFile);
    expect({ e2First, e1Second, e2Second, e1Third, partnerEndsOn: written.at(-1) }, `handlers wrote ${written.join(' > ')}`)
      .toEqual({ e2First: '409 duplicate_in_progress', e1Second: '409 duplicate_in_progress', e2Second: '200 processed', e1Third: '200 superseded', partnerEndsOn: 'rejected' });
  });

  // The same with E1 alone: A was killed while handling it. Its retry must be processed once
  // the claim of the dead process has expired, and the partner end on pending.
  it('processes the event on a retry after the process that held it died', async () => {
    const recordFile = join(workDir, 'killed-with-one.jsonl');
    const [a, b] = await startProcesses(recordFile);
    const [e0, e1] = [kyc('killed-alone', 'approved'), kyc('killed-alone', 'pending')];
    expect(answered(await service.deliver(b.url, e0))).toBe('200 processed');

    const e1First = sendAttempt(service, a.url, e1, 1);
    await until(() => started(recordFile, 'pending'), "A's handler of pending started");
    await sleep(100);
    await a.kill('SIGKILL');
    expect(describeAttempt(await e1First)).toBe('no answer');

    const [e1Retries] = await retryInRounds(service, [e1], { url: b.url, nextAttempt: 2, failedAt: Date.now(), minRetryDelayMs: MIN_RETRY_DELAY_MS, staggerMs: 0 });
    const written = writtenIn(recordFile);
    expect({ acknowledged: e1Retries!.some(acknowledged), partnerEndsOn: written.at(-1) },
      `E1 (pending) retries to B: ${attempts(e1Retries!)}; handlers wrote ${written.join(' > ')}`)
      .toEqual({ acknowledged: true, partnerEndsOn: 'pending' });
  });
});
