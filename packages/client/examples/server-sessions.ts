// A server that acts for many users (it keeps each user's tokens and calls the service for
// them, from several processes): one Redis entry per user, read at the start of each request,
// and a refresh that runs once across all the processes. Why each step is there: README,
// "Several tabs or processes with the same tokens". Run by tools/journey/test/server-sessions.test.ts
// (two processes, the sandbox, a real redis-server). Not published with the package: copy it.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPartnerClient, receivedTokensExpiry, TokenManager, type PartnerClient, type TokenSet } from '@capi/client';
import type { Redis } from 'ioredis';

export interface SessionStoreOptions {
  redis: Redis;
  /** The service's core API base URL. */
  baseUrl: string;
  /**
   * The service's refresh operation (outside the partner interface: plug in yours). It must
   * throw when the service refuses, and let fetch's own error through (README, "Token lifecycle").
   */
  refreshAtService: (refreshToken: string, signal: AbortSignal) => Promise<TokenSet>;
  /** Prefix of the keys: `<prefix>tokens:<userId>` (the entry) and `<prefix>lock:<userId>`. Default `capi:`. */
  keyPrefix?: string;
  /** How long a lock lasts when its holder dies. Keep it above REFRESH_TIMEOUT_MS, so that a live holder never loses it. Default 15 s. */
  lockMs?: number;
}

// A refresh token lives 7 days: so does the entry, renewed with each refresh.
const ENTRY_MS = 7 * 24 * 60 * 60 * 1000;
// The TokenManager gives up on a refresh after this long (the wait for the lock included), and
// its signal aborts the call to the service: a holder never keeps the lock longer.
const REFRESH_TIMEOUT_MS = 10_000;
// Releases the lock only if it is still ours: a holder whose lease ran out must not release the next holder's.
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
// Compare and set: stores the refresh's result only if the entry still holds the refresh token
// it used. Otherwise the user signed out (or in again) meanwhile, and storing would undo that.
const STORE_IF_UNCHANGED = `local entry = redis.call('get', KEYS[1])
if entry and cjson.decode(entry).refreshToken == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return false`;

/** Sessions of many users kept in Redis, shared by every process of the server. */
export function createSessionStore({ redis, baseUrl, refreshAtService, keyPrefix = 'capi:', lockMs = 15_000 }: SessionStoreOptions) {
  const entryKey = (userId: string) => `${keyPrefix}tokens:${userId}`;
  // expiresAt is stored: another process that takes these tokens must not count them as brand new.
  const entryOf = (tokens: TokenSet) => JSON.stringify({ token: tokens.token, refreshToken: tokens.refreshToken, expiresAt: receivedTokensExpiry(tokens) });

  async function read(userId: string): Promise<TokenSet | undefined> {
    const text = await redis.get(entryKey(userId));
    if (text === null) return undefined;
    const entry = JSON.parse(text) as { token: string; refreshToken?: string; expiresAt?: string };
    return { token: entry.token, refreshToken: entry.refreshToken, expiresAt: entry.expiresAt === undefined ? undefined : new Date(entry.expiresAt) };
  }

  // One holder at a time across processes (SET NX), with a lease (PX) so that a holder that
  // died does not lock the user out for ever. Held elsewhere: wait a little and try again,
  // until `signal` aborts.
  async function withLock<T>(userId: string, signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    const key = `${keyPrefix}lock:${userId}`;
    const mine = randomUUID();
    while ((await redis.set(key, mine, 'PX', lockMs, 'NX')) === null) await sleep(20 + Math.random() * 30, undefined, { signal });
    try {
      return await run();
    } finally {
      await redis.eval(UNLOCK, 1, key, mine);
    }
  }

  // The TokenManager's refresh for one user: it runs once across the processes, and the others take its result.
  const refreshFor = (userId: string) => (refreshToken: string, { signal }: { signal: AbortSignal }) =>
    withLock(userId, signal, async () => {
      const latest = await read(userId); // read again inside the lock: it may have changed while we waited
      // Thrown, it fails the request (TokenRenewalError); stored nothing, the user stays signed out.
      if (latest === undefined) throw new Error('Signed out: sign in again.');
      // Another process has refreshed: take its tokens (refreshing again would offer a spent
      // refresh token, and the service would end the session: RefreshTokenReused).
      if (latest.refreshToken !== refreshToken) return latest;
      const tokens = await refreshAtService(refreshToken, signal);
      const received = { token: tokens.token, refreshToken: tokens.refreshToken, expiresAt: receivedTokensExpiry(tokens) };
      // Stored even if the TokenManager has given up on this refresh (signal aborted): the
      // refresh token in the entry is spent now, and the next process to offer it would end the session.
      const stored = await redis.eval(STORE_IF_UNCHANGED, 1, entryKey(userId), refreshToken, JSON.stringify(received), ENTRY_MS);
      if (stored === null) throw new Error('Signed out (or signed in again) while the refresh ran: its tokens were not stored.');
      return received;
    });

  return {
    /**
     * A client for one request of the user, from the entry as stored now; `undefined` when the
     * user is signed out. Make one per request and drop it after: a client kept longer holds
     * tokens that another process may have refreshed (spent) or signed out since.
     */
    async clientFor(userId: string): Promise<PartnerClient | undefined> {
      const tokens = await read(userId);
      if (tokens === undefined) return undefined;
      // No reauthenticate: signing in again needs the user's wallet, which a server does not
      // hold. A refused refresh fails the request (TokenRenewalError): ask the user to sign in.
      const tokenManager = new TokenManager({ tokens, refresh: refreshFor(userId), refreshTimeoutMs: REFRESH_TIMEOUT_MS });
      return createPartnerClient({ baseUrl, tokenManager });
    },
    /** Stores the tokens of a sign-in (the result of signInWithEthereum, with its expiresAt): a new session for the user. */
    async save(userId: string, tokens: TokenSet): Promise<void> {
      await redis.set(entryKey(userId), entryOf(tokens), 'PX', ENTRY_MS);
    },
    /**
     * Signs the user out in every process: removes the entry, under the lock, so that a refresh
     * in flight ends first. A lock held longer than its lease is free by then; the compare and
     * set keeps the late result of its refresh out. The service has no sign-out: the tokens stay
     * valid there until they expire, so drop every other copy you made.
     */
    async signOut(userId: string): Promise<void> {
      await withLock(userId, AbortSignal.timeout(2 * lockMs), () => redis.del(entryKey(userId)));
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
