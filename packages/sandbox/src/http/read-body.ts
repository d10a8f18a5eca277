import type { IncomingMessage } from 'node:http';
import { ApiError } from './api-error.js';

/** Largest request body the sandbox reads; the live service's bodies are a few hundred bytes. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/**
 * Reads the whole request body, refusing bodies over {@link MAX_REQUEST_BODY_BYTES} with 413.
 * The rest of a refused body is read and dropped rather than the request destroyed: destroying
 * it closed the connection under the client, whose next request on it met a reset.
 */
export function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: () => void) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onGone);
      request.off('close', onGone);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BODY_BYTES) return void chunks.push(chunk);
      finish(() =>
        reject(new ApiError(413, { code: 'PayloadTooLarge', message: `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes; send the JSON the endpoint documents.` })),
      );
      request.resume();
    };
    const onEnd = () => finish(() => resolve(Buffer.concat(chunks)));
    // The client left mid-body: nobody reads this answer, but it must not be a 500.
    const onGone = () =>
      finish(() => reject(new ApiError(400, { code: 'IncompleteBody', message: 'The request body ended before its announced length; send the whole body.' })));
    if (request.destroyed) return onGone();
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onGone);
    request.on('close', onGone);
  });
}
