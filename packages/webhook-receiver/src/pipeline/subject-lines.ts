import type { SubjectWaiter } from '../dedupe/dedupe-store.js';

/**
 * The deliveries waiting for a subject in this process, in the order they arrived. A delivery
 * joins its subject's line when the store answers that the subject is being handled, or when a
 * line is already there (so that it does not claim ahead of the deliveries before it). Only the
 * first in line tries the claim again: when the delivery that holds the subject here settles
 * (`settled`), or after a pause, for a holder in another process (or when the store wakes the
 * delivery first in its own line: `wake`). A delivery that meets no
 * contention never touches a line: `has` is a size check then. The store keeps a line of its
 * own across processes (see `waiter` in DedupeStore.claim): `waiter` names this process's
 * deliveries in it.
 */
export interface SubjectLines {
  /** A new delivery's place in a store's line, should it wait `leftMs`: an id unique across processes. */
  waiter(leftMs: number): SubjectWaiter;
  /** Whether deliveries of `subject` wait in this process. */
  has(subject: string): boolean;
  /** Puts a delivery at the end of `subject`'s line; `waiterId`: its place in the store's line, if it has one. */
  join(subject: string, waiterId?: string): InLine;
  /** The delivery that held `subject` here has settled: the first in line may claim it now. */
  settled(subject: string): void;
  /**
   * The store says that `subject` may be free for the delivery `waiterId`, first in the store's
   * line (see DedupeStore.watchLines): that delivery tries now, if it waits here; without an id,
   * every delivery waiting for `subject` here tries, and the store's line decides. A wake-up for
   * one of this receiver's waiters that has not joined yet (the store's `processing` answer is
   * still on its way) is kept for its `join`.
   */
  wake(subject: string, waiterId?: string): void;
}

/** A delivery in a subject's line. */
export interface InLine {
  /** Whether it is first in line (only the first tries the claim). */
  first(): boolean;
  /** Resolves after `ms`, or earlier when it is woken (it became first, or the holder settled). */
  pause(ms: number): Promise<void>;
  /** Leaves the line. `claimed`: it holds the subject now, so the next in line waits for its settlement; otherwise the next is woken to try. */
  leave(claimed: boolean): void;
}

interface Waiter {
  /** Its place in the store's line, if it has one. */
  id: string | undefined;
  /** Ends its pause; undefined while it is not pausing (its claim is on its way to the store). */
  wake: (() => void) | undefined;
  /** Woken while not pausing: its claim may have been answered before the subject was free, so its next pause ends at once. */
  woken: boolean;
}

function wakeUp(waiter: Waiter | undefined): void {
  if (waiter === undefined) return;
  if (waiter.wake !== undefined) waiter.wake();
  else waiter.woken = true;
}

/**
 * Most wake-ups kept for waiters that have not joined yet. One is consumed by its waiter's join
 * a moment later; one whose waiter never joins (its store call failed) is dropped, oldest first.
 */
const EARLY_WAKE_UPS = 64;

/** The lines of one receiver. */
export function createSubjectLines(): SubjectLines {
  const lines = new Map<string, Waiter[]>();
  // Ids of this receiver's waiters: a random prefix (other processes) and a count.
  let prefix: string | undefined;
  let waiters = 0;
  // Wake-ups that came before their waiter joined: ids of this receiver's waiters.
  const early = new Set<string>();
  const wakeFirst = (subject: string): void => {
    wakeUp(lines.get(subject)?.[0]);
  };
  return {
    waiter(leftMs) {
      prefix ??= crypto.randomUUID();
      return { id: `${prefix}-${(++waiters).toString(36)}`, leftMs };
    },
    has: (subject) => lines.size !== 0 && lines.has(subject),
    settled(subject) {
      if (lines.size !== 0) wakeFirst(subject);
    },
    wake(subject, waiterId) {
      const line = lines.size === 0 ? undefined : lines.get(subject);
      if (waiterId === undefined) {
        if (line !== undefined) for (const waiter of line) wakeUp(waiter);
        return;
      }
      const waiter = line?.find((inLine) => inLine.id === waiterId);
      if (waiter !== undefined) wakeUp(waiter);
      else if (prefix !== undefined && waiterId.startsWith(prefix)) {
        if (early.size === EARLY_WAKE_UPS) early.delete(early.values().next().value!);
        early.add(waiterId);
      }
    },
    join(subject, waiterId) {
      let line = lines.get(subject);
      if (line === undefined) {
        line = [];
        lines.set(subject, line);
      }
      const waiting = line;
      const waiter: Waiter = { id: waiterId, wake: undefined, woken: early.size !== 0 && waiterId !== undefined && early.delete(waiterId) };
      waiting.push(waiter);
      return {
        first: () => waiting[0] === waiter,
        pause: (ms) => new Promise<void>((resolve) => {
          if (waiter.woken) {
            waiter.woken = false;
            resolve();
            return;
          }
          const timer = setTimeout(done, ms);
          function done(): void {
            clearTimeout(timer);
            waiter.wake = undefined;
            resolve();
          }
          waiter.wake = done;
        }),
        leave(claimed) {
          const at = waiting.indexOf(waiter);
          if (at !== -1) waiting.splice(at, 1);
          if (waiting.length === 0) {
            if (lines.get(subject) === waiting) lines.delete(subject);
          } else if (at === 0 && !claimed) {
            wakeFirst(subject);
          }
        },
      };
    },
  };
}
