// A deduplication store on PostgreSQL, with `pg`: several receiver processes share one table and
// agree on every subject (duplicates, late retries, one event of a user at a time), as with the
// Redis store. Copy it; the tests run it against a real PostgreSQL server.
//
//   CREATE TABLE capi_webhook_dedupe (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL);
//   -- now and then (a cron job): DELETE FROM capi_webhook_dedupe WHERE expires_at < <now in ms>;
//
// Any isolation level works (the row lock does the work); READ COMMITTED, PostgreSQL's default,
// never needs a retry.
import { createTransactionalDedupeStore, type DedupeStore, type DedupeTransact, type TransactionalDedupeStoreOptions } from '@capi/webhook-receiver';
import type pg from 'pg';

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
      await client.query('BEGIN');
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

/** Options of {@link createPostgresDedupeStore}: the store's, and the table's name. */
export interface PostgresDedupeStoreOptions extends Omit<TransactionalDedupeStoreOptions, 'transact'> {
  /** The table (see the CREATE TABLE above). Default {@link DEDUPE_TABLE}. */
  table?: string;
}

/** A deduplication store in a table of the database behind `pool`. */
export function createPostgresDedupeStore(pool: pg.Pool, { table, ...options }: PostgresDedupeStoreOptions = {}): DedupeStore {
  return createTransactionalDedupeStore({ transact: postgresTransact(pool, table), ...options });
}
