// Entry point of the suite on runtimes with a process (Node, Bun, Deno): reads its input as
// JSON from the CAPI_CONFORMANCE environment variable, serves a receiver with the runtime's
// own HTTP server on loopback, sends it signed deliveries, and prints one JSON line of results.
import { runtime, runtimeVersion, serve } from './runtime-server.mjs';
import { createCountingReceiver, createEarlyReceiver, createMapTransactionalStore, denoPermissionChecks, earlyChecks, PACKAGES, receiveChecks, runChecks } from './suite.mjs';

async function nodeBuildChecks() {
  const build = await import(new URL('./node.js', import.meta.resolve('@capi/webhook-signature')).href);
  const { publicKey, privateKey } = await build.generateWebhookKeyPair();
  const signed = await build.signWebhook({ rawBody: '{}', privateKey });
  return build.isValidWebhookSignature({ rawBody: '{}', ...signed, publicKey });
}

const input = JSON.parse(process.env.CAPI_CONFORMANCE);
const { receiver, dispatched, reported } = createCountingReceiver(input.receiverKeys.publicKey);
const server = await serve(receiver);
const transactional = createCountingReceiver(input.receiverKeys.publicKey, createMapTransactionalStore());
const transactionalServer = await serve(transactional.receiver);
const early = createEarlyReceiver(input.receiverKeys.publicKey);
const earlyServer = await serve(early.receiver);
try {
  const results = {
    runtime,
    version: runtimeVersion,
    resolved: Object.fromEntries(PACKAGES.map((name) => [name, import.meta.resolve(name)])),
    ...(await runChecks(input)),
    // The node:crypto build too, as a bundler that matches `node` would load it: it must sign
    // and verify here without a warning (Bun printed DEP0204 for KeyObject.from()).
    nodeBuild: await nodeBuildChecks(),
    ...(runtime === 'deno' ? { denoPermission: await denoPermissionChecks(input.sandbox) } : {}),
    receive: await receiveChecks({ url: server.url, privateKey: input.receiverKeys.privateKey, dispatched: () => dispatched, reported: () => reported }),
    // The same deliveries to a receiver on the transactional store.
    receiveTransactional: await receiveChecks({ url: transactionalServer.url, privateKey: input.receiverKeys.privateKey, dispatched: () => transactional.dispatched, reported: () => transactional.reported }),
    // acknowledgeEarly served without waitUntil: the runtime's own server keeps the handlers running after the 202.
    early: await earlyChecks({ url: earlyServer.url, privateKey: input.receiverKeys.privateKey, dispatched: () => early.dispatched, reported: () => early.reported }),
  };
  console.log(JSON.stringify(results));
} finally {
  await server.close();
  await transactionalServer.close();
  await earlyServer.close();
}
