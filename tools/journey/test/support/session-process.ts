// One process of a partner's server, for server-sessions.test.ts: it keeps its users' tokens
// with packages/client/examples/server-sessions.ts (the sample under test, as a partner would
// copy it) and takes its orders from the test over IPC. Run as a child process
// (support/session-processes.ts), with CAPI_BASE_URL, REDIS_PORT, KEY_PREFIX and LOCK_MS.
import { createPartnerClient, receivedTokensExpiry, TokenManager, type TokenSet } from '@capi/client';
import { getUser } from '@capi/client/onboarding';
import { Redis } from 'ioredis';
import { createSessionStore } from '../../../../packages/client/examples/server-sessions.js';

/** An order from the test. */
export type SessionCommand =
  | { op: 'save'; userId: string; tokens: TokenSet }
  | { op: 'request'; userId: string }
  | { op: 'signOut'; userId: string }
  | { op: 'holdRefreshes'; hold: boolean }
  | { op: 'releaseRefresh' }
  | { op: 'naiveRestore'; userId: string }
  | { op: 'naiveRequest'; userId: string };

/** What the process answers: a value, or the error the order ended with. */
export type SessionAnswer = { ok: true; value?: unknown } | { ok: false; error: { name: string; code?: string; message: string; cause?: string } };

const baseUrl = process.env.CAPI_BASE_URL!;
const keyPrefix = process.env.KEY_PREFIX!;
const redis = new Redis({ host: '127.0.0.1', port: Number(process.env.REDIS_PORT), maxRetriesPerRequest: 1 });

/** Tells the test something happened here (outside any answer). */
const tell = (event: string) => process.send!({ event });

// While `hold` is on, a refresh that reaches the service waits for releaseRefresh first (inside
// the sample's lock, after it read the entry again): the test does something meanwhile.
let hold = false;
let release: (() => void) | undefined;

/** The sandbox's refresh operation (POST /__sandbox/auth/refresh, as the client's README writes a refresh). */
async function refreshAtSandbox(refreshToken: string, signal: AbortSignal): Promise<TokenSet> {
  const response = await fetch(`${baseUrl}/__sandbox/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refreshToken }),
    signal,
  });
  if (!response.ok) throw new Error(`refresh refused: HTTP ${response.status} ${((await response.json().catch(() => ({}))) as { code?: string }).code ?? ''}`);
  return (await response.json()) as TokenSet;
}

const store = createSessionStore({
  redis,
  baseUrl,
  keyPrefix,
  ...(process.env.LOCK_MS ? { lockMs: Number(process.env.LOCK_MS) } : {}),
  refreshAtService: async (refreshToken, signal) => {
    if (hold) {
      const released = new Promise<void>((resolve) => { release = resolve; });
      tell('refresh-held');
      await released;
    }
    tell('refresh-at-service');
    return refreshAtSandbox(refreshToken, signal);
  },
});

// The naive way, for contrast: a TokenManager per process, restored once from the same entry
// and kept, whose refresh stores its result with a plain SET. No lock, no compare and set.
const naive = new Map<string, TokenManager>();
async function naiveRestore(userId: string): Promise<void> {
  const key = `${keyPrefix}tokens:${userId}`;
  const entry = JSON.parse((await redis.get(key))!) as TokenSet;
  naive.set(userId, new TokenManager({
    tokens: { ...entry, expiresAt: new Date(entry.expiresAt!) },
    refresh: async (refreshToken, { signal }) => {
      const tokens = await refreshAtSandbox(refreshToken, signal);
      await redis.set(key, JSON.stringify({ ...tokens, expiresAt: receivedTokensExpiry(tokens) }));
      return tokens;
    },
  }));
}

async function run(command: SessionCommand): Promise<unknown> {
  switch (command.op) {
    case 'save':
      return store.save(command.userId, command.tokens);
    case 'request': {
      // A request of the partner's server for this user: a client from the entry as stored now.
      const client = await store.clientFor(command.userId);
      return client === undefined ? 'signed out' : (await getUser(client)).id;
    }
    case 'signOut':
      return store.signOut(command.userId);
    case 'holdRefreshes':
      hold = command.hold;
      return undefined;
    case 'releaseRefresh':
      release?.();
      release = undefined;
      return undefined;
    case 'naiveRestore':
      return naiveRestore(command.userId);
    case 'naiveRequest':
      return (await getUser(createPartnerClient({ baseUrl, tokenManager: naive.get(command.userId)! }))).id;
  }
}

const describeError = (error: unknown) => {
  const { name, code, message, cause } = error as { name: string; code?: string; message: string; cause?: { message?: string } };
  return { name, ...(code === undefined ? {} : { code }), message, ...(cause?.message === undefined ? {} : { cause: cause.message }) };
};

process.on('message', (message: { id: number; command: SessionCommand }) => {
  run(message.command).then(
    (value) => process.send!({ id: message.id, answer: { ok: true, value } satisfies SessionAnswer }),
    (error: unknown) => process.send!({ id: message.id, answer: { ok: false, error: describeError(error) } satisfies SessionAnswer }),
  );
});
// The test went away: so does this process.
process.on('disconnect', () => {
  redis.disconnect();
  process.exit(0);
});
tell('ready');
