// A delivery's store calls (claim, then markProcessed, each for a subject not seen before) on
// the two stores several processes can share: the transactional store on a real PostgreSQL
// server (examples/postgres-dedupe-store.ts, as a partner copies it: a transaction that locks
// the subject's row; a pool of 16 connections) against the Redis store on a real redis-server
// (ioredis, one connection). 32 deliveries in flight, as a busy receiver process has; the two
// stores run in turn, 8 rounds each, and the figure is the median of the per-round ratios.
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { hasPostgresServer, startPostgresServer } from '@capi/bench-kit/postgres-server';
import { hasRedisServer, startRedisServer } from '@capi/bench-kit/redis-server';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createRedisDedupeStore } from '../dist/index.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The PostgreSQL example as JavaScript, its `@capi/webhook-receiver` the build. */
async function importPostgresExample() {
  const source = await readFile(join(packageDir, 'examples', 'postgres-dedupe-store.ts'), 'utf8');
  const { code: transformed } = await transform(source, { loader: 'ts', format: 'esm' });
  const build = pathToFileURL(join(packageDir, 'dist', 'index.js')).href;
  const code = transformed.replace(/from "@capi\/webhook-receiver"/g, `from ${JSON.stringify(build)}`);
  if (code === transformed) throw new Error('examples/postgres-dedupe-store.ts no longer imports @capi/webhook-receiver as this bench expects');
  const file = join(packageDir, 'node_modules', '.cache', 'capi-webhook-receiver-bench', 'postgres-dedupe-store.mjs');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, code);
  return import(pathToFileURL(file).href);
}

/** `count` deliveries' store calls on `store`, `inFlight` at a time, each for a new subject: deliveries per second. */
async function deliveriesPerSecond(store, label, count, inFlight) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) {
      const key = `kyc.status.changed:${label}-${next++}`;
      const claim = await store.claim(key, 'a'.repeat(64));
      if (claim.state !== 'claimed') throw new Error(`${label}: ${claim.state}`);
      if ((await store.markProcessed(key, claim.token)) === false) throw new Error(`${label}: claim lost`);
    }
  }));
  return count / ((performance.now() - started) / 1000);
}

/**
 * Deliveries per second on each store and the median per-round ratio (PostgreSQL / Redis);
 * `undefined` when either server is missing here.
 */
export async function measureSharedStores({ rounds = 8, perRound = 2_000, inFlight = 32 } = {}) {
  if (!hasRedisServer() || !hasPostgresServer()) return undefined;
  const [redisServer, postgresServer, example] = await Promise.all([startRedisServer(), startPostgresServer(), importPostgresExample()]);
  const redis = new Redis({ port: redisServer.port, host: '127.0.0.1' });
  const pool = new pg.Pool({ connectionString: postgresServer.url, max: 16 });
  try {
    await pool.query(`CREATE TABLE ${example.DEDUPE_TABLE} (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL)`);
    const stores = { postgres: example.createPostgresDedupeStore(pool), redis: createRedisDedupeStore({ client: redis }) };
    // A round of each, not counted: connections opened, scripts loaded, code compiled.
    for (const [label, store] of Object.entries(stores)) await deliveriesPerSecond(store, `warm-${label}`, perRound / 4, inFlight);
    const ratios = [];
    const totals = { postgres: 0, redis: 0 };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['redis', 'postgres'] : ['postgres', 'redis'];
      const perSecond = {};
      for (const label of order) perSecond[label] = await deliveriesPerSecond(stores[label], `${label}-${round}`, perRound, inFlight);
      totals.postgres += perSecond.postgres;
      totals.redis += perSecond.redis;
      ratios.push(perSecond.postgres / perSecond.redis);
    }
    ratios.sort((a, b) => a - b);
    return { postgres: totals.postgres / rounds, redis: totals.redis / rounds, ratio: ratios[Math.floor(ratios.length / 2)], rounds, perRound, inFlight };
  } finally {
    redis.disconnect();
    await pool.end();
    await Promise.all([redisServer.close(), postgresServer.close()]);
  }
}
