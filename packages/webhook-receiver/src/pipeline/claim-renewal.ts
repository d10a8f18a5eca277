import { DEFAULT_CLAIM_TTL_MS, type DedupeStore } from '../dedupe/dedupe-store.js';
import type { SubjectClaim } from './claim.js';
import { unrefTimer } from '../unref-timer.js';

/** The claims whose handlers are still running, renewed a third of the store's `claimTtlMs` after their last renewal. */
export interface ClaimRenewal {
  /** Keeps `claim` renewed until the returned function is called (when its handlers have settled). */
  hold(claim: SubjectClaim): () => void;
}

/**
 * Keeps the claims of running handlers alive in a store that can renew them (`renewClaim`): an
 * `acknowledgeEarly` handler that calls a slow service, or one that outlives the reply window,
 * keeps its subject for as long as it runs, while the claim of a process that died (no renewal
 * comes) still expires `claimTtlMs` after its last renewal. One timer for the whole receiver,
 * every third of `claimTtlMs`, running only while handlers hold claims; a delivery whose handlers
 * answer synchronously is never registered. A renewal that fails (the store is down, the claim
 * was lost) is left to the settlement, which reports a lost claim (`claim_lost`).
 */
export function createClaimRenewal(store: DedupeStore & Required<Pick<DedupeStore, 'renewClaim'>>): ClaimRenewal {
  const claimTtlMs = typeof store.claimTtlMs === 'number' && store.claimTtlMs > 0 ? store.claimTtlMs : DEFAULT_CLAIM_TTL_MS;
  const everyMs = Math.max(1, Math.floor(claimTtlMs / 3));
  const held = new Map<SubjectClaim, number>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const tick = (): void => {
    timer = undefined;
    if (held.size === 0) return;
    const now = Date.now();
    for (const [claim, renewedAt] of held) {
      if (now - renewedAt < everyMs) continue;
      held.set(claim, now);
      // Never a rejection, nor a throw: the settlement reports a claim that was lost.
      void Promise.resolve()
        .then(() => store.renewClaim(claim.subject, claim.token))
        .catch(() => undefined);
    }
    schedule();
  };
  const schedule = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(tick, everyMs);
    unrefTimer(timer);
  };

  return {
    hold(claim) {
      held.set(claim, Date.now());
      schedule();
      return () => {
        held.delete(claim);
      };
    },
  };
}
