// The real PostgreSQL server of these tests (and of the bench), and a pool to it per describe.
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startPostgresServer, type PostgresServer } from '@capi/bench-kit/postgres-server';

export { startPostgresServer, type PostgresServer };

/**
 * Registers hooks in the describe it is called in: before its tests, a PostgreSQL server and a
 * pool of 20 connections to it, on which `setup` runs (to create tables); after them, both closed.
 * The answer's `pool` is that pool, once the tests run.
 */
export function usePostgresPool(setup: (pool: pg.Pool) => Promise<unknown> = async () => undefined): { readonly pool: pg.Pool } {
  let server: PostgresServer | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: server.url, max: 20 });
    await setup(pool);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });
  return {
    get pool() {
      if (pool === undefined) throw new Error('usePostgresPool(): the pool exists only once the tests of its describe run.');
      return pool;
    },
  };
}
