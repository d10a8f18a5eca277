// Reference 5 rule 7 on a partner's server that acts for many users: it keeps each user's
// tokens in Redis and calls the service for them from several processes. Two (or three)
// separate Node processes run the client's sample, packages/client/examples/server-sessions.ts,
// against the sandbox over loopback HTTP and a real redis-server; nothing is mocked. The
// access token expires on the service's clock (POST /__sandbox/clock), so each process's first
// request after it is answered 401 and renews it, as at a real expiry; or the stored expiry is
// within the TokenManager's renewBeforeMs, and the processes renew ahead of it.
import { startRedisServer, type RedisServer } from '@capi/bench-kit/redis-server';
import { signerFromViemAccount } from '@capi/client';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { admin, newWallet, SIGN_IN_PAGE, startJourney, type Journey } from './support/journey.js';
import { compileSessionProcess, startSessionProcess, type SessionProcess } from './support/session-processes.js';

const KEY_PREFIX = 'partner:';

let redisServer: RedisServer;
let redis: Redis;
let monitor: Redis;
let journey: Journey;
let compiled: ReturnType<typeof compileSessionProcess>;
const processes: SessionProcess[] = [];
/** The status of every refresh the sandbox answered (POST /__sandbox/auth/refresh), in order. */
const refreshes: (number | null)[] = [];
/** How many requests the sandbox answered 401 so far. */
let unauthorized = 0;
/** The Redis commands the test saw (MONITOR), each as its arguments. */
const commands: string[][] = [];

beforeAll(async () => {
  redisServer = await startRedisServer();
  redis = new Redis({ host: '127.0.0.1', port: redisServer.port });
  monitor = await redis.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => void commands.push(args));
  journey = await startJourney({
    onLog: (entry) => {
      if (entry.kind === 'request' && entry.path === '/__sandbox/auth/refresh') refreshes.push(entry.status);
      if (entry.kind === 'request' && entry.status === 401) unauthorized += 1;
    },
  });
  compiled = compileSessionProcess();
}, 60_000);
afterAll(async () => {
  await Promise.all(processes.map((child) => child.close()));
  compiled?.remove();
  redis?.disconnect();
  monitor?.disconnect();
  await journey?.close();
  await redisServer?.close();
});

/** A server process of the partner; `lockMs`: the lease of its locks. */
async function serverProcess(lockMs?: number): Promise<SessionProcess> {
  const child = await startSessionProcess(compiled.script, {
    CAPI_BASE_URL: journey.sandbox.baseUrl,
    REDIS_PORT: String(redisServer.port),
    KEY_PREFIX,
    ...(lockMs === undefined ? {} : { LOCK_MS: String(lockMs) }),
  });
  processes.push(child);
  return child;
}

/** Sends an order and expects it to succeed; resolves to its value. */
async function ok(child: SessionProcess, command: Parameters<SessionProcess['order']>[0]): Promise<unknown> {
  const answer = await child.order(command);
  if (!answer.ok) throw new Error(`${command.op} failed: ${JSON.stringify(answer.error)}\n${child.output()}`);
  return answer.value;
}

/** The user's entry as stored, or null. */
async function storedEntry(userId: string): Promise<{ token: string; refreshToken: string; expiresAt: string } | null> {
  return JSON.parse((await redis.get(`${KEY_PREFIX}tokens:${userId}`)) ?? 'null');
}

/** How many times `child` told `event` so far. */
const told = (child: SessionProcess, event: string) => child.events.filter((name) => name === event).length;

/** How many times a process tried to take the user's lock (SET NX on its key) so far. */
const lockAttempts = (userId: string) => commands.filter((args) => args[0]?.toLowerCase() === 'set' && args[1] === `${KEY_PREFIX}lock:${userId}`).length;

/**
 * A registered user signs in (a partner's server receives the tokens) and `saver` stores them,
 * with `expiresAt` in place of the sign-in's when given.
 */
async function signedInUser(saver: SessionProcess, expiresAt?: Date): Promise<{ userId: string; refreshToken: string }> {
  const { account, client } = newWallet(journey.sandbox);
  const { id: userId } = await admin<{ id: string }>(journey.sandbox, 'POST', '/__sandbox/users', { email: `${account.address.toLowerCase()}@example.com`, signInWallets: [account.address] });
  const tokens = await client.signInWithEthereum({ ...signerFromViemAccount(account), ...SIGN_IN_PAGE });
  await ok(saver, { op: 'save', userId, tokens: expiresAt === undefined ? tokens : { ...tokens, expiresAt } });
  return { userId, refreshToken: tokens.refreshToken! };
}

/** {@link signedInUser}, then the service's clock moves 16 minutes on: the access token has expired there. */
async function signedInUserWhoseTokenExpired(saver: SessionProcess): Promise<{ userId: string; refreshToken: string }> {
  const user = await signedInUser(saver);
  await admin(journey.sandbox, 'POST', '/__sandbox/clock', { advanceSeconds: 16 * 60 });
  return user;
}

describe('a partner server keeping its users\' tokens in Redis with the client\'s sample (examples/server-sessions.ts), in two processes', () => {
  let a: SessionProcess;
  let b: SessionProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([serverProcess(), serverProcess()]);
  });

  it('after the access token expired, both processes make a request for the user at once: one refresh reaches the service, the other process waits for the lock and takes its result, and both requests succeed', async () => {
    const { userId, refreshToken } = await signedInUserWhoseTokenExpired(a);
    const refreshesBefore = refreshes.length;
    const attemptsBefore = lockAttempts(userId);
    await Promise.all([ok(a, { op: 'holdRefreshes', hold: true }), ok(b, { op: 'holdRefreshes', hold: true })]);
    const requests = [a.order({ op: 'request', userId }), b.order({ op: 'request', userId })];
    // One process took the lock and is about to refresh at the service; it waits there until
    // the other one has tried the lock too (and found it held).
    await vi.waitFor(() => expect([...a.events, ...b.events]).toContain('refresh-held'), { timeout: 20_000 });
    const [refresher, other] = a.events.includes('refresh-held') ? [a, b] : [b, a];
    await vi.waitFor(() => expect(lockAttempts(userId) - attemptsBefore).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
    await ok(refresher, { op: 'releaseRefresh' });
    const answers = await Promise.all(requests);
    await Promise.all([ok(a, { op: 'holdRefreshes', hold: false }), ok(b, { op: 'holdRefreshes', hold: false })]);

    expect(answers).toEqual([{ ok: true, value: userId }, { ok: true, value: userId }]);
    // Exactly one refresh reached the service, and it was not refused (no RefreshTokenReused).
    expect(refreshes.slice(refreshesBefore)).toEqual([200]);
    expect(told(refresher, 'refresh-at-service')).toBe(1);
    expect(told(other, 'refresh-at-service')).toBe(0);
    // The stored refresh token rotated once, and the stored tokens serve both processes.
    const entry = (await storedEntry(userId))!;
    expect(entry.refreshToken).not.toBe(refreshToken);
    expect(Date.parse(entry.expiresAt)).toBeGreaterThan(Date.now());
    expect(await Promise.all([a.order({ op: 'request', userId }), b.order({ op: 'request', userId })])).toEqual([{ ok: true, value: userId }, { ok: true, value: userId }]);
    expect(refreshes.slice(refreshesBefore)).toEqual([200]);
    expect((await storedEntry(userId))!.refreshToken).toBe(entry.refreshToken);
  });

  it('ahead of expiry (within renewBeforeMs, the token still valid at the service): both processes renew before any 401, with one refresh at the service', async () => {
    // Stored as expiring in a minute (the TokenManager renews 3 minutes ahead by default); the
    // service's clock has not moved, so the access token itself is still good there.
    const { userId, refreshToken } = await signedInUser(a, new Date(Date.now() + 60_000));
    const [refreshesBefore, unauthorizedBefore, attemptsBefore] = [refreshes.length, unauthorized, lockAttempts(userId)];
    await Promise.all([ok(a, { op: 'holdRefreshes', hold: true }), ok(b, { op: 'holdRefreshes', hold: true })]);
    const [heldInA, heldInB] = [told(a, 'refresh-held'), told(b, 'refresh-held')];
    const requests = [a.order({ op: 'request', userId }), b.order({ op: 'request', userId })];
    await vi.waitFor(() => expect(told(a, 'refresh-held') + told(b, 'refresh-held')).toBe(heldInA + heldInB + 1), { timeout: 20_000 });
    const [refresher, other] = told(a, 'refresh-held') > heldInA ? [a, b] : [b, a];
    await vi.waitFor(() => expect(lockAttempts(userId) - attemptsBefore).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
    const [atServiceInRefresher, atServiceInOther] = [told(refresher, 'refresh-at-service'), told(other, 'refresh-at-service')];
    await ok(refresher, { op: 'releaseRefresh' });
    const answers = await Promise.all(requests);
    await Promise.all([ok(a, { op: 'holdRefreshes', hold: false }), ok(b, { op: 'holdRefreshes', hold: false })]);

    expect(answers).toEqual([{ ok: true, value: userId }, { ok: true, value: userId }]);
    expect(refreshes.slice(refreshesBefore)).toEqual([200]);
    expect(told(refresher, 'refresh-at-service') - atServiceInRefresher).toBe(1);
    expect(told(other, 'refresh-at-service') - atServiceInOther).toBe(0);
    // Renewed ahead: the service answered no request 401 on the way.
    expect(unauthorized - unauthorizedBefore).toBe(0);
    const entry = (await storedEntry(userId))!;
    expect(entry.refreshToken).not.toBe(refreshToken);
    expect(Date.parse(entry.expiresAt)).toBeGreaterThan(Date.now() + 10 * 60_000);
  });

  it('a sign-out in A while B refreshes waits for B\'s lock, then removes the entry: the user stays signed out in both processes', async () => {
    const { userId } = await signedInUserWhoseTokenExpired(a);
    const refreshesBefore = refreshes.length;
    await ok(b, { op: 'holdRefreshes', hold: true });
    const held = told(b, 'refresh-held');
    const request = b.order({ op: 'request', userId });
    await vi.waitFor(() => expect(told(b, 'refresh-held')).toBe(held + 1), { timeout: 20_000 });
    const attemptsBefore = lockAttempts(userId);
    const signOut = a.order({ op: 'signOut', userId });
    // A has found the lock held by B's refresh, and waits.
    await vi.waitFor(() => expect(lockAttempts(userId)).toBeGreaterThan(attemptsBefore), { timeout: 20_000 });
    await ok(b, { op: 'holdRefreshes', hold: false });
    await ok(b, { op: 'releaseRefresh' });
    // B's request was made before the sign-out: it ends with the refreshed token.
    expect(await request).toEqual({ ok: true, value: userId });
    expect(await signOut).toEqual({ ok: true });
    expect(refreshes.slice(refreshesBefore)).toEqual([200]);
    // Removed after B stored its refresh, and nothing puts it back: signed out everywhere.
    expect(await storedEntry(userId)).toBeNull();
    expect(await Promise.all([a.order({ op: 'request', userId }), b.order({ op: 'request', userId })])).toEqual([{ ok: true, value: 'signed out' }, { ok: true, value: 'signed out' }]);
    expect(await storedEntry(userId)).toBeNull();
  });

  it('a sign-out in A once the lease of B\'s lock ran out (B stuck in its refresh) removes the entry; B\'s refresh, which the service still answers, is not stored (compare and set), and the user stays signed out', async () => {
    // A process whose locks last 300 ms: B's refresh outlives its lease.
    const stuck = await serverProcess(300);
    const { userId } = await signedInUserWhoseTokenExpired(a);
    const refreshesBefore = refreshes.length;
    await ok(stuck, { op: 'holdRefreshes', hold: true });
    const request = stuck.order({ op: 'request', userId });
    await vi.waitFor(() => expect(told(stuck, 'refresh-held')).toBe(1), { timeout: 20_000 });
    // A takes the lock once the lease has run out, and removes the entry while B's refresh is held.
    expect(await a.order({ op: 'signOut', userId })).toEqual({ ok: true });
    expect(await storedEntry(userId)).toBeNull();
    await ok(stuck, { op: 'releaseRefresh' });
    const answer = await request;
    // The service rotated the token, but the entry no longer held the one used: not stored.
    expect(refreshes.slice(refreshesBefore)).toEqual([200]);
    expect(answer).toMatchObject({ ok: false, error: { name: 'TokenRenewalError', code: 'token_renewal_failed', cause: expect.stringMatching(/tokens were not stored/) } });
    expect(await storedEntry(userId)).toBeNull();
    expect(await Promise.all([a.order({ op: 'request', userId }), stuck.order({ op: 'request', userId })])).toEqual([{ ok: true, value: 'signed out' }, { ok: true, value: 'signed out' }]);
  });
});

describe('without the sample: why it exists', () => {
  it('two processes, each with a TokenManager restored from the same entry and kept, no lock: both refresh with the same refresh token, and the service ends the session (RefreshTokenReused, then SessionRevoked) for both', async () => {
    const [a, b] = await Promise.all([serverProcess(), serverProcess()]);
    const { userId } = await signedInUserWhoseTokenExpired(a);
    await Promise.all([ok(a, { op: 'naiveRestore', userId }), ok(b, { op: 'naiveRestore', userId })]);
    const refreshesBefore = refreshes.length;
    const answers = await Promise.all([a.order({ op: 'naiveRequest', userId }), b.order({ op: 'naiveRequest', userId })]);
    // Both refreshed with the same refresh token: the second offer is a reuse, refused.
    expect(refreshes.slice(refreshesBefore).sort()).toEqual([200, 401]);
    const failures = answers.flatMap((answer) => (answer.ok ? [] : [JSON.stringify(answer.error)]));
    expect(failures.some((failure) => failure.includes('RefreshTokenReused'))).toBe(true);
    // The session has ended for both processes, whatever tokens each holds now.
    for (const child of [a, b]) {
      const again = await child.order({ op: 'naiveRequest', userId });
      expect(again.ok).toBe(false);
      expect(JSON.stringify(again)).toMatch(/RefreshTokenReused|SessionRevoked/);
    }
    // And for whoever reads the entry next: even the refresh token stored last is refused.
    const answer = await a.order({ op: 'request', userId });
    expect(answer).toMatchObject({ ok: false, error: { name: 'TokenRenewalError', cause: expect.stringMatching(/SessionRevoked/) } });
  });
});
