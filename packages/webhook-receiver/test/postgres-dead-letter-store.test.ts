import { readFileSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DeadLetterStoreError, WebhookReceiverError } from '../src/index.js';
import { createPostgresDeadLetterStore, DEAD_LETTER_TABLE, deadLetterTableSql } from '../examples/postgres-dead-letter-store.js';
import { deadLetterEntry, describeDeadLetterReplaceContract, describeDeadLetterStoreContract } from './helpers/dead-letter-store-contract.js';
import { usePostgresPool } from './helpers/postgres-server.js';

describe('dead-letter store on a real PostgreSQL server (examples/postgres-dead-letter-store.ts)', () => {
  const postgres = usePostgresPool();
  let tables = 0;
  /** A store on a table of its own, created as the example's comment says. */
  const freshStore = async () => {
    const table = `dead_letters_${++tables}`;
    for (const statement of deadLetterTableSql(table)) await postgres.pool.query(statement);
    return { table, store: createPostgresDeadLetterStore(postgres.pool, { table }) };
  };

  describe('the store contract', () => {
    describeDeadLetterStoreContract(async () => (await freshStore()).store);
    // No maxEntries: the table is bounded by the database's disk.
    describeDeadLetterReplaceContract(async () => (await freshStore()).store, { bounded: false });
  });

  it('creates the table the comment at the top of the example shows', async () => {
    const source = readFileSync(new URL('../examples/postgres-dead-letter-store.ts', import.meta.url), 'utf8');
    const comment = source.split('\n').filter((line) => line.startsWith('//   ')).map((line) => line.slice(5)).join('\n');
    const oneLine = (text: string) => text.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
    expect(oneLine(comment)).toBe(oneLine(deadLetterTableSql().map((statement) => `${statement};`).join('\n')));
    // It runs: the default table, and a schema-qualified one.
    for (const statement of [...deadLetterTableSql(), 'CREATE SCHEMA webhooks', ...deadLetterTableSql('webhooks.dead_letters')]) await postgres.pool.query(statement);
    for (const table of [DEAD_LETTER_TABLE, 'webhooks.dead_letters']) {
      const store = createPostgresDeadLetterStore(postgres.pool, { table });
      await store.put(deadLetterEntry('a', 1_000));
      expect((await store.list(10)).map((kept) => kept.bodySha256)).toEqual(['a']);
    }
  });

  it('keeps a 1 MiB body byte for byte, a place that is not a whole millisecond, errors with a NUL, and lists ties by digest (as the Redis store)', async () => {
    const { store } = await freshStore();
    const large = new Uint8Array(1024 * 1024).map((_, index) => (index * 7) % 256);
    const errors = [{ path: '/data/a\u0000b', keyword: 'additionalProperties', message: 'must NOT have additional properties' }];
    await store.put({ ...deadLetterEntry('f', 1_700_000_000_000.25, large), errors });
    await store.put(deadLetterEntry('c', 1_700_000_000_000.25));
    await store.put(deadLetterEntry('e', 1_700_000_000_000));
    const listed = await store.list(10);
    expect(listed.map((kept) => [kept.bodySha256, kept.receivedAt])).toEqual([['e', 1_700_000_000_000], ['c', 1_700_000_000_000.25], ['f', 1_700_000_000_000.25]]);
    expect(Buffer.from(listed[2]!.rawBody).equals(Buffer.from(large))).toBe(true);
    expect(listed[2]!.errors).toEqual(errors);
  });

  it('keeps one entry of concurrent puts of one body over 20 connections, and one of concurrent replaces', async () => {
    const { table, store } = await freshStore();
    await Promise.all(Array.from({ length: 40 }, (_, index) => store.put({ ...deadLetterEntry('a', 1_000 + index), timestamp: 1_700_000_000 + index })));
    await Promise.all(Array.from({ length: 40 }, (_, index) => store.replace!({ ...deadLetterEntry('b', 2_000 + index), timestamp: 1_700_000_000 + index })));
    const { rows } = await postgres.pool.query<{ body_sha256: string; received_at: number; timestamp: string }>(`SELECT body_sha256, received_at, timestamp FROM ${table} ORDER BY body_sha256`);
    expect(rows.map((row) => row.body_sha256)).toEqual(['a', 'b']);
    // Each row whole: the place and timestamp of one and the same put.
    for (const row of rows) expect(Number(row.timestamp) - 1_700_000_000).toBe(row.received_at - (row.body_sha256 === 'a' ? 1_000 : 2_000));
  });

  it('rejects every operation with dead_letter_store_unavailable when the database is unreachable or refuses the statement (the receiver answers 503)', async () => {
    const unreachable = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectionTimeoutMillis: 2_000 });
    const stores = [createPostgresDeadLetterStore(unreachable), createPostgresDeadLetterStore(postgres.pool, { table: 'no_such_table' })];
    try {
      for (const store of stores) {
        const operations: Array<() => unknown> = [() => store.put(deadLetterEntry('a', 1)), () => store.replace!(deadLetterEntry('a', 1)), () => store.list(10), () => store.delete('a')];
        for (const operation of operations) {
          const error = await Promise.resolve().then(operation).then(() => undefined, (caught: unknown) => caught);
          expect(error).toBeInstanceOf(DeadLetterStoreError);
          expect(error).toMatchObject({
            code: 'dead_letter_store_unavailable',
            message: expect.stringMatching(/^PostgreSQL failed the dead-letter (put|replace|list|delete) on \w+: .*(ECONNREFUSED|does not exist).* The delivery is answered 503 and will be retried\.$/),
            cause: expect.any(Error),
          });
        }
      }
    } finally {
      await unreachable.end();
    }
  });

  it('refuses a row it did not write with unexpected_store_reply', async () => {
    const { table, store } = await freshStore();
    await postgres.pool.query(`INSERT INTO ${table} (body_sha256, raw_body, signature, timestamp, received_at, reason, errors) VALUES ('x', '\\x00', 's', 1, 1, 'invalid_event', '{"not":"a list"}')`);
    await expect(store.list(10)).rejects.toMatchObject({ name: 'DeadLetterStoreError', code: 'unexpected_store_reply', message: expect.stringContaining(`Table ${table} holds a row this store did not write`) });
  });

  it('refuses a table name it cannot put in a statement, with invalid_options', () => {
    for (const table of ['', 'dead letters', 'x; DROP TABLE y', 'a.b.c', 7]) {
      expect(() => createPostgresDeadLetterStore(postgres.pool, { table: table as string })).toThrow(WebhookReceiverError);
      expect(() => createPostgresDeadLetterStore(postgres.pool, { table: table as string })).toThrow(expect.objectContaining({ code: 'invalid_options' }));
    }
  });
});
