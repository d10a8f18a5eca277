/**
 * Settles like `start()`, unless `signal` aborts first: then rejects with `onAbort()` at once.
 * For waits this package cannot cancel itself (a wallet prompt, a token renewal shared with
 * other requests); what they settle with later is ignored, so it never becomes an unhandled
 * rejection.
 *
 * @example
 * const signature = await untilAborted(() => signMessage(message), signal, () => new AbortError('stopped', { code: 'aborted' }));
 */
export function untilAborted<T>(start: () => Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
  if (signal === undefined) return start();
  if (signal.aborted) return Promise.reject(onAbort());
  const pending = Promise.resolve().then(start);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onAbort());
    signal.addEventListener('abort', stop, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
  });
}
