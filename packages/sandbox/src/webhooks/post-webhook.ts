import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** What came of one POST to a partner endpoint. */
export type PostOutcome =
  | { outcome: 'succeeded' | 'failed'; status: number; responseBody: string }
  | { outcome: 'timed-out' | 'network-error'; status: null; error: string };

/** How much of a receiver's answer the delivery log keeps: enough to read its error. */
const RESPONSE_EXCERPT_BYTES = 1024;

/**
 * POSTs one signed webhook. A 2xx answer within `timeoutMs` succeeds (reference 4.6);
 * anything else, redirects included, fails. One connection per attempt, closed after it,
 * so that no pooled socket outlives a delivery.
 */
export function postWebhook(
  url: URL,
  rawBody: string,
  headers: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<PostOutcome> {
  // Signing is asynchronous, so the sandbox may have closed since the attempt began; an
  // 'abort' listener added now would never fire, and the POST would go out after close().
  if (signal.aborted) return Promise.resolve({ outcome: 'network-error', status: null, error: 'the sandbox was closed before the attempt' });
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const request = send(url, {
      method: 'POST',
      agent: false,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(rawBody),
        'user-agent': 'capi-sandbox-webhooks',
      },
    });
    const timer = setTimeout(() => {
      finish({ outcome: 'timed-out', status: null, error: `no complete answer within ${timeoutMs} ms` });
      request.destroy();
    }, timeoutMs);
    const onAbort = () => {
      finish({ outcome: 'network-error', status: null, error: 'the sandbox was closed during the attempt' });
      request.destroy();
    };
    signal.addEventListener('abort', onAbort);
    request.on('error', (error) => finish({ outcome: 'network-error', status: null, error: error.message }));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      response.on('error', (error) => finish({ outcome: 'network-error', status: null, error: error.message }));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
        finish({ outcome: status >= 200 && status < 300 ? 'succeeded' : 'failed', status, responseBody });
      });
    });
    request.end(rawBody);
  });
}
