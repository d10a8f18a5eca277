// acknowledgeEarly with a deadLetters store: a delivery is kept in the store (`in_flight`)
// before its 202, so that a process that stops before its handlers finish loses nothing;
// replay() runs such an entry once it is older than the claim TTL; drain() waits for the work
// after the 202s on a graceful stop; a store that cannot keep the delivery means no 202.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryDeadLetterStore,
  createMemoryDedupeStore,
  createWebhookReceiver,
  DeadLetterStoreError,
  toNodeHandler,
  type DeadLetterStore,
  type DedupeStore,
  type WebhookErrorContext,
  type WebhookReceiver,
} from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { bundleReceiverProcess, startReceiverProcess, type ReceiverProcess } from './helpers/receiver-processes.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { listen, type RunningServer } from './helpers/servers.js';
import { createFakeService, type FakeService } from './helpers/service.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let service: FakeService;
beforeAll(async () => {
  service = await createFakeService();
});

/** Serves `receiver` over node:http, as a partner would. */
async function serve(receiver: WebhookReceiver): Promise<RunningServer> {
  return listen(createServer(toNodeHandler(receiver)));
}

/**
 * A store that answers as `store` does until `dead.value` is set; then none of its calls ever
 * answers: the receiver that uses it is as good as a process killed with kill -9 (its claims
 * are no longer renewed, its handlers' settlement never lands).
 */
function diesWith<T extends object>(store: T, dead: { value: boolean }): T {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (dead.value ? new Promise(() => undefined) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

describe('acknowledgeEarly with a memory deadLetters store, over HTTP', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('keeps the delivery as in_flight before the 202 and deletes it once the handlers succeed', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, deadLetters, onError: () => undefined })
      .onAny(() => held);
    const server = await serve(receiver);
    servers.push(server);
    const body = eventBody('user.created', 'in-flight-1');
    const reply = await service.deliver(server.url, body);
    expect(reply).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    expect((deadLetters.list(10) as readonly { bodySha256: string; reason?: string }[]).map(({ bodySha256, reason }) => ({ bodySha256, reason })))
      .toEqual([{ bodySha256: sha256(body), reason: 'in_flight' }]);
    release();
    await receiver.drain();
    expect(deadLetters.list(10)).toEqual([]);
  });

  it('a receiver that dies after its 202, its handler running: replay() from another leaves the entry while younger than claimTtlMs, then dispatches each event once, in order', async () => {
    const claimTtlMs = 300;
    const dedupe = createMemoryDedupeStore({ claimTtlMs });
    const deadLetters = createMemoryDeadLetterStore();
    const dead = { value: false };
    const first = createWebhookReceiver({
      publicKey: service.publicKey, acknowledgeEarly: true, onError: () => undefined,
      dedupe: diesWith(dedupe, dead), deadLetters: diesWith(deadLetters, dead),
    }).onAny(() => new Promise<void>(() => undefined)); // never finishes: the process dies first
    const dispatched: string[] = [];
    const second = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, onError: () => undefined, dedupe, deadLetters })
      .onAny((_event, delivery) => { dispatched.push(delivery.bodySha256); });
    const server = await serve(first);
    servers.push(server);
    const bodies = [eventBody('user.created', 'crash-a'), eventBody('kyc.status.changed', 'crash-b', { kycStatus: 'approved' })];
    for (const body of bodies) expect((await service.deliver(server.url, body)).status).toBe(202);
    dead.value = true; // kill -9

    expect((await second.replay()).results).toEqual([]);
    expect(dispatched).toEqual([]);
    await sleep(claimTtlMs + 100);
    const { results } = await second.replay();
    expect(results).toEqual(bodies.map((body) => ({ bodySha256: sha256(body), outcome: 'processed', deleted: true })));
    expect(dispatched).toEqual(bodies.map(sha256));
    expect((await second.replay()).results).toEqual([]);
    expect(dispatched).toHaveLength(2);
  });

  it('a graceful stop: server.close(), then drain(), loses nothing', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const done: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, deadLetters, onError: () => undefined })
      .onAny(async (_event, delivery) => { await sleep(300); done.push(delivery.bodySha256); });
    const server = await serve(receiver);
    const body = eventBody('user.created', 'graceful');
    expect((await service.deliver(server.url, body)).status).toBe(202);
    await server.close();
    expect(done).toEqual([]);
    await receiver.drain();
    expect(done).toEqual([sha256(body)]);
    expect(deadLetters.list(10)).toEqual([]);
  });

  it('a handler failure after the 202 turns the in_flight entry into handler_failed', async () => {
    const deadLetters = createMemoryDeadLetterStore();
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, deadLetters, onError: () => undefined })
      .onAny(() => { throw new Error('the partner database is down'); });
    const server = await serve(receiver);
    servers.push(server);
    const body = eventBody('user.created', 'fails-after');
    expect((await service.deliver(server.url, body)).status).toBe(202);
    await receiver.drain();
    expect((deadLetters.list(10) as readonly { reason?: string }[]).map((entry) => entry.reason)).toEqual(['handler_failed']);
  });

  it('a dead-letter store that cannot keep the delivery: no 202, answered after the handlers (a failure is then 500, retried) and reported', async () => {
    const failing: DeadLetterStore = {
      put() { throw new DeadLetterStoreError('dead_letter_store_unavailable', 'down'); },
      list: () => [],
      delete: () => undefined,
    };
    const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    let fail = false;
    const handled: string[] = [];
    const receiver = createWebhookReceiver({
      publicKey: service.publicKey, acknowledgeEarly: true, deadLetters: failing,
      onError: (error, context) => { reports.push({ error, context }); },
    }).onAny((_event, delivery) => {
      if (fail) throw new Error('the partner database is down');
      handled.push(delivery.bodySha256);
    });
    const server = await serve(receiver);
    servers.push(server);
    const body = eventBody('user.created', 'put-fails');
    expect(await service.deliver(server.url, body)).toMatchObject({ status: 200, body: { code: 'processed' } });
    expect(handled).toEqual([sha256(body)]);
    expect(reports.map(({ error, context }) => [(error as DeadLetterStoreError).code, context.outcome, context.afterReply]))
      .toEqual([['dead_letter_store_unavailable', 'processed', false]]);
    fail = true;
    expect(await service.deliver(server.url, eventBody('user.created', 'put-fails-2'))).toMatchObject({ status: 500, body: { code: 'handler_failed' } });
  });

  it('without acknowledgeEarly nothing is put in flight, and drain() resolves at once', async () => {
    const puts: string[] = [];
    const memory = createMemoryDeadLetterStore();
    const deadLetters: DeadLetterStore = { put: (entry) => { puts.push(entry.reason ?? ''); return memory.put(entry); }, list: (limit) => memory.list(limit), delete: (digest) => memory.delete(digest) };
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, deadLetters, onError: () => undefined }).onAny(() => undefined);
    const server = await serve(receiver);
    servers.push(server);
    expect((await service.deliver(server.url, eventBody('user.created', 'default-mode'))).status).toBe(200);
    expect(puts).toEqual([]);
    await receiver.drain();
  });

  it('replay() leaves a young in_flight entry alone, and a live receiver\'s renewed claim keeps an older one from running twice', async () => {
    const claimTtlMs = 200;
    const dedupe: DedupeStore = createMemoryDedupeStore({ claimTtlMs });
    const deadLetters = createMemoryDeadLetterStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let runs = 0;
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, acknowledgeEarly: true, subjectWaitMs: 50, dedupe, deadLetters, onError: () => undefined })
      .onAny(async () => { runs += 1; await held; });
    const server = await serve(receiver);
    servers.push(server);
    const body = eventBody('user.created', 'slow-live');
    expect((await service.deliver(server.url, body)).status).toBe(202);
    expect((await receiver.replay()).results).toEqual([]);
    await sleep(claimTtlMs * 2);
    // Older than claimTtlMs, but its handler still runs here and its claim is renewed: it stays.
    expect((await receiver.replay()).results).toEqual([{ bodySha256: sha256(body), outcome: 'duplicate_in_progress', deleted: false }]);
    release();
    await receiver.drain();
    expect(runs).toBe(1);
    expect(deadLetters.list(10)).toEqual([]);
  });
});

describe('acknowledgeEarly with the Redis stores, two receiver processes on a real redis-server', () => {
  let redis: RedisServer;
  let bundle: string;
  let workDir: string;
  const started: ReceiverProcess[] = [];

  beforeAll(async () => {
    [redis, bundle] = await Promise.all([startRedisServer(), bundleReceiverProcess()]);
    workDir = mkdtempSync(join(tmpdir(), 'capi-receiver-in-flight-'));
  });
  afterAll(async () => {
    await redis?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((child) => child.kill('SIGKILL')));
  });

  async function startTwo(name: string, claimTtlMs: number, env: Record<string, string> = {}) {
    const recordFile = join(workDir, `${name}.log`);
    const holdFile = join(workDir, `${name}.hold`);
    writeFileSync(recordFile, '');
    const processes = await Promise.all([0, 1].map(() => startReceiverProcess(bundle, {
      REDIS_PORT: String(redis.port), PUBLIC_KEY: service.publicKey, RECORD_FILE: recordFile, HOLD_FILE: holdFile,
      DEAD_LETTERS: '1', ACK_EARLY: '1', CLAIM_TTL_MS: String(claimTtlMs), ...env,
    })));
    started.push(...processes);
    return { processes, recordFile, holdFile };
  }
  const recorded = (recordFile: string) => readFileSync(recordFile, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]);
  async function startedCount(holdFile: string, count: number) {
    const deadline = Date.now() + 10_000;
    while (!existsSync(`${holdFile}.started`) || readFileSync(`${holdFile}.started`, 'utf8').split('\n').filter(Boolean).length < count) {
      if (Date.now() > deadline) throw new Error('the handlers never started');
      await sleep(10);
    }
  }
  async function replayAt(target: ReceiverProcess) {
    const response = await fetch(target.url.replace('/webhooks', '/replay'));
    return (await response.json()) as { results: Array<{ bodySha256: string; outcome: string; deleted: boolean }> };
  }
  async function deadLetterCount(): Promise<number> {
    const client = new Redis({ port: redis.port, host: '127.0.0.1' });
    try {
      return await client.hlen('capi:webhook:dead-letters');
    } finally {
      client.disconnect();
    }
  }

  it('kill -9 after the 202s while the handlers run: replay() at the other process, after claimTtlMs, dispatches each event once, in order', async () => {
    const claimTtlMs = 1_000;
    const { processes: [first, second], recordFile, holdFile } = await startTwo('kill', claimTtlMs);
    const bodies = [eventBody('kyc.status.changed', 'kill-1', { kycStatus: 'pending' }), eventBody('user.created', 'kill-2')];
    writeFileSync(holdFile, bodies.map(sha256).join('\n'));
    for (const body of bodies) expect(await service.deliver(first!.url, body)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    await startedCount(holdFile, 2);
    await first!.kill('SIGKILL');
    rmSync(holdFile);
    expect(await deadLetterCount()).toBe(2);

    // Younger than claimTtlMs: their handlers may still be running somewhere.
    expect((await replayAt(second!)).results).toEqual([]);
    await sleep(claimTtlMs + 200);
    expect((await replayAt(second!)).results).toEqual(bodies.map((body) => ({ bodySha256: sha256(body), outcome: 'processed', deleted: true })));
    expect(recorded(recordFile)).toEqual(bodies.map((body) => [sha256(body), String(second!.pid)]));
    expect((await replayAt(second!)).results).toEqual([]);
    expect(await deadLetterCount()).toBe(0);
  });

  it('kill -9 after the 202 of A while its handler runs; after claimTtlMs, B then A again at the other process: both dispatched (A is a new event, not a late retry of A)', async () => {
    const claimTtlMs = 1_000;
    // Without a dead-letter store, and with the service's retries at once (MIN_RETRY_DELAY_MS=0),
    // so that a copy of A would be taken for A's retry if one were due: the 202 means none is.
    const { processes: [first, second], recordFile, holdFile } = await startTwo('kill-a-b-a', claimTtlMs, { DEAD_LETTERS: '0', MIN_RETRY_DELAY_MS: '0' });
    const [a, b] = (['pending', 'approved'] as const).map((kycStatus) => eventBody('kyc.status.changed', 'kill-a-b-a', { kycStatus }));
    writeFileSync(holdFile, sha256(a!));
    expect(await service.deliver(first!.url, a!)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    await startedCount(holdFile, 1);
    await first!.kill('SIGKILL');
    rmSync(holdFile);
    await sleep(claimTtlMs + 200); // A's claim expires
    expect(await service.deliver(second!.url, b!)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    // A again waits for B's handler in the subject's line, then is claimed as a new event.
    expect(await service.deliver(second!.url, a!)).toMatchObject({ status: 202, body: { code: 'acknowledged' } });
    const deadline = Date.now() + 10_000;
    while (recorded(recordFile).length < 2 && Date.now() < deadline) await sleep(10);
    expect(recorded(recordFile)).toEqual([b!, a!].map((body) => [sha256(body), String(second!.pid)]));
  });

  it('a graceful stop (SIGTERM: server.close(), then drain()) while a handler runs loses nothing', async () => {
    const { processes: [first], recordFile, holdFile } = await startTwo('term', 1_000);
    const body = eventBody('user.created', 'term-1');
    writeFileSync(holdFile, sha256(body));
    expect((await service.deliver(first!.url, body)).status).toBe(202);
    await startedCount(holdFile, 1);
    const stopped = first!.stop();
    await sleep(200);
    rmSync(holdFile);
    await stopped;
    expect(recorded(recordFile)).toEqual([[sha256(body), String(first!.pid)]]);
    expect(await deadLetterCount()).toBe(0);
  });
});
