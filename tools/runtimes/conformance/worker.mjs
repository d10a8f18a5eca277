// Entry point of the suite on workerd: a Worker whose input is the CONFORMANCE text binding.
// GET /checks runs the runtime-independent checks inside workerd; POST /webhooks is the
// receiver (receiver.handle), which the test on Node sends signed deliveries to; GET
// /dispatched lists what its handler saw, /reported what its onError heard (one isolate serves every request here).
// POST /webhooks-early is a receiver with acknowledgeEarly served without waitUntil
// (/early-dispatched, /early-reported). POST /webhooks-transactional is the counting receiver
// on the transactional store (/transactional-dispatched, /transactional-reported).
import { createCountingReceiver, createEarlyReceiver, createMapTransactionalStore, runChecks } from './suite.mjs';

let counting;
let early;
let transactional;

export default {
  async fetch(request, env) {
    const input = JSON.parse(env.CONFORMANCE);
    counting ??= createCountingReceiver(input.receiverKeys.publicKey);
    const { pathname } = new URL(request.url);
    early ??= createEarlyReceiver(input.receiverKeys.publicKey);
    transactional ??= createCountingReceiver(input.receiverKeys.publicKey, createMapTransactionalStore());
    if (pathname === '/webhooks') return counting.receiver.handle(request);
    if (pathname === '/webhooks-early') return early.receiver.handle(request);
    if (pathname === '/early-dispatched') return Response.json(early.dispatched);
    if (pathname === '/early-reported') return Response.json(early.reported);
    if (pathname === '/webhooks-transactional') return transactional.receiver.handle(request);
    if (pathname === '/transactional-dispatched') return Response.json(transactional.dispatched);
    if (pathname === '/transactional-reported') return Response.json(transactional.reported);
    if (pathname === '/dispatched') return Response.json(counting.dispatched);
    if (pathname === '/reported') return Response.json(counting.reported);
    if (pathname === '/checks') return Response.json({ runtime: 'workerd', version: navigator.userAgent, ...(await runChecks(input)) });
    return new Response('not found', { status: 404 });
  },
};
