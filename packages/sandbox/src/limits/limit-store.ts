import type { AccountLimit } from '@capi/openapi-types';

/**
 * The default daily spending limit: 10,000 USD in cents (reference 8). A sandbox whose agreed
 * maximum (`maxDailyLimitCents`) is lower starts every account at that maximum instead (the
 * spec's `x-assumption` on `AccountLimit.amount`).
 *
 * @example
 * ```ts
 * expect(limit.amount).toBe(DEFAULT_DAILY_LIMIT_CENTS); // 1_000_000
 * ```
 */
export const DEFAULT_DAILY_LIMIT_CENTS = 1_000_000;

/**
 * The default limit of an account under an agreed maximum: the lower of the two, so that a
 * limit never set can always be set again to what it reads.
 *
 * @example
 * ```ts
 * defaultDailyLimitCents(500_000); // 500_000
 * defaultDailyLimitCents(2_000_000); // 1_000_000
 * ```
 */
export function defaultDailyLimitCents(maxDailyLimitCents: number): number {
  return Math.min(DEFAULT_DAILY_LIMIT_CENTS, maxDailyLimitCents);
}

/**
 * Each account's daily spending limit. A new limit is `pending` at once and becomes
 * `synced` after `syncDelayMs` (`'manual'`: only when {@link LimitStore.syncPending} is
 * called), standing in for the downstream application of the change (reference 3.1). A second
 * change while one is pending restarts the wait: the first amount is never in force. A limit never set
 * reads `defaultCents`, `synced` (the spec's `x-assumption` on `SyncStatus`). Card payments
 * are checked against the limit in force ({@link LimitStore.inForce}): the last one synced.
 */
export class LimitStore {
  readonly #limits = new Map<string, AccountLimit>();
  /** The amount applied downstream, per account: a pending change is not in force yet. */
  readonly #inForce = new Map<string, number>();
  readonly #syncTimers = new Map<string, NodeJS.Timeout>();
  /** The change each account waits for, until it syncs. */
  readonly #pending = new Map<string, AccountLimit>();

  constructor(
    private readonly syncDelayMs: number | 'manual',
    private readonly defaultCents: number = DEFAULT_DAILY_LIMIT_CENTS,
  ) {}

  get(userId: string): AccountLimit {
    const limit = this.#limits.get(userId);
    return limit ? { ...limit } : { amount: this.defaultCents, currency: 'USD', syncStatus: 'synced' };
  }

  /**
   * The limit card authorizations are checked against: the amount last applied downstream
   * (reference 3.1: `pending` means not yet fully applied), the default before any change
   * has synced. A change still `pending` leaves the previous amount in force.
   */
  inForce(userId: string): number {
    return this.#inForce.get(userId) ?? this.defaultCents;
  }

  set(userId: string, amount: number, currency: string): AccountLimit {
    const limit: AccountLimit = { amount, currency, syncStatus: 'pending' };
    this.#limits.set(userId, limit);
    this.#pending.set(userId, limit);
    clearTimeout(this.#syncTimers.get(userId));
    this.#syncTimers.delete(userId);
    if (this.syncDelayMs !== 'manual') {
      const timer = setTimeout(() => this.#sync(userId), this.syncDelayMs);
      // A pending sync must not keep a test process alive after the sandbox is closed.
      timer.unref();
      this.#syncTimers.set(userId, timer);
    }
    return { ...limit };
  }

  /**
   * Syncs the pending change of `userId` (of every account without it) now, as if its wait
   * had ended; answers the user ids whose change synced. An account with none is left as is.
   */
  syncPending(userId?: string): string[] {
    const userIds = userId === undefined ? [...this.#pending.keys()] : this.#pending.has(userId) ? [userId] : [];
    for (const id of userIds) this.#sync(id);
    return userIds;
  }

  #sync(userId: string): void {
    const limit = this.#pending.get(userId);
    if (limit === undefined) return;
    clearTimeout(this.#syncTimers.get(userId));
    this.#syncTimers.delete(userId);
    this.#pending.delete(userId);
    limit.syncStatus = 'synced';
    this.#inForce.set(userId, limit.amount);
  }

  close(): void {
    for (const timer of this.#syncTimers.values()) clearTimeout(timer);
    this.#syncTimers.clear();
  }
}
