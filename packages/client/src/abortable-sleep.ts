/**
 * Waits `ms` milliseconds; rejects with `onAbort()` as soon as `signal` aborts.
 *
 * @example
 * await abortableSleep(500, signal, () => new AbortError('stopped', { code: 'aborted' }));
 */
export function abortableSleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(onAbort());
      return;
    }
    const stop = () => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}
