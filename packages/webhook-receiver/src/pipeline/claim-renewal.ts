import { DEFAULT_CLAIM_TTL_MS, type DedupeStore } from '../dedupe/dedupe-store.js';
import { unrefTimer } from '../unref-timer.js';
import type { SubjectClaim } from './claim.js';

/** The claims whose handlers are still running, renewed while they run (see {@link createClaimRenewal}). */
export interface ClaimRenewal {
  /** Keeps `claim` renewed until the returned function is called (when its handlers have settled). */
  hold(claim: SubjectClaim): () => void;
}

/** How many times `claimTtlMs` a running handler's claim is renewed for at most: a handler that never settles does not hold its subject forever. */
export const MAX_RENEWED_CLAIM_TTLS = 10;
/** The longest a Node timer can wait. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Keeps the claims of running handlers alive in a store that can renew them (`renewClaim`): an
 * `acknowledgeEarly` handler that calls a slow service, or one that outlives the reply window,
 * keeps its subject while it runs, while the claim of a process that died (no renewal comes)
 * still expires `claimTtlMs` after its last renewal. A claim is renewed once a quarter of
 * `claimTtlMs` has passed since its last renewal, checked every sixth of it: each try comes a
 * quarter to five twelfths of `claimTtlMs` after the one before, so a claim outlives one renewal
 * that failed (the next try comes at most five sixths of it after the last success), and may
 * expire once two in a row have failed; and for at most {@link MAX_RENEWED_CLAIM_TTLS} times
 * `claimTtlMs` (20 minutes by default): a handler that never settles then loses its subject as
 * before, and the events that waited for it are told (`subject_wait_exceeded`) meanwhile.
 *
 * One timer for the whole receiver, running only while handlers hold claims; a delivery whose
 * handlers answer synchronously is never registered. A timer that never fired (an edge runtime
 * drops the timers of a request once it ends) is replaced by the next hold. A renewal that fails
 * (the store is down, the claim was lost) is left to the settlement, which reports a lost claim
 * (`claim_lost`).
 */
export function createClaimRenewal(store: DedupeStore & Required<Pick<DedupeStore, 'renewClaim'>>): ClaimRenewal {
  const given = store.claimTtlMs;
  const claimTtlMs = typeof given === 'number' && Number.isFinite(given) && given > 0 ? given : DEFAULT_CLAIM_TTL_MS;
  const renewAfterMs = claimTtlMs / 4;
  const everyMs = Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(claimTtlMs / 6)));
  const held = new Map<SubjectClaim, { heldAt: number; renewedAt: number }>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dueAt = 0;

  const tick = (): void => {
    timer = undefined;
    if (held.size === 0) return;
    const now = Date.now();
    for (const [claim, times] of held) {
      if (now - times.renewedAt < renewAfterMs) continue;
      // Held too long: its handlers may never settle. The claim expires as it would have.
      if (now - times.heldAt >= MAX_RENEWED_CLAIM_TTLS * claimTtlMs) {
        held.delete(claim);
        continue;
      }
      times.renewedAt = now;
      // Never a rejection, nor a throw: the settlement reports a claim that was lost.
      void Promise.resolve()
        .then(() => store.renewClaim(claim.subject, claim.token))
        .catch(() => undefined);
    }
    schedule();
  };
  const schedule = (): void => {
    const now = Date.now();
    // A timer long overdue was dropped (a Worker's request ended): arm another.
    if (timer !== undefined && now < dueAt + everyMs) return;
    if (timer !== undefined) clearTimeout(timer);
    dueAt = now + everyMs;
    timer = setTimeout(tick, everyMs);
    unrefTimer(timer);
  };

  return {
    hold(claim) {
      const now = Date.now();
      held.set(claim, { heldAt: now, renewedAt: now });
      schedule();
      return () => {
        held.delete(claim);
      };
    },
  };
}
