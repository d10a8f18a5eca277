import { SandboxConfigError } from '../errors.js';
import type { Delivery, DeliveryScheduler } from './delivery-scheduler.js';
import { checkOptionNames, deliveryMatcher, type DeliveryFilter } from './delivery-filter.js';

/**
 * What {@link Sandbox.whenDeliveriesSettled} waits for, and for how long. Every filter given
 * must match (`userId`, `url` and `eventType` as the delivery log's fields have them); without
 * any, it waits for every delivery of the sandbox.
 *
 * @example
 * ```ts
 * const wait: WhenDeliveriesSettledOptions = { userId: user.id, timeoutMs: 5_000 };
 * await sandbox.whenDeliveriesSettled(wait);
 * ```
 */
export interface WhenDeliveriesSettledOptions {
  /**
   * Rejects with {@link DeliveriesNotSettledError} after this many milliseconds of real time if
   * a delivery waited for has not settled yet. Default: no limit (it waits as long as the
   * retries take). Keep it below your test runner's timeout, so that a test fails naming the
   * delivery instead of timing out bare.
   */
  timeoutMs?: number | undefined;
  /** Only deliveries of this user's events: `data.id` of user and KYC events, `data.userId` of `card.transaction.created`. */
  userId?: string | undefined;
  /** Only deliveries to this endpoint (`Delivery.url`; compared as `new URL(url).href`, as the log shows it). */
  url?: string | undefined;
  /** Only deliveries of this event kind (`Delivery.eventType`). */
  eventType?: string | undefined;
}

/**
 * {@link Sandbox.whenDeliveriesSettled} ran out of its `timeoutMs` with deliveries still in
 * flight or waiting for a retry; `unsettled` holds them (as the log showed them then), and the
 * message lists each one's endpoint, event kind, state, attempts, last outcome and next attempt.
 *
 * @example
 * ```ts
 * try { await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 5_000 }); }
 * catch (error) { if (error instanceof DeliveriesNotSettledError) console.error(error.unsettled); }
 * ```
 */
export class DeliveriesNotSettledError extends Error {
  override readonly name = 'DeliveriesNotSettledError';
  readonly code = 'deliveries_not_settled';
  constructor(
    /** The wait that ran out, in milliseconds. */
    readonly timeoutMs: number,
    /** The deliveries waited for that had not settled. */
    readonly unsettled: Delivery[],
  ) {
    super(
      `${unsettled.length} ${unsettled.length === 1 ? 'delivery has' : 'deliveries have'} not settled within ${timeoutMs} ms:\n` +
        unsettled.map(describeDelivery).join('\n') +
        '\nA receiver that keeps failing is retried after 1, 5 and 15 minutes divided by timeScale; start the sandbox with a larger timeScale, or fix the receiver (sandbox.deliveries() has every attempt).',
    );
  }
}

function describeDelivery(delivery: Delivery): string {
  const last = delivery.attempts.at(-1);
  const lastOutcome = last === undefined ? 'no attempt finished yet' : `last ${last.outcome}${last.status === null ? '' : ` (HTTP ${last.status})`}${last.error ? `: ${last.error}` : ''}`;
  const next = delivery.nextAttemptAt === null ? '' : `, next attempt at ${delivery.nextAttemptAt}`;
  return `- ${delivery.eventType} to ${delivery.url}: ${delivery.state}, ${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? '' : 's'}, ${lastOutcome}${next}`;
}

const OPTION_NAMES = Object.keys({ timeoutMs: true, userId: true, url: true, eventType: true } satisfies {
  [Name in keyof Required<WhenDeliveriesSettledOptions>]: true;
});

/** Waits as {@link Sandbox.whenDeliveriesSettled} says; a bad option throws {@link SandboxConfigError}. */
export function whenDeliveriesSettled(scheduler: DeliveryScheduler, options: WhenDeliveriesSettledOptions | undefined): Promise<void> {
  if (options === undefined) return scheduler.whenIdle();
  checkOptionNames(options, OPTION_NAMES, 'whenDeliveriesSettled', '{ userId, timeoutMs }');
  const { timeoutMs, userId, url, eventType } = options;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2 ** 31 - 1)) {
    throw new SandboxConfigError('invalid_option', `whenDeliveriesSettled's timeoutMs must be a number of milliseconds > 0 (at most ${2 ** 31 - 1}); got ${JSON.stringify(timeoutMs)}.`);
  }
  const match = deliveryMatcher({ userId, url, eventType } as DeliveryFilter, 'whenDeliveriesSettled');
  const wait = scheduler.whenSettled(match);
  if (timeoutMs === undefined) return wait.settled;
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      wait.cancel();
      reject(new DeliveriesNotSettledError(timeoutMs, scheduler.unsettled(match)));
    }, timeoutMs);
    void wait.settled.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
