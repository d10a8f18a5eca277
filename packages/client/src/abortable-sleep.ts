import { MAX_TIMER_DELAY_MS } from './timer-delay.js';

/**
 * Waits `ms` milliseconds (at most what a timer can hold, about 24.8 days); rejects with `onAbort()` as soon as `signal` aborts.
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
    }, Math.min(ms, MAX_TIMER_DELAY_MS));
    signal?.addEventListener('abort', stop, { once: true });
  });
}
