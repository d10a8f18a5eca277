/**
 * Deliveries of one subject take turns in this process, in the order they arrived: a delivery
 * whose subject is being handled here waits for it (up to its deadline) instead of being
 * answered 409 and retried minutes later, after the events that came behind it. The first
 * delivery of a subject takes its turn at once and allocates nothing but the map entry.
 */
export interface SubjectTurns {
  /**
   * `true` at once when the subject is free here; else a promise of `true` when its turn comes,
   * or of `false` after `waitMs` (`false` at once when `waitMs` is 0).
   */
  take(subject: string, waitMs: number): boolean | Promise<boolean>;
  /** Ends the turn of the delivery that holds `subject`: the next one in line takes it. */
  pass(subject: string): void;
}

interface Waiter {
  readonly start: (turn: boolean) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** The turns of one receiver. */
export function createSubjectTurns(): SubjectTurns {
  // A subject is in the map while a delivery holds its turn: `null` while nobody waits behind
  // it (no allocation on the way of a delivery that waits for nothing), else the line.
  const lines = new Map<string, Waiter[] | null>();
  return {
    take(subject, waitMs) {
      let line = lines.get(subject);
      if (line === undefined) {
        lines.set(subject, null);
        return true;
      }
      if (waitMs <= 0) return false;
      if (line === null) {
        line = [];
        lines.set(subject, line);
      }
      const waiting = line;
      return new Promise<boolean>((resolve) => {
        const waiter: Waiter = { start: resolve, timer: undefined };
        waiter.timer = setTimeout(() => {
          const at = waiting.indexOf(waiter);
          if (at !== -1) waiting.splice(at, 1);
          resolve(false);
        }, waitMs);
        waiting.push(waiter);
      });
    },
    pass(subject) {
      const next = lines.get(subject)?.shift();
      if (next === undefined) {
        lines.delete(subject);
        return;
      }
      clearTimeout(next.timer);
      next.start(true);
    },
  };
}
