// The Redis stores of @capi/webhook-receiver on Bun and Deno (and Node 20, for comparison):
// four receiver processes (conformance/redis-receiver.mjs), each served by its runtime's own
// HTTP server and each with a Redis client that runs there, share one real redis-server
// started here. The test signs the deliveries and sends them over HTTP.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kycEventBody } from '../conformance/suite.mjs';
import { startRedisServer } from '@capi/bench-kit/redis-server';
import { startServerIn } from '../src/run-runtime.mjs';

/** The receiver processes: `client` 'bun' is Bun's built-in RedisClient through the stores' function forms. */
const PROCESSES = [
  { name: 'bun-redisclient', runtime: 'bun', client: 'bun', version: /^1\./ },
  { name: 'bun-ioredis', runtime: 'bun', client: 'ioredis', version: /^1\./ },
  { name: 'deno-ioredis', runtime: 'deno', client: 'ioredis', version: /^2\./ },
  { name: 'node20-ioredis', runtime: 'node20', client: 'ioredis', version: /^v20\./ },
] as const;
type Name = (typeof PROCESSES)[number]['name'];

interface Dispatched { via: string; userId: string; kycStatus: string; bodySha256: string; startedAt: number; endedAt: number | null }
type Started = Awaited<ReturnType<typeof startServerIn>>;

const keyPrefix = `capi:matrix:${process.pid}:`;
let redisServer: Awaited<ReturnType<typeof startRedisServer>>;
/** The test's own connection, to look into Redis (never to the stores' keys but to read them). */
let inspector: Redis;
let keys: { publicKey: string; privateKey: string };
const running = new Map<Name, Started>();

beforeAll(async () => {
  redisServer = await startRedisServer();
  inspector = new Redis({ host: '127.0.0.1', port: redisServer.port });
  keys = await generateWebhookKeyPair();
  const input = (client: string) => ({ CAPI_REDIS_RECEIVER: JSON.stringify({ redisPort: redisServer.port, publicKey: keys.publicKey, keyPrefix, client }) });
  const started = await Promise.all(PROCESSES.map((each) => startServerIn(each.runtime, 'conformance/redis-receiver.mjs', input(each.client))));
  PROCESSES.forEach((each, index) => running.set(each.name, started[index]!));
});

afterAll(async () => {
  for (const started of running.values()) started.kill();
  inspector?.disconnect();
  await redisServer?.close();
});

const at = (name: Name): Started => running.get(name)!;
const sha256 = (body: string) => createHash('sha256').update(body).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signs `body` now and POSTs it to the process's receiver: `<status> <code>`. */
async function deliver(name: Name, body: string): Promise<string> {
  const signed = await signWebhook({ rawBody: body, privateKey: keys.privateKey });
  const response = await fetch(`${at(name).origin}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', ...signed.headers }, body });
  return `${response.status} ${((await response.json()) as { code: string }).code}`;
}

/** A request to the process's /control/ routes (see conformance/redis-receiver.mjs). */
async function control<T = unknown>(name: Name, path: string, body?: string): Promise<T> {
  return (await fetch(`${at(name).origin}/control/${path}`, { method: 'POST', body })).json() as Promise<T>;
}

const dispatched = (name: Name) => control<Dispatched[]>(name, 'dispatched');

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting: ${what}`);
    await sleep(5);
  }
}

describe('the Redis stores on Bun and Deno (and Node 20): four receiver processes share one redis-server', () => {
  it('runs each receiver in its runtime with its client, every subscriber subscribed to the wake-ups', async () => {
    for (const each of PROCESSES) {
      const info = await control<Record<string, string>>(each.name, 'info');
      expect(info).toEqual({ runtime: each.runtime.replace(/\d+$/, ''), version: expect.stringMatching(each.version), client: each.client, receiver: expect.stringMatching(/\/packages\/webhook-receiver\/dist\/index\.js$/) });
    }
    // One subscription per process (the store subscribes when its first receiver watches).
    await until(async () => ((await inspector.call('PUBSUB', 'NUMSUB', `${keyPrefix}lines`)) as [string, number])[1] === PROCESSES.length,
      `${PROCESSES.length} subscribers on ${keyPrefix}lines`);
  });

  it.each(PROCESSES.map((each) => each.name))('on %s: A -> B -> A is dispatched three times, a re-signed retry of the latest is 200 duplicate', async (name) => {
    const user = `usr_sequence_${name}`;
    const replies: string[] = [];
    for (const kycStatus of ['pending', 'resubmissionRequested', 'pending', 'pending']) replies.push(await deliver(name, kycEventBody(user, kycStatus)));
    expect(replies).toEqual(['200 processed', '200 processed', '200 processed', '200 duplicate']);
    expect((await dispatched(name)).filter((each) => each.userId === user).map((each) => each.kycStatus)).toEqual(['pending', 'resubmissionRequested', 'pending']);
  });

  it('a retry of an event processed by one process is a duplicate at every other, whatever runtime and client', async () => {
    const replies: Record<string, string> = {};
    for (const first of PROCESSES) {
      for (const other of PROCESSES) {
        if (other === first) continue;
        const body = kycEventBody(`usr_pair_${first.name}_${other.name}`, 'approved');
        replies[`${first.name} then ${other.name}`] = `${await deliver(first.name, body)}, then ${await deliver(other.name, body)}`;
      }
    }
    expect(replies).toEqual(Object.fromEntries(Object.keys(replies).map((pair) => [pair, '200 processed, then 200 duplicate'])));
    // Each event was dispatched once, by the process that got it first.
    for (const each of PROCESSES) {
      const seen = (await dispatched(each.name)).filter((record) => record.userId.startsWith('usr_pair_')).map((record) => record.userId);
      expect(seen).toEqual(PROCESSES.filter((other) => other !== each).map((other) => `usr_pair_${each.name}_${other.name}`));
    }
  });

  // [holder, waiter]: the waiter's subscriber must hear the wake-up (each client's subscribe form once).
  // Whether a wake-up makes the waiting delivery claim at once (rather than at its next try) is
  // the receiver's, tested on Node with timers stopped (webhook-receiver's redis-wake-ups test);
  // here: each runtime's subscriber hears it, and the subject is handed over in order.
  it.each([
    ['node20-ioredis', 'bun-redisclient'],
    ['bun-redisclient', 'deno-ioredis'],
    ['deno-ioredis', 'bun-ioredis'],
  ] as const)('a delivery held in its handler on %s: the next of its subject, sent to %s, waits, hears the wake-up and is handled after it', async (holder, waiter) => {
    const user = `usr_wake_${waiter}`;
    const first = kycEventBody(user, 'pending');
    const second = kycEventBody(user, 'resubmissionRequested');
    await control(holder, 'hold', sha256(first));
    // Rejections handled here too: should a wait below give up, afterAll kills the processes under them.
    const firstReply = deliver(holder, first);
    firstReply.catch(() => undefined);
    let secondReply: Promise<string> | undefined;
    let waiterId: string | undefined;
    try {
      await until(async () => (await dispatched(holder)).some((each) => each.bodySha256 === sha256(first)), 'the first handler to start');
      secondReply = deliver(waiter, second);
      secondReply.catch(() => undefined);
      // The second has its place in the store's line: a `w<expires at>|<waiter id>[|...]` line in the
      // subject's value (README, "A claim is one Lua script").
      await until(async () => {
        waiterId = /\nw\d+\|([^|\n]+)/.exec((await inspector.get(`${keyPrefix}kyc.status.changed:${user}`)) ?? '')?.[1];
        return waiterId !== undefined;
      }, 'the second delivery to wait in the store');
    } finally {
      await control(holder, 'release', sha256(first));
    }
    expect([await firstReply, await secondReply]).toEqual(['200 processed', '200 processed']);
    // The settlement published the subject for the waiting delivery, and its process heard it.
    expect(await control<string[]>(waiter, 'wake-ups')).toContain(`kyc.status.changed:${user}|${waiterId}`);
    const firstRun = (await dispatched(holder)).find((each) => each.bodySha256 === sha256(first))!;
    const secondRun = (await dispatched(waiter)).find((each) => each.bodySha256 === sha256(second))!;
    expect(secondRun.startedAt).toBeGreaterThanOrEqual(firstRun.endedAt!);
    // Neither was dispatched anywhere else.
    for (const each of PROCESSES) {
      expect((await dispatched(each.name)).filter((record) => record.userId === user).map((record) => record.kycStatus))
        .toEqual(each.name === holder ? ['pending'] : each.name === waiter ? ['resubmissionRequested'] : []);
    }
  });

  it('keeps events the schema refuses in Redis from Bun (RedisClient) and Deno (ioredis), lists them from either, replays them after an upgrade', async () => {
    const onBun = kycEventBody('usr_drift_bun', 'someNewValue');
    const onDeno = kycEventBody('usr_drift_deno', 'someNewValue');
    expect(await deliver('bun-redisclient', onBun)).toBe('202 invalid_event_dead_lettered');
    expect(await deliver('deno-ioredis', onDeno)).toBe('202 invalid_event_dead_lettered');
    // A later copy, at the other process: the store keeps one entry per body, in the later place
    // (after its 202 the service sends the event no more: the copy is a later event).
    expect(await deliver('deno-ioredis', onBun)).toBe('202 invalid_event_dead_lettered');
    const entries = [onDeno, onBun].map((body) => ({ bodySha256: sha256(body), kycStatus: 'someNewValue', errors: ['/data/kycStatus'] }));
    expect(await control('deno-ioredis', 'dead-letters')).toEqual(entries);
    expect(await control('bun-redisclient', 'dead-letters')).toEqual(entries);
    // Before the upgrade, a replay still refuses them and keeps them.
    expect(await control('bun-redisclient', 'replay')).toEqual({ results: entries.map(({ bodySha256 }) => ({ bodySha256, outcome: 'invalid_event_dead_lettered', deleted: false })) });
    expect(await control('bun-redisclient', 'dead-letters')).toEqual(entries);
    // After it (the same stores, a schema that knows the value): processed once each, deleted.
    expect(await control('deno-ioredis', 'replay?upgraded')).toEqual({ results: entries.map(({ bodySha256 }) => ({ bodySha256, outcome: 'processed', deleted: true })) });
    expect(await control('bun-redisclient', 'dead-letters')).toEqual([]);
    expect(await control('deno-ioredis', 'replay?upgraded')).toEqual({ results: [] });
    expect((await dispatched('deno-ioredis')).filter((each) => each.via === 'replay').map((each) => [each.userId, each.kycStatus]))
      .toEqual([['usr_drift_deno', 'someNewValue'], ['usr_drift_bun', 'someNewValue']]);
  });

  it('reports nothing to onError but the refused events, closes its connections, exits 0, with nothing on stderr', async () => {
    const refused = { name: 'InvalidWebhookEventError', code: 'invalid_event', outcome: 'invalid_event_dead_lettered' };
    const expected: Record<Name, unknown[]> = { 'bun-redisclient': [refused], 'bun-ioredis': [], 'deno-ioredis': [refused, refused], 'node20-ioredis': [] };
    for (const each of PROCESSES) expect(await control(each.name, 'errors')).toEqual(expected[each.name]);
    for (const each of PROCESSES) await control(each.name, 'close');
    const exits = await Promise.all(PROCESSES.map((each) => Promise.race([at(each.name).exited, sleep(10_000).then(() => 'still running 10 s after close')])));
    expect(Object.fromEntries(PROCESSES.map((each, index) => [each.name, { exit: exits[index], stderr: at(each.name).stderr() }])))
      .toEqual(Object.fromEntries(PROCESSES.map((each) => [each.name, { exit: 0, stderr: '' }])));
  });
});
