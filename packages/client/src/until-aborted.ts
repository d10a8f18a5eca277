import { MAX_TIMER_DELAY_MS } from './timer-delay.js';

/**
 * Settles like `start()`, unless `signal` aborts or `timeoutMs` passes first: then rejects with
 * what `onEnd(timedOut)` returns (an error, or a promise of one, so that its message can be
 * loaded lazily). For waits this package cannot cancel itself (a wallet prompt, a token renewal
 * shared with other requests); what they settle with later is ignored, so it never becomes an
 * unhandled rejection.
 *
 * @example
 * const signature = await untilAborted(() => signMessage(message), signal, () => new AbortError('stopped', { code: 'aborted' }));
 * const token = await untilAborted(() => renewal, signal, (timedOut) => waitEnded(timedOut), 30_000);
 */
export function untilAborted<T>(start: () => T | Promise<T>, signal: AbortSignal | undefined, onEnd: (timedOut: boolean) => unknown, timeoutMs = Infinity): Promise<T> {
  if (signal === undefined && timeoutMs === Infinity) return Promise.resolve().then(start);
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Once ended, how `start` settles no longer counts: its own rejection (a callback that
    // honours the signal onEnd aborts) must not overtake onEnd's error while it loads.
    let ended = false;
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    };
    const end = (timedOut: boolean) => {
      ended = true;
      settle();
      Promise.resolve(onEnd(timedOut)).then(reject, reject);
    };
    const stop = () => end(false);
    if (signal?.aborted) return stop();
    if (timeoutMs !== Infinity) timer = setTimeout(end, Math.min(timeoutMs, MAX_TIMER_DELAY_MS), true);
    signal?.addEventListener('abort', stop, { once: true });
    Promise.resolve()
      .then(start)
      .then(
        (value) => ended || (settle(), resolve(value)),
        (error: unknown) => ended || (settle(), reject(error)),
      );
  });
}
