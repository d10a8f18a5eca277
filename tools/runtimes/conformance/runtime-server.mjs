// The HTTP server of the runtimes with a process, shared by their entry points
// (process-entry.mjs, redis-receiver.mjs): a receiver served as the runtime's users would serve
// it, Bun.serve and Deno.serve with `receiver.handle`, node:http with `toNodeHandler`.
import { createServer } from 'node:http';
import { toNodeHandler } from '@capi/webhook-receiver';

/** The runtime this file runs in: 'bun', 'deno' or 'node'. */
export const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : 'node';

/** Its version: `Bun.version`, `Deno.version.deno`, `process.version`. */
export const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.version;

/**
 * Serves `receiver` on loopback, on a port the OS chooses. With `control`, a request under
 * `/control/` is answered with the JSON that `control(url, bodyText)` resolves to instead
 * (the test's view into the process); every other request goes to the receiver.
 * @param {import('@capi/webhook-receiver').WebhookReceiver} receiver
 * @param {(url: URL, body: string) => Promise<unknown>} [control]
 * @returns {Promise<{ url: string, close: () => unknown }>} `url` ends in /webhooks
 */
export async function serve(receiver, control) {
  const isControl = (path) => control !== undefined && path.startsWith('/control/');
  const fetchHandler = async (request) => {
    const url = new URL(request.url);
    return isControl(url.pathname) ? Response.json(await control(url, await request.text())) : receiver.handle(request);
  };
  if (runtime === 'bun') {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: fetchHandler });
    return { url: `http://127.0.0.1:${server.port}/webhooks`, close: () => server.stop(true) };
  }
  if (runtime === 'deno') {
    const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, fetchHandler);
    return { url: `http://127.0.0.1:${server.addr.port}/webhooks`, close: () => server.shutdown() };
  }
  const webhooks = toNodeHandler(receiver);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!isControl(url.pathname)) return void webhooks(req, res);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => control(url, body).then((answer) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
