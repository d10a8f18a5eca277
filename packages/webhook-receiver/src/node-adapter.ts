import type { DeliverySource, ReceiverReply } from './delivery-source.js';
import { WebhookReceiverError, bodyIncompleteError, bodyTooLargeError } from './errors.js';
import type { WebhookReceiver } from './receiver-types.js';

// The Node types are structural, the members the adapter uses: the published .d.ts imports no
// `node:` module, so a project without @types/node (a Worker) typechecks it with skipLibCheck
// off. Node's IncomingMessage and ServerResponse (and Express's and Fastify's raw ones) are
// assignable to them.

/**
 * A Node request as Express, Fastify (`request.raw`) and node:http hand it over (an
 * `IncomingMessage`), maybe with a parsed `body`: the members the adapter reads.
 *
 * @example
 * ```ts
 * app.post('/webhooks', (req: NodeWebhookRequest, res) => toNodeHandler(receiver)(req, res));
 * ```
 */
export interface NodeWebhookRequest {
  readonly method?: string | undefined;
  /** Headers by lower-case name (Node's `IncomingHttpHeaders`). */
  readonly headers: { readonly [name: string]: string | readonly string[] | undefined };
  /** What a body parser made of the body (`express.raw()`: a Buffer; `express.text()`: a string). */
  body?: unknown;
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  readonly errored?: Error | null | undefined;
  // Listeners as Node's Readable takes them (any arguments).
  on(event: string, listener: (...args: any[]) => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
  pause(): unknown;
}

/**
 * A Node response (node:http's `ServerResponse`, Express's `res`, Fastify's `reply.raw`): the
 * members {@link writeNodeReply} uses.
 *
 * @example
 * ```ts
 * const write = (res: NodeWebhookResponse, reply: ReceiverReply) => writeNodeReply(res, reply);
 * ```
 */
export interface NodeWebhookResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  writeHead(statusCode: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/**
 * The `(req, res)` function {@link toNodeHandler} returns; it resolves once the reply is written and any early-acknowledged handler has finished.
 *
 * @example
 * ```ts
 * const handleWebhook: NodeWebhookHandler = toNodeHandler(receiver);
 * createServer((req, res) => void handleWebhook(req, res));
 * ```
 */
export type NodeWebhookHandler = (req: NodeWebhookRequest, res: NodeWebhookResponse) => Promise<void>;

/**
 * Serves a receiver from node:http, Express or Fastify. It reads the raw body itself; when a
 * body parser got there first it uses the bytes of `express.raw()`/`express.text()`, and
 * otherwise answers 500 `body_already_consumed` with a message that says how to fix the
 * server (and gives the same error to `onError`).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * createServer(toNodeHandler(receiver)).listen(3000);
 * // Express: app.post('/webhooks', toNodeHandler(receiver)); (before app.use(express.json()))
 * ```
 */
export function toNodeHandler(receiver: WebhookReceiver): NodeWebhookHandler {
  if (typeof (receiver as Partial<WebhookReceiver> | null | undefined)?.receive !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'toNodeHandler(receiver) needs the receiver that createWebhookReceiver({ publicKey }) returns.');
  }
  return async function webhookNodeHandler(req, res) {
    if (typeof (req.headers as { get?: unknown } | undefined)?.get === 'function') {
      throw new WebhookReceiverError('invalid_options',
        'toNodeHandler(receiver) serves node:http\'s (req, res); for a Web-standard Request (Bun, Deno, Hono, Workers), call receiver.handle(request) instead.');
    }
    const { reply, afterReply } = await receiver.receive(deliverySourceFromNodeRequest(req));
    writeNodeReply(res, reply);
    if (afterReply !== undefined) await afterReply;
  };
}

/**
 * Adapts Node's `IncomingMessage` to a {@link DeliverySource}.
 *
 * @example
 * ```ts
 * const { reply, afterReply } = await receiver.receive(deliverySourceFromNodeRequest(req));
 * writeNodeReply(res, reply);
 * ```
 */
export function deliverySourceFromNodeRequest(req: NodeWebhookRequest): DeliverySource {
  return {
    method: req.method ?? 'GET',
    header: (name) => req.headers[name],
    readRawBody: (maxBytes) => readNodeBody(req, maxBytes),
  };
}

/**
 * Writes a {@link ReceiverReply} to Node's `ServerResponse`, unless something else has already
 * answered on it (then it leaves that response as it is).
 *
 * @example
 * ```ts
 * const { reply } = await receiver.receive(deliverySourceFromNodeRequest(req));
 * writeNodeReply(res, reply);
 * ```
 */
export function writeNodeReply(res: NodeWebhookResponse, reply: ReceiverReply): void {
  // Something else answered first (a timeout middleware's 503): writing again would throw
  // ERR_HTTP_HEADERS_SENT, an unhandled rejection from the handler's promise.
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(reply.status, headersWithLength(reply));
  res.end(reply.body);
}

// With a Content-Length, Node sends the reply as one piece instead of in chunked framing (which
// writeHead followed by end otherwise gets). Replies without a detail are shared objects, so
// their headers are worked out once.
const nodeHeaders = new WeakMap<ReceiverReply, Readonly<Record<string, string>>>();
function headersWithLength(reply: ReceiverReply): Record<string, string> {
  let headers = nodeHeaders.get(reply) as Record<string, string> | undefined;
  if (headers === undefined) {
    headers = { ...reply.headers, 'content-length': String(Buffer.byteLength(reply.body)) };
    nodeHeaders.set(reply, headers);
  }
  return headers;
}

const HOW_TO_KEEP_THE_RAW_BODY =
  'The webhook signature covers the raw bytes, so the receiver must read them itself: mount the webhook route ' +
  'before any body parser (app.post("/webhooks", toNodeHandler(receiver)) above app.use(express.json())), or give ' +
  'the route express.raw({ type: "*/*" }) with no app-wide parser ahead of it (an app.use(express.json()) that runs before the ' +
  'route parses first, and express.raw() then finds nothing to read); in Fastify, register the route with a content-type ' +
  'parser that leaves the body unread.';

function readNodeBody(req: NodeWebhookRequest, maxBytes: number): Promise<Uint8Array> {
  const parsed = req.body;
  // body-parser 1.x (Express 4) sets req.body = {} even when the content type did not match and
  // it left the stream unread: then the bytes are still there to read.
  const untouchedPlaceholder = isEmptyPlainObject(parsed) && !req.readableEnded;
  if (parsed !== undefined && !untouchedPlaceholder) {
    if (parsed instanceof Uint8Array) {
      if (parsed.byteLength > maxBytes) return Promise.reject(bodyTooLargeError(maxBytes));
      return Promise.resolve(parsed);
    }
    if (typeof parsed === 'string') {
      const bytes = new TextEncoder().encode(parsed);
      if (bytes.byteLength > maxBytes) return Promise.reject(bodyTooLargeError(maxBytes));
      return Promise.resolve(bytes);
    }
    return Promise.reject(new WebhookReceiverError('body_already_consumed',
      `A body parser already turned the request body into ${parsed === null ? 'null' : typeof parsed === 'object' ? 'an object' : typeof parsed}. ${HOW_TO_KEEP_THE_RAW_BODY}`));
  }
  if (req.readableEnded) {
    return Promise.reject(new WebhookReceiverError('body_already_consumed',
      `The request stream was already read by something before the receiver. ${HOW_TO_KEEP_THE_RAW_BODY}`));
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(bodyTooLargeError(maxBytes));
  // The sender left before the receiver ran (behind an asynchronous middleware): no 'end' or
  // 'error' will ever come.
  if (req.destroyed) return Promise.reject(bodyIncompleteError(req.errored ?? new Error('the connection closed')));

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.byteLength;
      if (length > maxBytes) {
        // Stop reading: the reply goes out with Connection: close and the rest is never buffered.
        cleanup();
        req.pause();
        reject(bodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(bodyIncompleteError(error));
    };
    // A request destroyed without an error (req.destroy() in a middleware) only closes.
    const onClose = () => onError(req.errored ?? new Error('the connection closed'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function isEmptyPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0;
}
