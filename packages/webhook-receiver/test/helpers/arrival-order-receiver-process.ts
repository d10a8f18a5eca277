// One receiver process of test/arrival-order.test.ts (bundled and started by
// ./arrival-order-processes.ts): node:http + toNodeHandler + the Redis dedupe store (with a
// subscriber for wake-ups), its timings from the environment, so that a test can scale the
// service's schedule down: CLAIM_TTL_MS, MIN_RETRY_DELAY_MS, SUBJECT_WAIT_MS.
// The partner's "database" is RECORD_FILE: the kyc.status.changed handler appends
// `{"kind":"start"|"done","kycStatus":...,"pid":...}` when it starts and when it has written the
// status, onSuperseded appends `{"kind":"superseded",...}`. Appended synchronously, so that a
// process killed with SIGKILL loses nothing it recorded. The handler of the status named by
// HOLD_STATUS never finishes (a handler that hangs until the process is killed).
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { createRedisDedupeStore, createWebhookReceiver, toNodeHandler } from '../../src/index.js';

const { REDIS_PORT, PUBLIC_KEY, RECORD_FILE, CLAIM_TTL_MS, MIN_RETRY_DELAY_MS, SUBJECT_WAIT_MS, HOLD_STATUS } = process.env;
if (!REDIS_PORT || !PUBLIC_KEY || !RECORD_FILE) throw new Error('REDIS_PORT, PUBLIC_KEY and RECORD_FILE are required');

const record = (kind: string, kycStatus: string): void => {
  appendFileSync(RECORD_FILE, `${JSON.stringify({ kind, kycStatus, pid: process.pid })}\n`);
};

// As the README's Redis section sets it up.
const redis = new Redis({ host: '127.0.0.1', port: Number(REDIS_PORT), maxRetriesPerRequest: 1 });
redis.on('error', () => undefined);
const subscriber = redis.duplicate();
subscriber.on('error', () => undefined);

const receiver = createWebhookReceiver({
  publicKey: PUBLIC_KEY,
  dedupe: createRedisDedupeStore({
    client: redis,
    subscriber,
    ...(CLAIM_TTL_MS ? { claimTtlMs: Number(CLAIM_TTL_MS) } : {}),
    ...(MIN_RETRY_DELAY_MS ? { minRetryDelayMs: Number(MIN_RETRY_DELAY_MS) } : {}),
  }),
  ...(SUBJECT_WAIT_MS ? { subjectWaitMs: Number(SUBJECT_WAIT_MS) } : {}),
  onSuperseded: (event) => {
    if (event.eventType === 'kyc.status.changed') record('superseded', event.data.kycStatus);
  },
  onError: () => undefined,
}).on('kyc.status.changed', async (event) => {
  record('start', event.data.kycStatus);
  if (event.data.kycStatus === HOLD_STATUS) await new Promise<never>(() => undefined);
  record('done', event.data.kycStatus);
});

const server = createServer(toNodeHandler(receiver));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  redis.disconnect();
  subscriber.disconnect();
  process.exit(0);
});
