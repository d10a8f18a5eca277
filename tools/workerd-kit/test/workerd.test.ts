import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleWorker, startWorkerd } from '../index.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'capi-workerd-kit-'));
function writeWorker(source: string): string {
  const file = path.join(dir, `worker-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  return file;
}

describe('serves a worker on real workerd', () => {
  it('answers over HTTP with its text bindings and a Durable Object that keeps state', async () => {
    const { code } = await bundleWorker(writeWorker(`
      export class Counter {
        constructor(state) { this.storage = state.storage; }
        async fetch() { const n = ((await this.storage.get('n')) ?? 0) + 1; await this.storage.put('n', n); return new Response(String(n)); }
      }
      export default {
        async fetch(request, env) {
          if (new URL(request.url).pathname === '/count') return env.COUNTER.get(env.COUNTER.idFromName('one')).fetch(request);
          return new Response(env.GREETING + ' from ' + navigator.userAgent);
        },
      };`));
    const worker = await startWorkerd({ code, bindings: { GREETING: 'hello' }, durableObjects: [{ binding: 'COUNTER', className: 'Counter' }] });
    try {
      expect(await (await fetch(worker.url)).text()).toBe('hello from Cloudflare-Workers');
      expect(await (await fetch(`${worker.url}/count`)).text()).toBe('1');
      expect(await (await fetch(`${worker.url}/count`)).text()).toBe('2');
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('fires the worker\'s scheduled handler as a Cron Trigger does, with its cron and waitUntil, and reports a handler that throws', async () => {
    const { code } = await bundleWorker(writeWorker(`
      const fired = [];
      export default {
        async fetch() { return Response.json(fired); },
        async scheduled(controller, env, ctx) {
          if (controller.cron === 'fail') throw new Error('scheduled handler failure');
          ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 20)).then(() => fired.push(controller.cron + ' ' + typeof controller.scheduledTime)));
        },
      };`));
    const worker = await startWorkerd({ code, cron: true });
    try {
      expect(await worker.scheduled('*/5 * * * *')).toEqual({ outcome: 'ok', noRetry: false });
      // The waitUntil promise has settled once scheduled() resolves.
      expect(await (await fetch(worker.url)).json()).toEqual(['*/5 * * * * number']);
      expect((await worker.scheduled('fail')).outcome).toBe('exception');
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('fails with workerd\'s own message when the worker does not load', async () => {
    await expect(startWorkerd({ code: 'export default { fetch() { return new Response(undefinedName); } };\nthrow new Error("top-level failure");' }))
      .rejects.toThrow(/workerd exited with \d+ before serving:[\s\S]*top-level failure/);
  }, 60_000);
});
