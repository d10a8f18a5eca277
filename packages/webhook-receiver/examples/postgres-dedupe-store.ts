// A deduplication store on PostgreSQL, with `pg`: several receiver processes share one table and
// agree on every subject (duplicates, late retries, one event of a user at a time), as with the
// Redis store. Copy it; the tests run it against a real PostgreSQL server.
//
//   CREATE TABLE capi_webhook_dedupe (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL);
//   -- now and then (a cron job): DELETE FROM capi_webhook_dedupe WHERE expires_at < <now in ms>;
import { createTransactionalDedupeStore, type DedupeStore, type DedupeTransact, type TransactionalDedupeStoreOptions } from '@capi/webhook-receiver';
import type pg from 'pg';

/** The table the store keeps its rows in (see the CREATE TABLE above). */
export const DEDUPE_TABLE = 'capi_webhook_dedupe';

/**
 * `transact` on PostgreSQL: one transaction that locks the subject's row (inserted empty first
 * when there is none, so that two processes that see no row still take turns), hands its value
 * to `change`, and writes or deletes what `change` answers.
 */
export function postgresTransact(pool: pg.Pool, table = DEDUPE_TABLE): DedupeTransact {
  return async (key, change) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${table} (key, value, expires_at) VALUES ($1, '', 0) ON CONFLICT (key) DO NOTHING`, [key]);
      const { rows } = await client.query<{ value: string }>(`SELECT value FROM ${table} WHERE key = $1 FOR UPDATE`, [key]);
      const stored = rows[0]!.value;
      const next = change(stored === '' ? undefined : stored);
      if (next.value === undefined) await client.query(`DELETE FROM ${table} WHERE key = $1`, [key]);
      else if (next.changed) await client.query(`UPDATE ${table} SET value = $2, expires_at = $3 WHERE key = $1`, [key, next.value, next.expiresAt]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };
}

/** A deduplication store in `table` of the database behind `pool`. */
export function createPostgresDedupeStore(pool: pg.Pool, options: Omit<TransactionalDedupeStoreOptions, 'transact'> = {}): DedupeStore {
  return createTransactionalDedupeStore({ transact: postgresTransact(pool), ...options });
}
