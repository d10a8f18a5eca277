// A deduplication store on PostgreSQL, with `pg`: several receiver processes share one table and
// agree on every subject (duplicates, late retries, one event of a user at a time), as with the
// Redis store. Copy it; the tests run it against a real PostgreSQL server.
//
//   CREATE TABLE capi_webhook_dedupe (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL);
//   -- now and then (a cron job): DELETE FROM capi_webhook_dedupe WHERE expires_at < <now in ms>;
//
// Its transactions run at READ COMMITTED (PostgreSQL's default, set explicitly in case the
// database's is stricter): the row lock does the work, and no call needs a retry (under
// REPEATABLE READ or SERIALIZABLE, concurrent calls for one subject fail with 40001). Give the
// pool timeouts (`connectionTimeoutMillis`, `query_timeout`: 2,000 ms each) and an 'error'
// listener (`pool.on('error', ...)`: an idle connection the server ends emits it, and without a
// listener Node ends the process).
import { createTransactionalDedupeStore, type DedupeStore, type DedupeTransact, type DedupeWakeUps, type TransactionalDedupeStoreOptions } from '@capi/webhook-receiver';
import pg from 'pg';

/** The table the store keeps its rows in (see the CREATE TABLE above). */
export const DEDUPE_TABLE = 'capi_webhook_dedupe';

/**
 * `transact` on PostgreSQL: one transaction that takes the subject's row locked, in one
 * statement (an upsert: an empty row when there is none, so that two processes that find no row
 * still take turns, and a row deleted meanwhile by another transaction is simply made again),
 * hands its value to `change`, and writes or deletes what `change` answers.
 */
export function postgresTransact(pool: pg.Pool, table = DEDUPE_TABLE): DedupeTransact {
  return async (key, change) => {
    const client = await pool.connect();
    // A connection the server ends while it is checked out emits 'error': without a listener,
    // Node ends the process. Its query fails too, so the delivery is answered 503 and retried.
    let failure: Error | undefined;
    const onError = (error: Error) => { failure = error; };
    client.on('error', onError);
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { rows } = await client.query<{ value: string }>(
        `INSERT INTO ${table} (key, value, expires_at) VALUES ($1, '', 0) ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING value`, [key]);
      const stored = rows[0]!.value;
      const next = change(stored === '' ? undefined : stored);
      if (next.value === undefined) await client.query(`DELETE FROM ${table} WHERE key = $1`, [key]);
      else if (next.changed) await client.query(`UPDATE ${table} SET value = $2, expires_at = $3 WHERE key = $1`, [key, next.value, next.expiresAt]);
      await client.query('COMMIT');
    } catch (error) {
      failure ??= error as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.off('error', onError);
      // A connection that failed is closed, not put back in the pool.
      client.release(failure);
    }
  };
}

/** The channel of {@link postgresWakeUps}, by default. */
export const WAKE_UP_CHANNEL = 'capi_webhook_lines';

/**
 * Wake-ups over PostgreSQL's `NOTIFY` and `LISTEN`: a delivery waiting for a subject that another
 * process holds claims it as soon as that process is done. `listen` keeps a connection of its
 * own (made with the pool's settings, outside the pool); when the server ends it, it listens
 * again on a new one after 1 s (wake-ups sent meanwhile are lost: those deliveries claim at their
 * next try, within 250 ms). `close()` ends that connection: call it when the server stops,
 * before `pool.end()`, or the connection keeps the process alive.
 */
export function postgresWakeUps(pool: pg.Pool, channel = WAKE_UP_CHANNEL): DedupeWakeUps & { close(): Promise<void> } {
  let closed = false;
  let current: pg.Client | undefined;
  const listen = async (onMessage: (message: string) => void): Promise<void> => {
    if (closed) return;
    const client = new pg.Client(pool.options);
    current = client;
    let lost = false;
    const again = () => {
      if (lost) return;
      lost = true;
      void client.end().catch(() => {});
      if (!closed) setTimeout(() => void listen(onMessage).catch(again), 1_000).unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (notification) => {
      if (notification.channel === channel && notification.payload !== undefined) onMessage(notification.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
  };
  return {
    notify: (message) => pool.query('SELECT pg_notify($1, $2)', [channel, message]),
    listen,
    async close() {
      closed = true;
      await current?.end().catch(() => {});
    },
  };
}

/** Options of {@link createPostgresDedupeStore}: the store's, and the table's name. */
export interface PostgresDedupeStoreOptions extends Omit<TransactionalDedupeStoreOptions, 'transact'> {
  /** The table (see the CREATE TABLE above). Default {@link DEDUPE_TABLE}. */
  table?: string;
}

/**
 * A deduplication store in a table of the database behind `pool`; pass `wakeUps:
 * postgresWakeUps(pool)` for wake-ups over NOTIFY and LISTEN (and close them when the server stops).
 */
export function createPostgresDedupeStore(pool: pg.Pool, { table, ...options }: PostgresDedupeStoreOptions = {}): DedupeStore {
  return createTransactionalDedupeStore({ transact: postgresTransact(pool, table), ...options });
}
