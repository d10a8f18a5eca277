// A dead-letter store on PostgreSQL, with `pg`, for a deployment without Redis: several receiver
// processes share one table, and replay() in any of them runs what the others kept. It keeps what
// createRedisDeadLetterStore keeps, the same way: one entry per body digest (a put of a second
// copy keeps the first entry whole), replace in one statement, the oldest first. Copy it; the
// tests run the dead-letter store contract and two receiver processes against a real PostgreSQL server.
//
//   CREATE TABLE capi_webhook_dead_letters (
//     body_sha256 text COLLATE "C" PRIMARY KEY,
//     raw_body bytea NOT NULL,
//     signature text NOT NULL,
//     timestamp bigint NOT NULL,
//     received_at double precision NOT NULL,
//     reason text NOT NULL CHECK (reason IN ('invalid_event', 'handler_failed', 'in_flight')),
//     errors json NOT NULL
//   );
//   CREATE INDEX capi_webhook_dead_letters_order ON capi_webhook_dead_letters (received_at, body_sha256);
//
// `received_at` is a double, as the Redis store's score: it keeps any place the receiver gives,
// exactly. `errors` is json, not jsonb: kept as written (jsonb refuses a \u0000 in a path).
// Entries never expire: replay() deletes the ones it processed. There is no maxEntries: watch the
// table's size. Give the pool timeouts (`connectionTimeoutMillis`, `query_timeout`; 2,000 ms, as
// the Redis store's commandTimeoutMs), so that a database that does not answer gets the delivery
// answered 503 and retried rather than left waiting.
import { DeadLetterStoreError, WebhookReceiverError, type DeadLetterEntry, type DeadLetterStore } from '@capi/webhook-receiver';
import type pg from 'pg';

/** The table the store keeps its entries in, by default (see the CREATE TABLE above). */
export const DEAD_LETTER_TABLE = 'capi_webhook_dead_letters';

/** Options of {@link createPostgresDeadLetterStore}. */
export interface PostgresDeadLetterStoreOptions {
  /** The table, created with {@link deadLetterTableSql}; optionally schema-qualified (`webhooks.dead_letters`). Default `capi_webhook_dead_letters`. */
  table?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

function checkedTable(table: unknown): string {
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new WebhookReceiverError('invalid_options', `table must be a table name such as 'capi_webhook_dead_letters' or 'webhooks.dead_letters' (letters, digits and _), got ${typeof table === 'string' ? JSON.stringify(table) : typeof table}.`);
  }
  return table;
}

/** The statements that create `table` and its index (the CREATE TABLE above, for another name). */
export function deadLetterTableSql(table: string = DEAD_LETTER_TABLE): string[] {
  const name = checkedTable(table);
  return [
    `CREATE TABLE ${name} (
  body_sha256 text COLLATE "C" PRIMARY KEY,
  raw_body bytea NOT NULL,
  signature text NOT NULL,
  timestamp bigint NOT NULL,
  received_at double precision NOT NULL,
  reason text NOT NULL CHECK (reason IN ('invalid_event', 'handler_failed', 'in_flight')),
  errors json NOT NULL
)`,
    `CREATE INDEX ${name.slice(name.indexOf('.') + 1)}_order ON ${name} (received_at, body_sha256)`,
  ];
}

interface Row {
  body_sha256: string;
  raw_body: Uint8Array;
  signature: string;
  // bigint: pg answers it as text.
  timestamp: string;
  received_at: number;
  reason: string;
  errors: unknown;
}

const COLUMNS = 'body_sha256, raw_body, signature, timestamp, received_at, reason, errors';
const REASONS = new Set(['invalid_event', 'handler_failed', 'in_flight']);

/**
 * A dead-letter store in `table` of the database behind `pool`. A database that fails or refuses
 * a statement rejects with a `DeadLetterStoreError` `dead_letter_store_unavailable` (the store's
 * error as its cause), as the Redis store does: the delivery is answered 503 and retried.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 2_000, query_timeout: 2_000 });
 * const receiver = createWebhookReceiver({
 *   publicKey,
 *   dedupe: createPostgresDedupeStore(pool),
 *   deadLetters: createPostgresDeadLetterStore(pool),
 * });
 * ```
 */
export function createPostgresDeadLetterStore(pool: pg.Pool, options: PostgresDeadLetterStoreOptions = {}): DeadLetterStore {
  const table = checkedTable(options.table ?? DEAD_LETTER_TABLE);
  const query = async <R extends object>(operation: string, text: string, values: unknown[]): Promise<R[]> => {
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (cause) {
      throw new DeadLetterStoreError('dead_letter_store_unavailable',
        `PostgreSQL failed the dead-letter ${operation} on ${table}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, { cause });
    }
  };
  // Every field; a reason other than handler_failed or in_flight is kept as invalid_event (its default), as the Redis store does.
  const values = (entry: DeadLetterEntry) => [
    entry.bodySha256,
    entry.rawBody,
    entry.signature,
    entry.timestamp,
    entry.receivedAt,
    entry.reason === 'handler_failed' || entry.reason === 'in_flight' ? entry.reason : 'invalid_event',
    // Stringified here: pg would send an array as a PostgreSQL array.
    JSON.stringify(entry.errors),
  ];
  const insert = `INSERT INTO ${table} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (body_sha256)`;
  return {
    async put(entry) {
      // A redelivery of the same body keeps the first entry whole.
      await query('put', `${insert} DO NOTHING`, values(entry));
    },
    async replace(entry) {
      // One statement: the later entry, every field, in its own place; or, should it fail, the earlier one as it was.
      await query('replace', `${insert} DO UPDATE SET raw_body = EXCLUDED.raw_body, signature = EXCLUDED.signature, timestamp = EXCLUDED.timestamp, ` +
        'received_at = EXCLUDED.received_at, reason = EXCLUDED.reason, errors = EXCLUDED.errors', values(entry));
    },
    async list(limit) {
      // Ties broken by digest, as the Redis store's sorted set does.
      const rows = await query<Row>('list', `SELECT ${COLUMNS} FROM ${table} ORDER BY received_at, body_sha256 LIMIT $1`, [limit]);
      return rows.map((row) => fromRow(row, table));
    },
    async delete(bodySha256) {
      await query('delete', `DELETE FROM ${table} WHERE body_sha256 = $1`, [bodySha256]);
    },
  };
}

function fromRow(row: Row, table: string): DeadLetterEntry {
  if (!REASONS.has(row.reason) || !Array.isArray(row.errors) || !(row.raw_body instanceof Uint8Array)) {
    throw new DeadLetterStoreError('unexpected_store_reply', `Table ${table} holds a row this store did not write (digest ${JSON.stringify(row.body_sha256)}); give the store a table of its own, created with deadLetterTableSql().`);
  }
  return {
    bodySha256: row.body_sha256,
    // A copy of its own: pg may hand a small bytea as a view of a shared buffer.
    rawBody: new Uint8Array(row.raw_body),
    timestamp: Number(row.timestamp),
    signature: row.signature,
    receivedAt: row.received_at,
    errors: row.errors as DeadLetterEntry['errors'],
    reason: row.reason as NonNullable<DeadLetterEntry['reason']>,
  };
}
