import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature, WebhookSignatureError } from '@capi/webhook-signature';

export interface ReceivedWebhook {
  timestamp: string;
  signature: string;
  rawBody: string;
  event: { eventType: string; data: any };
  receivedAt: number;
}

/**
 * A partner's receiver as a plain node:http server: it verifies each delivery with
 * @capi/webhook-signature against the key fetched from the sandbox's webhooks URL, records
 * it, and answers with the status `answer` chooses (default 204). `answer` may also never
 * answer (return 'hang') to test the timeout.
 */
export async function startPlainReceiver(options: {
  publicKey: string | (() => string);
  answer?: (delivery: ReceivedWebhook, index: number) => number | 'hang';
}) {
  const received: ReceivedWebhook[] = [];
  const rejected: { code: string }[] = [];
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const timestamp = request.headers['x-webhook-timestamp'] as string;
    const signature = request.headers['x-webhook-signature'] as string;
    try {
      const publicKey = typeof options.publicKey === 'function' ? options.publicKey() : options.publicKey;
      await verifyWebhookSignature({ rawBody, timestamp, signature, publicKey });
    } catch (error) {
      rejected.push({ code: error instanceof WebhookSignatureError ? error.code : String(error) });
      response.writeHead(401).end('invalid signature');
      return;
    }
    const delivery: ReceivedWebhook = { timestamp, signature, rawBody, event: JSON.parse(rawBody), receivedAt: Date.now() };
    received.push(delivery);
    const status = options.answer ? options.answer(delivery, received.length - 1) : 204;
    if (status === 'hang') return;
    response.writeHead(status).end(status >= 300 ? `refused with ${status}` : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return {
    url,
    received,
    rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Serves `handle` (a `toNodeHandler` of @capi/webhook-receiver) on a loopback port and registers
 * it as one of the sandbox's webhook endpoints. `close()` drops its connections and stops it.
 */
export async function serveWebhookEndpoint(
  sandbox: { addWebhookEndpoint(url: string): unknown },
  handle: (request: IncomingMessage, response: ServerResponse) => unknown,
): Promise<{ close(): Promise<void> }> {
  const server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sandbox.addWebhookEndpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
  return {
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
