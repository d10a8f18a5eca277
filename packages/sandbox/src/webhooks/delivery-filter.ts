import { SandboxConfigError } from '../errors.js';
import { refuseUnknownOptionNames } from '../options.js';
import type { Delivery } from './delivery-scheduler.js';

/**
 * Which deliveries of the log {@link Sandbox.deliveries} lists (and `GET /__sandbox/deliveries`
 * with the same names as query parameters). Every field given must match; none lists them all.
 *
 * @example
 * ```ts
 * const failed = sandbox.deliveries({ userId: user.id, state: 'failed' });
 * ```
 */
export interface DeliveryFilter {
  /** One delivery (`Delivery.id`). */
  id?: string | undefined;
  /** Only deliveries of this user's events: `data.id` of user and KYC events, `data.userId` of `card.transaction.created`. */
  userId?: string | undefined;
  /** Only deliveries to this endpoint (`Delivery.url`; compared as `new URL(url).href`, as the log shows it). */
  url?: string | undefined;
  /** Only deliveries of this event kind (`Delivery.eventType`). */
  eventType?: string | undefined;
  /** Only deliveries in this state: `scheduled`, `delivering`, `retrying`, `succeeded` or `failed`. */
  state?: Delivery['state'] | undefined;
}

/** The filter's field names, checked by the compiler against the interface. */
export const DELIVERY_FILTER_NAMES = Object.keys({ id: true, userId: true, url: true, eventType: true, state: true } satisfies {
  [Name in keyof Required<DeliveryFilter>]: true;
}) as Array<keyof DeliveryFilter>;

const DELIVERY_STATES: ReadonlyArray<Delivery['state']> = ['scheduled', 'delivering', 'retrying', 'succeeded', 'failed'];

/** The user an event is about: `data.userId` of a card transaction, `data.id` of a user or KYC event. */
export function deliveryUserId(delivery: Delivery): unknown {
  const data = (delivery.event as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const fields = data as { id?: unknown; userId?: unknown };
  return delivery.eventType === 'card.transaction.created' ? fields.userId : fields.id;
}

/**
 * The test a filter makes of a delivery; a field that is not a string throws
 * {@link SandboxConfigError} naming `caller`. Fields absent or undefined match everything.
 */
export function deliveryMatcher(filter: DeliveryFilter, caller: string): (delivery: Delivery) => boolean {
  for (const name of DELIVERY_FILTER_NAMES) {
    const value = filter[name];
    if (value !== undefined && typeof value !== 'string') {
      throw new SandboxConfigError('invalid_option', `${caller}'s ${name} must be a string; got ${JSON.stringify(value)}.`);
    }
  }
  const { id, userId, url, eventType, state } = filter;
  if (state !== undefined && !DELIVERY_STATES.includes(state)) {
    throw new SandboxConfigError('invalid_option', `${caller}'s state must be one of ${DELIVERY_STATES.join(', ')}; got ${JSON.stringify(state)}.`);
  }
  // The log shows each URL as `new URL(url).href` does (a bare origin gains its "/").
  const wantedUrl = url !== undefined && URL.canParse(url) ? new URL(url).href : url;
  return (delivery) =>
    (id === undefined || delivery.id === id) &&
    (userId === undefined || deliveryUserId(delivery) === userId) &&
    (wantedUrl === undefined || delivery.url === wantedUrl) &&
    (eventType === undefined || delivery.eventType === eventType) &&
    (state === undefined || delivery.state === state);
}

/** Refuses an options object that is not one, or that has a name outside `names` (see {@link refuseUnknownOptionNames}). */
export function checkOptionNames(options: unknown, names: readonly string[], caller: string, example: string): asserts options is Record<string, unknown> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SandboxConfigError('invalid_option', `${caller} takes an options object such as ${example}, or nothing; got ${JSON.stringify(options)}.`);
  }
  refuseUnknownOptionNames(options, names, caller);
}
