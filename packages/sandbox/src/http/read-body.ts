import type { IncomingMessage } from 'node:http';
import { ApiError } from './api-error.js';

/** Largest request body the sandbox reads; the live service's bodies are a few hundred bytes. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** Reads the whole request body, refusing bodies over {@link MAX_REQUEST_BODY_BYTES} with 413. */
export async function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BODY_BYTES) {
      throw new ApiError(413, {
        code: 'PayloadTooLarge',
        message: `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes; send the JSON the endpoint documents.`,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
