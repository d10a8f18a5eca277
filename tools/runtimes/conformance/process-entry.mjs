// Entry point of the suite on runtimes with a process (Node, Bun, Deno): reads its input as
// JSON from the CAPI_CONFORMANCE environment variable, serves a receiver with the runtime's
// own HTTP server on loopback, sends it signed deliveries, and prints one JSON line of results.
import { createServer } from 'node:http';
import { toNodeHandler } from '@capi/webhook-receiver';
import { createCountingReceiver, PACKAGES, receiveChecks, runChecks } from './suite.mjs';

const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : 'node';

/** Serves `receiver` as the runtime's users would: Bun.serve, Deno.serve, node:http. */
async function serve(receiver) {
  if (runtime === 'bun') {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => receiver.handle(request) });
    return { url: `http://127.0.0.1:${server.port}/webhooks`, close: () => server.stop(true) };
  }
  if (runtime === 'deno') {
    const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, (request) => receiver.handle(request));
    return { url: `http://127.0.0.1:${server.addr.port}/webhooks`, close: () => server.shutdown() };
  }
  const server = createServer(toNodeHandler(receiver));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/webhooks`, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function nodeBuildChecks() {
  const build = await import(new URL('./node.js', import.meta.resolve('@capi/webhook-signature')).href);
  const { publicKey, privateKey } = await build.generateWebhookKeyPair();
  const signed = await build.signWebhook({ rawBody: '{}', privateKey });
  return build.isValidWebhookSignature({ rawBody: '{}', ...signed, publicKey });
}

const input = JSON.parse(process.env.CAPI_CONFORMANCE);
const { receiver, dispatched } = createCountingReceiver(input.receiverKeys.publicKey);
const server = await serve(receiver);
try {
  const results = {
    runtime,
    version: globalThis.Bun ? Bun.version : globalThis.Deno ? Deno.version.deno : process.version,
    resolved: Object.fromEntries(PACKAGES.map((name) => [name, import.meta.resolve(name)])),
    ...(await runChecks(input)),
    // The node:crypto build too, as a bundler that matches `node` would load it: it must sign
    // and verify here without a warning (Bun printed DEP0204 for KeyObject.from()).
    nodeBuild: await nodeBuildChecks(),
    receive: await receiveChecks({ url: server.url, privateKey: input.receiverKeys.privateKey, dispatched: () => dispatched }),
  };
  console.log(JSON.stringify(results));
} finally {
  await server.close();
}
