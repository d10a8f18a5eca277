import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventBody } from './helpers/events.js';
import { driftedBodies } from './helpers/upgraded-validator.js';
import pg from 'pg';
import { deadLetterTableSql } from '../examples/postgres-dead-letter-store.js';
import { DEDUPE_TABLE } from '../examples/postgres-dedupe-store.js';
import { startPostgresServer, type PostgresServer } from './helpers/postgres-server.js';
import { bundleReceiverProcess, startReceiverProcess, type ReceiverProcess } from './helpers/receiver-processes.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { createFakeService, type Delivered, type FakeService } from './helpers/service.js';

let redis: RedisServer;
let postgres: PostgresServer;
let service: FakeService;
let bundle: string;
let workDir: string;

beforeAll(async () => {
  [redis, postgres, service, bundle] = await Promise.all([startRedisServer(), startPostgresServer(), createFakeService(), bundleReceiverProcess()]);
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  await client.query(`CREATE TABLE ${DEDUPE_TABLE} (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL)`);
  for (const statement of deadLetterTableSql()) await client.query(statement);
  await client.end();
  workDir = mkdtempSync(join(tmpdir(), 'capi-receiver-'));
}, 60_000);

afterAll(async () => {
  await redis?.close();
  await postgres?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// Every receiver process a test starts is stopped after it, passed or failed.
const started: ReceiverProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((child) => child.stop()));
});

/** The shared dedupe stores the processes run on: Redis, or PostgreSQL (the transactional store of examples/postgres-dedupe-store.ts). */
type SharedStore = 'Redis' | 'PostgreSQL';

async function startProcesses(recordFile: string, count: number, env: Record<string, string> = {}, store: SharedStore = 'Redis'): Promise<ReceiverProcess[]> {
  writeFileSync(recordFile, '');
  const storeEnv: Record<string, string> = store === 'Redis' ? { REDIS_PORT: String(redis.port) } : { POSTGRES_URL: postgres.url };
  const processes = await Promise.all(Array.from({ length: count }, () => startReceiverProcess(bundle, {
    ...storeEnv, PUBLIC_KEY: service.publicKey, RECORD_FILE: recordFile, ...env,
  })));
  started.push(...processes);
  return processes;
}

/** How many times each body hash was processed, from the record file the processes append to. */
function processedCounts(recordFile: string): Map<string, { count: number; pids: Set<string> }> {
  const counts = new Map<string, { count: number; pids: Set<string> }>();
  for (const line of readFileSync(recordFile, 'utf8').split('\n')) {
    if (line === '') continue;
    const [hash, pid] = line.split(' ') as [string, string];
    const entry = counts.get(hash) ?? { count: 0, pids: new Set() };
    entry.count += 1;
    entry.pids.add(pid);
    counts.set(hash, entry);
  }
  return counts;
}

/** Runs `tasks` with at most `concurrency` in flight. */
async function runConcurrently<T>(tasks: Array<() => Promise<T>>, concurrency: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  }));
  return results;
}

/** Resolves once `count` deliveries hold a place in the line of `subject` in the store (the receiver processes' default key prefix with Redis, none with PostgreSQL). */
async function placesInLine(store: SharedStore, subject: string, count: number): Promise<void> {
  const redisClient = store === 'Redis' ? new Redis({ port: redis.port, host: '127.0.0.1' }) : undefined;
  const postgresClient = store === 'PostgreSQL' ? new pg.Client({ connectionString: postgres.url }) : undefined;
  await postgresClient?.connect();
  // Places in line, from the value the store keeps (Redis: a line per place, starting with w; PostgreSQL: the record's JSON).
  const places = async (): Promise<[number, string]> => {
    if (redisClient !== undefined) {
      const value = (await redisClient.get(`capi:webhook:${subject}`)) ?? '';
      return [value.split('\n').filter((line) => line.startsWith('w')).length, value];
    }
    const { rows } = await postgresClient!.query<{ value: string }>(`SELECT value FROM ${DEDUPE_TABLE} WHERE key = $1`, [subject]);
    const value = rows[0]?.value ?? '';
    const line = value === '' ? [] : (JSON.parse(value) as { record: { line?: Array<{ left?: true }> } }).record.line ?? [];
    return [line.filter((place) => place.left !== true).length, value];
  };
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [held, value] = await places();
      if (held >= count) return;
      if (Date.now() > deadline) throw new Error(`the line of ${subject} never held ${count} places; its key holds ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    redisClient?.disconnect();
    await postgresClient?.end();
  }
}

describe.each<SharedStore>(['Redis', 'PostgreSQL'])('receiver processes sharing %s', (store) => {
  describe('processes each unique body once across receiver processes sharing the store', () => {
    it('takes 1,000 deliveries with 20% duplicates spread over two processes: every unique body processed exactly once', async () => {
      const recordFile = join(workDir, `${store}-exactly-once.log`);
      const processes = await startProcesses(recordFile, 2, {}, store);
      const uniqueBodies = Array.from({ length: 800 }, (_, index) => eventBody('user.created', `multi-${index}`));
      // Each duplicate goes to the other process than its original, and comes in the same
      // stream, so that copies race each other across processes.
      const deliveries = uniqueBodies.map((body, index) => ({ body, target: index % 2 }));
      for (let index = 0; index < 200; index++) {
        const original = deliveries[index * 4]!;
        deliveries.push({ body: original.body, target: 1 - original.target });
      }
      deliveries.sort((a, b) => sha256(a.body + a.target).localeCompare(sha256(b.body + b.target)));
      expect(deliveries).toHaveLength(1000);

      const replies = await runConcurrently(deliveries.map(({ body, target }) =>
        () => service.deliverUntilAcknowledged(processes[target]!.url, body)), 16);

      const counts = processedCounts(recordFile);
      expect(counts.size).toBe(800);
      for (const body of uniqueBodies) expect(counts.get(sha256(body))?.count, body.slice(0, 60)).toBe(1);
      const processedBy = new Set([...counts.values()].flatMap((entry) => [...entry.pids]));
      expect(processedBy).toEqual(new Set(processes.map((child) => String(child.pid))));
      const finalCodes = replies.map((attempts) => attempts.at(-1)!.body.code);
      expect(finalCodes.filter((code) => code === 'processed')).toHaveLength(800);
      expect(finalCodes.filter((code) => code === 'duplicate')).toHaveLength(200);
    });
  });

  describe('dedupes per subject across receiver processes sharing the store', () => {
    it('dispatches A -> B -> A of one user three times, alternating processes, and a retry of the latest on the other process none', async () => {
      const recordFile = join(workDir, `${store}-per-subject.log`);
      const processes = await startProcesses(recordFile, 2, {}, store);
      const validated = eventBody('kyc.phone-validation.changed', 'subject-1', { isPhoneValidated: true });
      const invalidated = eventBody('kyc.phone-validation.changed', 'subject-1', { isPhoneValidated: false });
      const codes: unknown[] = [];
      for (const [body, target] of [[validated, 0], [invalidated, 1], [validated, 0], [validated, 1]] as const) {
        const attempts = await service.deliverUntilAcknowledged(processes[target]!.url, body);
        codes.push(attempts.at(-1)!.body.code);
      }
      expect(codes).toEqual(['processed', 'processed', 'processed', 'duplicate']);
      const counts = processedCounts(recordFile);
      expect(counts.get(sha256(validated))?.count).toBe(2);
      expect(counts.get(sha256(invalidated))?.count).toBe(1);
    });
  });

  describe('loses no event when a handler fails in one process and the subject comes back to its state before', () => {
    it('true, false (fails on one process), true again on the other: all dispatched; the late retry of false superseded on either process, a later false processed', async () => {
      const recordFile = join(workDir, `${store}-failed-between.log`);
      const failOnceFile = join(workDir, `${store}-fail-once`);
      // The service's retry comes a minute after the failure; here at once, so the stores take any
      // copy of a failed body for its retry.
      const processes = await startProcesses(recordFile, 2, { FAIL_ONCE_FILE: failOnceFile, MIN_RETRY_DELAY_MS: '0' }, store);
      const validated = eventBody('kyc.phone-validation.changed', 'subject-2', { isPhoneValidated: true });
      const invalidated = eventBody('kyc.phone-validation.changed', 'subject-2', { isPhoneValidated: false });
      writeFileSync(failOnceFile, sha256(invalidated));
      const codes: unknown[] = [];
      for (const [body, target] of [[validated, 0], [invalidated, 1], [validated, 0], [invalidated, 1], [invalidated, 0]] as const) {
        codes.push((await service.deliver(processes[target]!.url, body)).body.code);
      }
      // The 4th is the service's retry of the failed `false`, after the newer `true`: superseded.
      // The 5th is the user's next change to `false`: processed.
      expect(codes).toEqual(['processed', 'handler_failed', 'processed', 'superseded', 'processed']);
      const counts = processedCounts(recordFile);
      expect(counts.get(sha256(validated))?.count).toBe(2);
      expect(counts.get(sha256(invalidated))?.count).toBe(1);
    });
  });

  describe('makes a delivery wait while another process handles its subject', () => {
    it('pending held in one process, approved sent to the other: approved waits, then is processed after it', async () => {
      const recordFile = join(workDir, `${store}-held.log`);
      const holdFile = join(workDir, `${store}-hold`);
      const processes = await startProcesses(recordFile, 2, { HOLD_FILE: holdFile }, store);
      const pending = eventBody('kyc.status.changed', 'subject-3', { kycStatus: 'pending' });
      const approved = eventBody('kyc.status.changed', 'subject-3', { kycStatus: 'approved' });
      writeFileSync(holdFile, sha256(pending));
      const first = service.deliver(processes[0]!.url, pending);
      while (!existsSync(`${holdFile}.started`)) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = service.deliver(processes[1]!.url, approved);
      // Let the second process find the subject held a few times before the first finishes.
      await new Promise((resolve) => setTimeout(resolve, 300));
      rmSync(holdFile);
      expect((await first).body.code).toBe('processed');
      expect((await second).body.code).toBe('processed');
      expect(readFileSync(recordFile, 'utf8').trim().split('\n').map((line) => line.split(' ')[0])).toEqual([sha256(pending), sha256(approved)]);
    });
  });

  describe('gives a subject to the deliveries waiting for it in different processes in the order they arrived', () => {
    it('pending held in one process, approved waiting in the other, then rejected in the first: approved is processed before rejected', async () => {
      const recordFile = join(workDir, `${store}-line.log`);
      const holdFile = join(workDir, `${store}-hold-line`);
      const processes = await startProcesses(recordFile, 2, { HOLD_FILE: holdFile }, store);
      const [pending, approved, rejected] = (['pending', 'approved', 'rejected'] as const)
        .map((kycStatus) => eventBody('kyc.status.changed', 'subject-line', { kycStatus }));
      writeFileSync(holdFile, sha256(pending!));
      const first = service.deliver(processes[0]!.url, pending!);
      while (!existsSync(`${holdFile}.started`)) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = service.deliver(processes[1]!.url, approved!);
      // Each step waits for the store's line to show it, not for a fixed time: on a loaded machine
      // approved could otherwise reach the line after rejected (then rejected is rightly first).
      await placesInLine(store, 'kyc.status.changed:subject-line', 1);
      // rejected waits in the process that holds the subject: that process hands it the subject the
      // moment pending is done, while approved, in the other, is between two tries. The store's
      // line keeps approved first.
      const third = service.deliver(processes[0]!.url, rejected!);
      await placesInLine(store, 'kyc.status.changed:subject-line', 2);
      rmSync(holdFile);
      expect([(await first).body.code, (await second).body.code, (await third).body.code]).toEqual(['processed', 'processed', 'processed']);
      expect(readFileSync(recordFile, 'utf8').trim().split('\n').map((line) => line.split(' ')[0]))
        .toEqual([sha256(pending!), sha256(approved!), sha256(rejected!)]);
    });
  });
});

describe('answers 503 while Redis is down and loses nothing once it is back', () => {
  it('stops Redis in the middle of a run: 503s, and after the restart every event is processed', async () => {
    const recordFile = join(workDir, 'outage.log');
    const processes = await startProcesses(recordFile, 2);
    const bodies = Array.from({ length: 300 }, (_, index) => eventBody('kyc.status.changed', `outage-${index}`, { kycStatus: 'processing' }));
    const firstAttempts: Delivered[] = [];
    let stopped: Promise<void> | undefined;
    let restarted: Promise<void> | undefined;
    let middleThirdLeft = 100;
    let middleThirdDone!: () => void;
    const middleThirdFinished = new Promise<void>((resolve) => { middleThirdDone = resolve; });
    // The service sends every event once; Redis goes away after a third of them (while the
    // last of that third are still in flight) and comes back once the next third has been
    // answered. The tasks start in order, so the middle third meets Redis down from start to
    // end, whatever the speed of the machine.
    await runConcurrently(bodies.map((body, index) => async () => {
      if (index >= 100) await (stopped ??= redis.stop());
      if (index >= 200) {
        await middleThirdFinished;
        await (restarted ??= redis.start());
      }
      try {
        firstAttempts[index] = await service.deliver(processes[index % 2]!.url, body);
      } finally {
        if (index >= 100 && index < 200 && --middleThirdLeft === 0) middleThirdDone();
      }
    }), 4);

    const unavailable = firstAttempts.filter((reply) => reply.status === 503);
    expect(firstAttempts.slice(100, 200).every((reply) => reply.status === 503)).toBe(true);
    expect(unavailable.every((reply) => reply.body.code === 'dedupe_store_unavailable')).toBe(true);
    expect(firstAttempts.every((reply) => reply.status === 200 || reply.status === 503)).toBe(true);

    // The service retries what was not acknowledged, as it does after 1, 5 and 15 minutes.
    const retried = bodies.filter((_, index) => firstAttempts[index]!.status !== 200);
    await runConcurrently(retried.map((body, index) => () => service.deliverUntilAcknowledged(processes[index % 2]!.url, body)), 4);

    const counts = processedCounts(recordFile);
    for (const body of bodies) expect(counts.get(sha256(body))?.count, body.slice(0, 60)).toBe(1);
  });
});

// Dead letters in the same store as the dedupe store: Redis, or PostgreSQL (examples/postgres-dead-letter-store.ts).
describe.each<SharedStore>(['Redis', 'PostgreSQL'])('keeps schema drift in %s across receiver processes, and replays it from another process after the upgrade', (store) => {
  it('answers an unknown enum value and a missing field 202 on either process, and an upgraded process replays each once', async () => {
    const recordFile = join(workDir, `${store}-drift.log`);
    const invalidFile = join(workDir, `${store}-drift-invalid.log`);
    writeFileSync(invalidFile, '');
    const current = await startProcesses(recordFile, 2, { DEAD_LETTERS: '1', INVALID_FILE: invalidFile }, store);
    const { newEnumValue, missingField } = driftedBodies('multi-drift');
    // Each body to one process, and a copy to the other (after a 202 the platform sends none: a later event with that content, kept in the later place).
    const replies = [
      await service.deliver(current[0]!.url, newEnumValue),
      await service.deliver(current[1]!.url, missingField),
      await service.deliver(current[1]!.url, newEnumValue),
    ];
    expect(replies.map((reply) => [reply.status, reply.body.code])).toEqual(Array(3).fill([202, 'invalid_event_dead_lettered']));
    expect(processedCounts(recordFile).size).toBe(0);
    const sawInvalid = processedCounts(invalidFile);
    expect(sawInvalid.get(sha256(newEnumValue))?.pids).toEqual(new Set(current.map((child) => String(child.pid))));
    expect(sawInvalid.get(sha256(missingField))?.count).toBe(1);

    const upgraded = await startProcesses(recordFile, 1, { DEAD_LETTERS: '1', UPGRADED: '1' }, store);
    const replay = async () => (await (await fetch(upgraded[0]!.url.replace('/webhooks', '/replay'), { method: 'POST' })).json()) as { results: Array<{ bodySha256: string; outcome: string; deleted: boolean }> };
    expect((await replay()).results).toEqual([
      { bodySha256: sha256(missingField), outcome: 'processed', deleted: true },
      { bodySha256: sha256(newEnumValue), outcome: 'processed', deleted: true },
    ]);
    expect((await replay()).results).toEqual([]);
    const counts = processedCounts(recordFile);
    expect(counts.get(sha256(newEnumValue))).toEqual({ count: 1, pids: new Set([String(upgraded[0]!.pid)]) });
    expect(counts.get(sha256(missingField))?.count).toBe(1);
  });
});
