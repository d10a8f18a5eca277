// The server side of the HTTP benchmarks, in a process of its own so that it does not share a
// core with the load generator. argv[2]:
// - "receiver": node:http + toNodeHandler over the whole pipeline;
// - "verify-only": bare node:http that reads the body and runs crypto.verify, nothing else;
// - "hand-written": the same server doing what a partner writes without the SDK: verify, then
//   decode, JSON.parse and validateWebhookEvent (no deduplication, no dispatch);
// - "hono-receiver": Hono on @hono/node-server, the route calling receiver.handle(c.req.raw);
// - "hono-verify-only": the same Hono app whose route reads the body through arrayBuffer()
//   (never request.body first) and runs crypto.verify, nothing else.
import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { validateWebhookEvent } from '@capi/webhook-validator';
import { createWebhookReceiver, toNodeHandler } from '../dist/index.js';

const [mode, publicKeyPem] = [process.argv[2], process.env.PUBLIC_KEY];
const key = createPublicKey(publicKeyPem);
const verifies = (timestamp, signature, body) =>
  verify(null, Buffer.concat([Buffer.from(`${timestamp}.`), body]), key, Buffer.from(String(signature), 'base64'));
const newReceiver = () => createWebhookReceiver({ publicKey: publicKeyPem, onError: () => undefined }).onAny(() => undefined);
const announce = (port) => process.stdout.write(`LISTENING ${port}\n`);

const textDecoder = new TextDecoder();
if (mode === 'receiver' || mode === 'verify-only' || mode === 'hand-written') {
  const parses = mode === 'hand-written';
  const listener = mode === 'receiver' ? toNodeHandler(newReceiver()) : (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ok = verifies(req.headers['x-webhook-timestamp'], req.headers['x-webhook-signature'], body)
        && (!parses || validateWebhookEvent(JSON.parse(textDecoder.decode(body))).ok);
      const reply = ok ? '{"code":"processed"}' : '{"code":"invalid_signature"}';
      // With its length, as the receiver's replies go out (not in chunked framing).
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', 'content-length': String(reply.length) }).end(reply);
    });
  };
  const server = createServer(listener);
  server.listen(0, '127.0.0.1', () => announce(server.address().port));
} else if (mode === 'hono-receiver' || mode === 'hono-verify-only') {
  const app = new Hono();
  if (mode === 'hono-receiver') {
    const receiver = newReceiver();
    app.post('/webhooks', (c) => receiver.handle(c.req.raw));
  } else {
    app.post('/webhooks', async (c) => {
      const body = new Uint8Array(await c.req.raw.arrayBuffer());
      const ok = verifies(c.req.header('x-webhook-timestamp'), c.req.header('x-webhook-signature'), body);
      return c.json({ code: ok ? 'processed' : 'invalid_signature' }, ok ? 200 : 401);
    });
  }
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => announce(info.port));
} else {
  throw new Error(`unknown mode ${mode}`);
}
