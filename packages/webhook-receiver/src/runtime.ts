/**
 * Whether this runtime cancels the work a request leaves running once its Response is returned,
 * unless it is handed to `waitUntil`: Cloudflare Workers (workerd, whose `navigator.userAgent`
 * is `Cloudflare-Workers`). Bun, Deno and Node servers are long-lived processes that keep it.
 * Other serverless runtimes cannot be told apart from those; there, pass `waitUntil` all the same.
 */
export function dropsWorkAfterResponse(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/**
 * Whether this process may run on more than one CPU: `os.availableParallelism()` (its affinity
 * mask) where `node:os` is there (Node, Bun, Deno), `navigator.hardwareConcurrency` elsewhere.
 * On one CPU, work handed to another thread only takes turns with this one.
 */
export function hasSeveralCpus(): boolean {
  const os = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:os') as
    { availableParallelism?: () => number } | undefined;
  const cpus = typeof os?.availableParallelism === 'function'
    ? os.availableParallelism()
    : (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator?.hardwareConcurrency;
  return typeof cpus === 'number' && cpus > 1;
}
