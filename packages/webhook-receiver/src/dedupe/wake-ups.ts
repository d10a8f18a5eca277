import type { DedupeStore } from './dedupe-store.js';
import { unrefTimer } from '../unref-timer.js';

/** Subscribes `onMessage` to a store's wake-up messages; resolves once subscribed, rejects (or throws) when it cannot. */
export type SubscribeToWakeUps = (onMessage: (message: string) => void) => unknown;

/**
 * `watchLines` over one subscription to a store's wake-up messages, made when the first receiver
 * watches (a store may serve several receivers). Each message is `<subject>|<waiter id>`: the
 * subject, and the waiter now first in its line. A subscription that fails is reported to every
 * watcher (`unavailable` makes the error, given how long until the next try) and tried again,
 * after 1 s, then twice as long each time up to 30 s (a server that was down at start, a user
 * without the channel's permission that gets it).
 *
 * Watchers are held weakly (each receiver keeps its own `wake` alive, and `failed` lives as long
 * as its `wake`): a receiver built per request over one store is collected once the partner
 * drops it, instead of being kept, and called on every message, for as long as the store lives.
 */
export function watchLinesOver(subscribe: SubscribeToWakeUps, unavailable: (error: unknown, retryMs: number) => Error): NonNullable<DedupeStore['watchLines']> {
  type Wake = (key: string, waiterId?: string) => void;
  const watchers = new Set<WeakRef<Wake>>();
  const failedOf = new WeakMap<Wake, (error: unknown) => void>();
  const forget = new FinalizationRegistry<WeakRef<Wake>>((ref) => watchers.delete(ref));
  const each = (call: (wake: Wake) => void): void => {
    for (const ref of watchers) {
      const wake = ref.deref();
      if (wake === undefined) watchers.delete(ref);
      else call(wake);
    }
  };
  const onMessage = (message: string): void => {
    // Waiter ids hold no '|'; a subject may.
    const bar = message.lastIndexOf('|');
    if (bar <= 0) return;
    const key = message.slice(0, bar);
    const waiterId = message.slice(bar + 1);
    each((wake) => wake(key, waiterId));
  };
  const attempt = (retryMs: number): void => {
    let subscribed: Promise<unknown>;
    try {
      subscribed = Promise.resolve(subscribe(onMessage));
    } catch (error) {
      subscribed = Promise.reject(error);
    }
    subscribed.then(undefined, (error: unknown) => {
      const reported = unavailable(error, retryMs);
      each((wake) => failedOf.get(wake)?.(reported));
      const timer = setTimeout(() => attempt(Math.min(2 * retryMs, 30_000)), retryMs);
      unrefTimer(timer);
    });
  };
  let subscribing = false;
  return (wake, failed) => {
    const ref = new WeakRef(wake);
    watchers.add(ref);
    failedOf.set(wake, failed);
    forget.register(wake, ref);
    if (!subscribing) {
      subscribing = true;
      attempt(1_000);
    }
  };
}
