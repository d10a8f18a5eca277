import type { AccountLimit } from '@capi/openapi-types';

/**
 * The default daily spending limit: 10,000 USD in cents (reference 8).
 *
 * @example
 * ```ts
 * expect(limit.amount).toBe(DEFAULT_DAILY_LIMIT_CENTS); // 1_000_000
 * ```
 */
export const DEFAULT_DAILY_LIMIT_CENTS = 1_000_000;

/**
 * Each account's daily spending limit. A new limit is `pending` at once and becomes
 * `synced` after `syncDelayMs`, standing in for the downstream application of the change
 * (reference 3.1). A second change while one is pending restarts the wait.
 */
export class LimitStore {
  readonly #limits = new Map<string, AccountLimit>();
  readonly #syncTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly syncDelayMs: number) {}

  get(userId: string): AccountLimit {
    const limit = this.#limits.get(userId);
    return limit ? { ...limit } : { amount: DEFAULT_DAILY_LIMIT_CENTS, currency: 'USD', syncStatus: 'synced' };
  }

  set(userId: string, amount: number, currency: string): AccountLimit {
    const limit: AccountLimit = { amount, currency, syncStatus: 'pending' };
    this.#limits.set(userId, limit);
    clearTimeout(this.#syncTimers.get(userId));
    const timer = setTimeout(() => {
      this.#syncTimers.delete(userId);
      limit.syncStatus = 'synced';
    }, this.syncDelayMs);
    // A pending sync must not keep a test process alive after the sandbox is closed.
    timer.unref();
    this.#syncTimers.set(userId, timer);
    return { ...limit };
  }

  close(): void {
    for (const timer of this.#syncTimers.values()) clearTimeout(timer);
    this.#syncTimers.clear();
  }
}
