import { randomBytes } from 'node:crypto';

/**
 * How long an issued nonce can be used: 5 minutes.
 *
 * @example
 * ```ts
 * sandbox.advanceClock(NONCE_LIFETIME_MS + 1); // every nonce issued so far is now expired
 * ```
 */
export const NONCE_LIFETIME_MS = 5 * 60 * 1000;

/** Why a nonce was refused. */
export type NonceRefusal = 'unknown' | 'expired';

/**
 * Issues nonces (unique, single use, expiring after 5 minutes) and consumes them.
 * `consume` checks and deletes in one synchronous step, so however many challenges race
 * with the same nonce, exactly one gets it.
 */
export class NonceStore {
  readonly #expiresAt = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  issue(): string {
    this.#sweep();
    // 24 hex characters: alphanumeric and longer than the 8 characters EIP-4361 requires.
    const nonce = randomBytes(12).toString('hex');
    this.#expiresAt.set(nonce, this.now() + NONCE_LIFETIME_MS);
    return nonce;
  }

  /** Takes the nonce out of the store; `ok: false` when it was never issued, already used or expired. */
  consume(nonce: string): { ok: true } | { ok: false; reason: NonceRefusal } {
    const expiresAt = this.#expiresAt.get(nonce);
    if (expiresAt === undefined) return { ok: false, reason: 'unknown' };
    this.#expiresAt.delete(nonce);
    if (expiresAt <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true };
  }

  // Issued but never used nonces would otherwise accumulate forever in a long-running sandbox.
  // Nonces are issued in time order with one lifetime, so the map is in expiry order: the sweep
  // stops at the first live one. (Scanning them all on every issue made a flood of nonce
  // requests quadratic: 60,000 outstanding nonces took 27 s to issue.)
  #sweep(): void {
    if (this.#expiresAt.size < 1024) return;
    const now = this.now();
    for (const [nonce, expiresAt] of this.#expiresAt) {
      if (expiresAt > now) break;
      this.#expiresAt.delete(nonce);
    }
  }
}
