// Hand-over of a subject between two receivers on one Redis, each with connections of its own
// (as two processes would have): receiver A holds a subject, receiver B gets the next event of
// that subject and waits; A's handler finishes after a random 30 to 230 ms, and the figure is
// the time from A's settlement to B's handler starting. Without a subscriber B finds the subject
// free at its next try (every 10 to 250 ms); with one, the store wakes it.
import { createPrivateKey, sign } from 'node:crypto';
import { hasRedisServer, startRedisServer } from '@capi/bench-kit/redis-server';
import { Redis } from 'ioredis';
import { createRedisDedupeStore, createWebhookReceiver } from '../dist/index.js';
import { signDeliveries } from './deliveries.mjs';

/**
 * Medians (and p90) of `rounds` hand-overs in ms, without and with a subscriber; `undefined`
 * when no `redis-server` is on the PATH.
 */
export async function measureHandOver({ publicKeyPem, privateKeyPem, rounds = 40 }) {
  if (!hasRedisServer()) return undefined;
  const server = await startRedisServer();
  const base = new Redis({ port: server.port, host: '127.0.0.1' });
  try {
    await base.ping();
    const privateKey = createPrivateKey(privateKeyPem);
    const run = async (withSubscriber) => {
      const connections = [];
      const connection = () => {
        const made = base.duplicate();
        connections.push(made);
        return made;
      };
      const keyPrefix = `handover:${withSubscriber}:`;
      let release;
      let settledAt = 0;
      let startedAt = 0;
      const receiver = (holds) => createWebhookReceiver({
        publicKey: publicKeyPem,
        onError: (error) => { throw error; },
        dedupe: createRedisDedupeStore({ client: connection(), keyPrefix, ...(withSubscriber ? { subscriber: connection() } : {}) }),
      }).onAny(async () => {
        if (!holds) {
          startedAt = performance.now();
          return;
        }
        await new Promise((resolve) => { release = resolve; });
        settledAt = performance.now();
      });
      const holder = receiver(true);
      const waiter = receiver(false);
      // Let the subscriptions be in place before the first round.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const source = ({ timestamp, signature, bodyBytes }) => ({
        method: 'POST',
        header: (name) => (name === 'x-webhook-timestamp' ? timestamp : signature),
        readRawBody: () => Promise.resolve(bodyBytes),
      });
      const times = [];
      for (let round = 0; round < rounds; round++) {
        const [first] = signDeliveries(privateKeyPem, 1, round);
        // The next event of the same subject: another status, signed the same way.
        const body = first.body.replace('"kycStatus":"approved"', '"kycStatus":"pending"');
        const next = { timestamp: first.timestamp, bodyBytes: Buffer.from(body), signature: sign(null, Buffer.from(`${first.timestamp}.${body}`), privateKey).toString('base64') };
        release = undefined;
        const held = holder.receive(source(first));
        while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
        const waiting = waiter.receive(source(next));
        await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 200));
        release();
        const replies = await Promise.all([held, waiting]);
        if (replies.some(({ reply }) => reply.status !== 200)) throw new Error(`hand-over bench: a delivery was answered ${replies.map(({ reply }) => reply.status)}`);
        times.push(startedAt - settledAt);
      }
      for (const made of connections) made.disconnect();
      times.sort((a, b) => a - b);
      return { median: times[times.length >> 1], p90: times[Math.floor(times.length * 0.9)] };
    };
    const without = await run(false);
    const withSubscriber = await run(true);
    return { without, with: withSubscriber };
  } finally {
    base.disconnect();
    await server.close();
  }
}
