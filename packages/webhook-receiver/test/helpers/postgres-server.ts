// The real PostgreSQL server of these tests (and of the bench).
export { startPostgresServer, type PostgresServer } from '@capi/bench-kit/postgres-server';
