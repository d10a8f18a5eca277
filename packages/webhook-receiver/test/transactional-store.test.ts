import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTransactionalDedupeStore, DedupeStoreError, WebhookReceiverError, type DedupeRecordChange, type DedupeTransact } from '../src/index.js';
import { createPostgresDedupeStore, DEDUPE_TABLE, postgresWakeUps } from '../examples/postgres-dedupe-store.js';
import { describeDedupeStoreContract, expectFailurePlacedWhenTheServiceSawIt, expectPlacesOnTheReceiversClock } from './helpers/dedupe-store-contract.js';
import { usePostgresPool } from './helpers/postgres-server.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** `transact` over a Map, one key at a time (a lock per key), with a pause between read and write as a database's round trips make. */
function lockingTransact(rows = new Map<string, string>()): DedupeTransact & { rows: Map<string, string> } {
  const locks = new Map<string, Promise<void>>();
  const transact = async (key: string, change: (stored: string | undefined) => DedupeRecordChange) => {
    const before = locks.get(key) ?? Promise.resolve();
    let unlock!: () => void;
    const mine = new Promise<void>((resolve) => (unlock = resolve));
    locks.set(key, before.then(() => mine));
    await before;
    try {
      await tick();
      const next = change(rows.get(key));
      await tick();
      if (next.value === undefined) rows.delete(key);
      else if (next.changed) rows.set(key, next.value);
    } finally {
      unlock();
    }
  };
  return Object.assign(transact, { rows });
}

/**
 * `transact` with conditional writes (as DynamoDB's or etcd's): read, change, write only if the
 * value is still the one read, else try again. Every other try of every key loses once to a
 * write slipped in between (the same value written again), so the store sees `change` called twice.
 */
function conditionalTransact(): DedupeTransact & { retries: number } {
  const rows = new Map<string, string>();
  let tries = 0;
  const transact = async (key: string, change: (stored: string | undefined) => DedupeRecordChange) => {
    for (;;) {
      const read = rows.get(key);
      await tick();
      const next = change(read);
      await tick();
      if (++tries % 2 === 0 && read !== undefined) {
        // Another process wrote the key meanwhile: a fresh string, as a database returns.
        rows.set(key, `${read} `.trimEnd());
        transact.retries++;
        if (rows.get(key) !== read) continue;
      }
      if (rows.get(key) !== read) continue;
      if (next.value === undefined) rows.delete(key);
      else if (next.changed) rows.set(key, next.value);
      return;
    }
  };
  transact.retries = 0;
  return transact;
}

describe('transactional store over a Map, one key at a time: the store contract', () => {
  describeDedupeStoreContract((options) => createTransactionalDedupeStore({ transact: lockingTransact(), ...options }));
});

describe('transactional store over conditional writes that are tried again: the store contract', () => {
  describeDedupeStoreContract((options) => createTransactionalDedupeStore({ transact: conditionalTransact(), ...options }));
});

describe('transactional store on a real PostgreSQL server (examples/postgres-dedupe-store.ts)', () => {
  const postgres = usePostgresPool((pool) => pool.query(`CREATE TABLE ${DEDUPE_TABLE} (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL)`));
  let prefix = 0;

  describe('the store contract', () => {
    describeDedupeStoreContract((options) => createPostgresDedupeStore(postgres.pool, { keyPrefix: `contract:${++prefix}:`, ...options }), { shortTtlMs: 200 });
  });

  it('gives a subject to exactly one of 50 concurrent claims over 20 connections, and keeps one row per subject with its expiry', async () => {
    const store = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'race:' });
    const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim('kyc.status.changed:u1', 'digest-a')));
    expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
    expect(claims.filter((claim) => claim.state === 'processing')).toHaveLength(49);
    const claimed = claims.find((claim) => claim.state === 'claimed')!;
    if (claimed.state !== 'claimed') throw new Error('unreachable');
    expect(await store.markProcessed('kyc.status.changed:u1', claimed.token)).toBe(true);
    const { rows } = await postgres.pool.query<{ key: string; value: string; expires_at: string }>(`SELECT * FROM ${DEDUPE_TABLE} WHERE key LIKE 'race:%'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toBe('race:kyc.status.changed:u1');
    expect(JSON.parse(rows[0]!.value)).toMatchObject({ v: 1, record: { state: 'processed', digest: 'digest-a' } });
    // Kept 24 hours by default.
    expect(Number(rows[0]!.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(await store.claim('kyc.status.changed:u1', 'digest-a')).toEqual({ state: 'processed' });
  });

  it('takes the row again when another transaction deleted it while this one waited for it (a release racing a claim), 50 times in a row', async () => {
    const store = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'delete-race:' });
    for (let round = 0; round < 50; round++) {
      const key = `kyc.status.changed:race-${round}`;
      const first = await store.claim(key, 'digest-a', 0, undefined, { acknowledgedEarly: true });
      if (first.state !== 'claimed') throw new Error('expected a claim');
      // Released without a retry due, the subject keeps nothing: its row is deleted while the claim below waits for it.
      const [, next] = await Promise.all([store.release(key, first.token), store.claim(key, 'digest-b')]);
      expect(['claimed', 'processing']).toContain(next.state);
    }
  });

  it('answers dedupe_store_unavailable, and keeps the process up, when the server ends the connection of a transaction', async () => {
    const store = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'terminated:' });
    const holder = await postgres.pool.connect();
    try {
      // Another transaction holds the row: the store's transaction waits for it, and the server
      // ends that connection meanwhile (a restart, a failover, an administrator).
      await store.claim('kyc.status.changed:held', 'digest-a');
      await holder.query('BEGIN');
      await holder.query(`SELECT value FROM ${DEDUPE_TABLE} WHERE key = $1 FOR UPDATE`, ['terminated:kyc.status.changed:held']);
      const claim = Promise.resolve(store.claim('kyc.status.changed:held', 'digest-b')).then(() => undefined, (error: unknown) => error);
      for (let tries = 0; ; tries++) {
        // From another connection: inside a transaction, pg_stat_activity keeps its first snapshot.
        const { rows } = await postgres.pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO %'");
        if (rows.length > 0) {
          await postgres.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          break;
        }
        if (tries > 500) throw new Error('the store\'s transaction never waited for the row');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await claim).toMatchObject({ code: 'dedupe_store_unavailable', message: expect.stringMatching(/^The store's transact failed a claim of terminated:kyc\.status\.changed:held: /) });
      await holder.query('ROLLBACK');
    } finally {
      holder.release();
    }
    // The pool dropped the ended connection: the next call works.
    expect(await store.claim('kyc.status.changed:held', 'digest-b')).toEqual({ state: 'processing' });
  });

  it('wakes the delivery first in line in another process (NOTIFY and LISTEN) once the holder is done, and ignores the keys of another prefix', async () => {
    const wakeUps = [postgresWakeUps(postgres.pool), postgresWakeUps(postgres.pool), postgresWakeUps(postgres.pool)];
    const holder = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'wake:', wakeUps: wakeUps[0] });
    const waiting = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'wake:', wakeUps: wakeUps[1] });
    const woken: string[] = [];
    const failures: unknown[] = [];
    const wake = (key: string, waiterId?: string) => woken.push(`${key} ${waiterId}`);
    waiting.watchLines!(wake, (error) => failures.push(error));
    // Another receiver on the same channel with another prefix: its wake-ups are not this store's.
    const other = createPostgresDedupeStore(postgres.pool, { keyPrefix: 'wake-other:', wakeUps: wakeUps[2] });
    const held = await holder.claim('kyc.status.changed:w', 'digest-a');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    await new Promise((resolve) => setTimeout(resolve, 200)); // listening by now
    expect(await waiting.claim('kyc.status.changed:w', 'digest-b', 0, { id: 'w1', leftMs: 10_000 })).toEqual({ state: 'processing' });
    const otherHeld = await other.claim('kyc.status.changed:w', 'digest-a');
    expect(await other.claim('kyc.status.changed:w', 'digest-b', 0, { id: 'w9', leftMs: 10_000 })).toEqual({ state: 'processing' });
    await other.markProcessed('kyc.status.changed:w', (otherHeld as { token: string }).token);
    await holder.markProcessed('kyc.status.changed:w', held.token);
    for (let waited = 0; woken.length === 0 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(woken).toEqual(['kyc.status.changed:w w1']);
    expect(failures).toEqual([]);
    expect((await waiting.claim('kyc.status.changed:w', 'digest-b', 0, { id: 'w1', leftMs: 10_000 })).state).toBe('claimed');
    await Promise.all(wakeUps.map((wakeUp) => wakeUp.close()));
  });

  it('runs its transactions at READ COMMITTED where the database defaults to SERIALIZABLE: 20 concurrent claims of one subject, none refused', async () => {
    const strict = new pg.Pool({ connectionString: postgres.pool.options.connectionString, max: 20, options: '-c default_transaction_isolation=serializable' });
    try {
      expect((await strict.query<{ default_transaction_isolation: string }>('SHOW default_transaction_isolation')).rows[0]!.default_transaction_isolation).toBe('serializable');
      const store = createPostgresDedupeStore(strict, { keyPrefix: 'serializable:' });
      const claims = await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(store.claim('kyc.status.changed:s', 'digest-a')).then((claim) => claim.state, (error: { code?: string }) => error.code)));
      expect(claims.filter((state) => state === 'claimed')).toHaveLength(1);
      expect(claims.filter((state) => state === 'processing')).toHaveLength(19);
    } finally {
      await strict.end();
    }
  });

  it('answers a claim dedupe_store_unavailable when the database is unreachable (the receiver answers 503)', async () => {
    const unreachable = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:1/postgres`, connectionTimeoutMillis: 2_000 });
    const store = createPostgresDedupeStore(unreachable);
    const error = await Promise.resolve(store.claim('kyc.status.changed:u2', 'digest')).then(() => undefined, (caught: unknown) => caught);
    await unreachable.end();
    expect(error).toBeInstanceOf(DedupeStoreError);
    expect(error).toMatchObject({ code: 'dedupe_store_unavailable', message: expect.stringMatching(/^The store's transact failed a claim of kyc\.status\.changed:u2: .*ECONNREFUSED.* The delivery is answered 503 and will be retried\.$/) });
  });
});

describe('transactional store: places on the receiver\'s clock', () => {
  // A transaction may wait for the subject's row (another process holds it) or for a connection
  // of the pool: the event's place must be its arrival at the receiver, not the store's clock
  // less the wait the receiver measured, which would add that wait to it.
  it('keeps a newer event whose older one waited for the row: claimed, not superseded', async () => {
    await expectPlacesOnTheReceiversClock((firstCall) => {
      let held = true;
      const locking = lockingTransact();
      // A's transaction waits (for the row, or a connection) before it reads.
      return createTransactionalDedupeStore({
        transact: async (key, change) => {
          if (held) {
            held = false;
            await firstCall;
          }
          await locking(key, change);
        },
      });
    }, 'kyc.status.changed:usr_wait');
  });
});

describe('transactional store: a settlement that waited for the row', () => {
  it('places the failure of an attempt that outlived the reply window when the service saw it, not later by the wait', async () => {
    let holdMs = 0;
    const locking = lockingTransact();
    const store = createTransactionalDedupeStore({
      minRetryDelayMs: 1_000,
      replyWindowMs: 500,
      transact: async (key, change) => {
        // The release's transaction waits for the row (another process holds it).
        if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
        await locking(key, change);
      },
    });
    await expectFailurePlacedWhenTheServiceSawIt(store, (ms) => (holdMs = ms));
  });
});

describe('transactional store: its clock', () => {
  it('reads its clock as a call starts: a transaction slowed by its database (a wait for the row\'s lock) agrees with the earlier call on the arrival of a delivery answered 409 whose place lapsed', async () => {
    // The store's clock, moved by the test alone: by the database's latency before change runs, and by the waits.
    let clock = 1_800_000_000_000;
    let latencyMs = 0;
    const transact = lockingTransact();
    const store = createTransactionalDedupeStore({ now: () => clock, minRetryDelayMs: 0, transact: (key, change) => { clock += latencyMs; return transact(key, change); } });
    const e0 = await store.claim('s', 'E0');
    if (e0.state !== 'claimed') throw new Error('expected a claim of E0');
    clock += 10;
    const arrived = clock;
    expect(await store.claim('s', 'E1', 0, { id: 'e1', leftMs: 50 })).toEqual({ state: 'processing' });
    // E1 is answered 409 and its retry recorded (by a receiver that does not give its place back),
    // in a transaction the database takes 20 ms to get to; then its place lapses.
    latencyMs = 20;
    await store.expectRetry!('s', 'E1', clock - arrived);
    latencyMs = 0;
    clock += 150;
    await store.markProcessed('s', e0.token);
    const e2 = await store.claim('s', 'E2');
    if (e2.state !== 'claimed') throw new Error('expected a claim of E2');
    await store.markProcessed('s', e2.token);
    // One retry of E1 is due, not two: its copy is superseded, the next copy is a new event.
    expect([(await store.claim('s', 'E1')).state, (await store.claim('s', 'E1')).state]).toEqual(['superseded', 'claimed']);
  });
});

describe('transactional store: wake-ups that fail', () => {
  it('reports a listen that fails to onError as wake_ups_unavailable and listens again; a notify that fails changes no answer', async () => {
    let listens = 0;
    const reported: unknown[] = [];
    const store = createTransactionalDedupeStore({
      transact: lockingTransact(),
      wakeUps: {
        notify: () => Promise.reject(new Error('NOTIFY refused')),
        listen: () => {
          listens += 1;
          throw new Error('permission denied for LISTEN');
        },
      },
    });
    const wake = () => undefined;
    store.watchLines!(wake, (error) => reported.push(error));
    expect(reported).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reported).toEqual([expect.objectContaining({
      code: 'wake_ups_unavailable',
      message: "The transactional store's wakeUps.listen failed (permission denied for LISTEN); trying again in 1 s. Meanwhile deliveries waiting for a subject held in another process claim it at their next try (up to 250 ms) instead of at once.",
    })]);
    expect(reported[0]).toBeInstanceOf(DedupeStoreError);
    // Tried again after 1 s.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(listens).toBe(2);
    // A delivery waits, the holder settles: the store notifies (which fails), and answers as ever.
    const held = await store.claim('s', 'a');
    if (held.state !== 'claimed') throw new Error('expected a claim');
    expect(await store.claim('s', 'b', 0, { id: 'w1', leftMs: 5_000 })).toEqual({ state: 'processing' });
    expect(await store.markProcessed('s', held.token)).toBe(true);
    expect((await store.claim('s', 'b', 0, { id: 'w1', leftMs: 5_000 })).state).toBe('claimed');
  });

  it('refuses wakeUps that are not { notify, listen } with invalid_options', () => {
    expect(() => createTransactionalDedupeStore({ transact: lockingTransact(), wakeUps: { notify: () => undefined } as never })).toThrow(/wakeUps must be \{ notify\(message\), listen\(onMessage\) \}/);
  });
});

describe('transactional store: what it refuses', () => {
  it.each([
    ['no options', undefined, /createTransactionalDedupeStore needs \{ transact\(key, change\) \}/],
    ['no transact', {}, /createTransactionalDedupeStore needs \{ transact\(key, change\) \}/],
    ['a misspelt option', { transact: lockingTransact(), claimTtl: 5 }, /createTransactionalDedupeStore has no option "claimTtl"; did you mean claimTtlMs\?/],
    ['a clock that is not a function', { transact: lockingTransact(), now: 5 }, /now must be a function returning milliseconds/],
    ['a keyPrefix that is not a string', { transact: lockingTransact(), keyPrefix: 7 }, /keyPrefix must be a string .* got number/],
    ['a claimTtlMs of 0', { transact: lockingTransact(), claimTtlMs: 0 }, /claimTtlMs must be a positive integer, got 0/],
  ])('refuses %s with invalid_options', (_what, options, message) => {
    const create = () => createTransactionalDedupeStore(options as never);
    expect(create).toThrow(WebhookReceiverError);
    expect(create).toThrow(message);
  });

  it('refuses a value it did not write with unexpected_store_reply, and writes nothing over it', async () => {
    for (const foreign of ['not json', '{"state":"processed"}', '{"v":1,"record":{"state":"done","token":"","digest":"","expiresAt":0}}', '[]']) {
      const transact = lockingTransact(new Map([['k', foreign]]));
      const store = createTransactionalDedupeStore({ transact });
      await expect(store.claim('k', 'd')).rejects.toMatchObject({ code: 'unexpected_store_reply', message: expect.stringContaining('which this store did not write: give it a table (or key prefix) of its own') });
      expect(transact.rows.get('k')).toBe(foreign);
    }
  });

  it('refuses a value that is not text (a jsonb column hands back an object), saying to keep it as text', async () => {
    for (const [value, what] of [[{ v: 1, record: {} }, 'a value of type object'], [null, 'null']] as const) {
      const store = createTransactionalDedupeStore({ transact: (_key, change) => void change(value as never) });
      await expect(store.claim('k', 'd')).rejects.toMatchObject({
        code: 'unexpected_store_reply',
        message: `transact passed change ${what} for k, not the text it wrote: keep the value as text (a json or jsonb column gives an object: use text, or pass JSON.stringify of it), and pass undefined when there is none.`,
      });
    }
  });

  it('refuses a value of a later layout, saying to upgrade every process that shares the table', async () => {
    const transact = lockingTransact(new Map([['k', '{"v":2,"subject":{}}']]));
    const store = createTransactionalDedupeStore({ transact });
    await expect(store.markProcessed('k', 'token')).rejects.toMatchObject({
      code: 'unexpected_store_reply',
      message: 'The value under k has layout 2, written by a later @capi/webhook-receiver; this one reads layout 1. Upgrade every process that shares the table.',
    });
  });

  it('keeps its refusal of a foreign value when transact wraps what change threw', async () => {
    const store = createTransactionalDedupeStore({
      transact: (_key, change) => {
        try {
          change('foreign');
        } catch (error) {
          throw new Error('transaction rolled back', { cause: error });
        }
      },
    });
    await expect(store.claim('k')).rejects.toMatchObject({ code: 'unexpected_store_reply' });
  });

  it('refuses a transact that returned without calling change', async () => {
    const store = createTransactionalDedupeStore({ transact: async () => {} });
    await expect(store.claim('k', 'd')).rejects.toMatchObject({
      code: 'unexpected_store_reply',
      message: "The store's transact returned without calling change for a claim of k: it must read the value kept under the key, call change(value) and write what it answers.",
    });
  });

  it('hands transact the key with its prefix, asks for no write when nothing changed, and a delete when the subject is left with nothing', async () => {
    const seen: Array<{ key: string; change: DedupeRecordChange }> = [];
    const rows = new Map<string, string>();
    const store = createTransactionalDedupeStore({
      keyPrefix: 'shop-eu:',
      transact: (key, change) => {
        const next = change(rows.get(key));
        seen.push({ key, change: next });
        if (next.value === undefined) rows.delete(key);
        else rows.set(key, next.value);
      },
    });
    const claim = await store.claim('s', 'd');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    expect(seen[0]).toMatchObject({ key: 'shop-eu:s', change: { changed: true, expiresAt: expect.any(Number) } });
    // A renewal of another token changes nothing: nothing to write.
    expect(await store.renewClaim!('s', 'other')).toBe(false);
    expect(seen[1]!.change).toEqual({ value: rows.get('shop-eu:s'), expiresAt: seen[0]!.change.expiresAt, changed: false });
    // Released without a retry due: the subject keeps nothing, the row is deleted.
    await store.release('s', claim.token);
    expect(seen[2]!.change).toEqual({ value: undefined, expiresAt: 0, changed: true });
    expect(rows.size).toBe(0);
  });

  it('answers what the try that was written answered, when change is called more than once', async () => {
    const transact = conditionalTransact();
    const store = createTransactionalDedupeStore({ transact });
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim('k', 'd')));
    expect(transact.retries).toBeGreaterThan(0);
    expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
  });
});
