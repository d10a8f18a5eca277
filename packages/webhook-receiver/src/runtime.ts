/**
 * Whether this runtime cancels the work a request leaves running once its Response is returned,
 * unless it is handed to `waitUntil`: Cloudflare Workers (workerd, whose `navigator.userAgent`
 * is `Cloudflare-Workers`). Bun, Deno and Node servers are long-lived processes that keep it.
 * Other serverless runtimes cannot be told apart from those; there, pass `waitUntil` all the same.
 */
export function dropsWorkAfterResponse(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}
