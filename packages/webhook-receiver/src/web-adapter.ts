import type { DeliverySource, ReceiverReply } from './delivery-source.js';
import { WebhookReceiverError, bodyIncompleteError, bodyTooLargeError } from './errors.js';

/**
 * Adapts a Web-standard `Request` (Hono, Next.js, Workers, Deno, Bun) to a {@link DeliverySource}.
 *
 * @example
 * ```ts
 * const { reply } = await receiver.receive(deliverySourceFromRequest(request));
 * return replyToResponse(reply);
 * ```
 */
export function deliverySourceFromRequest(request: Request): DeliverySource {
  return {
    method: request.method,
    header: (name) => request.headers.get(name),
    readRawBody: (maxBytes) => readRequestBody(request, maxBytes),
  };
}

/**
 * Writes a {@link ReceiverReply} as a Web-standard `Response`.
 *
 * @example
 * ```ts
 * const { reply } = await receiver.receive(deliverySourceFromRequest(request));
 * return replyToResponse(reply);
 * ```
 */
export function replyToResponse(reply: ReceiverReply): Response {
  // A copy per Response: replies are cached per outcome, and some runtimes' Response (Hono's
  // Node server) write content-length into the object they are given.
  return new Response(reply.body, { status: reply.status, headers: { ...reply.headers } });
}

async function readRequestBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw new WebhookReceiverError('body_already_consumed',
      'The Request body was already read (request.json() or request.text() before receiver.handle?). ' +
        'Pass the untouched Request: the signature covers the raw bytes.');
  }
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw bodyTooLargeError(maxBytes);
  try {
    if (declared !== null) {
      // HTTP framing holds the body to its declared length, so reading it whole is safe. Through
      // arrayBuffer() and never request.body first: on Node, request.body makes undici (and
      // @hono/node-server's lightweight Request) build a full Request and a ReadableStream,
      // which costs more than verifying the signature. The check after it covers a Request
      // built in-process with a wrong header.
      const body = new Uint8Array(await request.arrayBuffer());
      if (body.byteLength > maxBytes) throw bodyTooLargeError(maxBytes);
      return body;
    }
    const stream = request.body;
    return stream === null ? new Uint8Array(0) : await readBodyStream(stream, maxBytes);
  } catch (error) {
    throw error instanceof WebhookReceiverError ? error : bodyIncompleteError(error);
  }
}

/** A body of unknown length (chunked), read until `maxBytes` and no further. */
async function readBodyStream(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      // Stop reading here: a sender streaming gigabytes gets its 413 after maxBytes, not after the lot.
      reader.cancel().catch(() => undefined);
      throw bodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.byteLength; }
  return body;
}
