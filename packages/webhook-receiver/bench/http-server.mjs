// The server side of the HTTP benchmark, in a process of its own so that it does not share a
// core with the load generator. argv[2]: "receiver" (toNodeHandler over the whole pipeline) or
// "verify-only" (bare node:http that reads the body and runs crypto.verify, nothing else).
import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import { createWebhookReceiver, toNodeHandler } from '../dist/index.js';

const [mode, publicKeyPem] = [process.argv[2], process.env.PUBLIC_KEY];
let listener;
if (mode === 'receiver') {
  const receiver = createWebhookReceiver({ publicKey: publicKeyPem, onError: () => undefined }).onAny(() => undefined);
  listener = toNodeHandler(receiver);
} else {
  const key = createPublicKey(publicKeyPem);
  listener = (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const message = Buffer.concat([Buffer.from(`${req.headers['x-webhook-timestamp']}.`), ...chunks]);
      const ok = verify(null, message, key, Buffer.from(String(req.headers['x-webhook-signature']), 'base64'));
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(ok ? '{"code":"processed"}' : '{"code":"invalid_signature"}');
    });
  };
}
const server = createServer(listener);
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
