import type { Delivery, DeliveryScheduler } from './delivery-scheduler.js';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from '../conformance/nesting-depth.js';
import { eventProblems } from './event-conformance.js';

/**
 * Why an event could not be published (data not matching the spec, or an endpoint that is
 * not an http(s) URL); the message says what to change.
 *
 * @example
 * ```ts
 * try { sandbox.sendEvent('user.created', { id: 1 }); }
 * catch (error) { if (error instanceof EventPublishError) console.error(error.code); } // 'invalid_event'
 * ```
 */
export class EventPublishError extends Error {
  override readonly name = 'EventPublishError';
  constructor(
    readonly code: 'invalid_event' | 'invalid_endpoint',
    message: string,
  ) {
    super(message);
  }
}

/** How many endpoints one event may be sent to at once (`to`); the live service has one per partner. */
export const MAX_EVENT_TARGETS = 100;

/** Parses a partner endpoint URL: absolute http(s) only (the live service requires https; the sandbox allows http for local receivers). */
export function parseEndpointUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EventPublishError('invalid_endpoint', `${JSON.stringify(value)} is not an absolute URL; pass something like http://localhost:3000/webhooks.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EventPublishError('invalid_endpoint', `${JSON.stringify(value)} is not an http(s) URL; webhooks are delivered by HTTP POST.`);
  }
  return url;
}

/**
 * The partner's webhook endpoints (like the partner dashboard's setting) and the one door
 * through which events leave the sandbox: each event is checked against the spec, then
 * delivered to every endpoint.
 */
export class EventPublisher {
  readonly #endpoints = new Map<string, URL>();

  constructor(
    private readonly scheduler: DeliveryScheduler,
    endpoints: readonly string[] = [],
  ) {
    for (const endpoint of endpoints) this.addEndpoint(endpoint);
  }

  endpoints(): string[] {
    return [...this.#endpoints.keys()];
  }

  addEndpoint(value: string): string {
    const url = parseEndpointUrl(value);
    this.#endpoints.set(url.href, url);
    return url.href;
  }

  removeEndpoint(value: string): boolean {
    return this.#endpoints.delete(parseEndpointUrl(value).href);
  }

  /** Sends `{eventType, data}` to `to` (default: every configured endpoint); returns the deliveries started. */
  publish(eventType: string, data: unknown, to?: readonly string[]): Delivery[] {
    // The delivery log clones the event and its answers serialise it: a value nested too
    // deep would overflow the stack there, after the deliveries had started. The limit is the
    // user registry's, so that a user it stores never has its event refused afterwards.
    if (nestsDeeperThan(data)) {
      throw new EventPublishError('invalid_event', `The ${eventType} event's data nests values more than ${MAX_NESTING_DEPTH} levels deep; send the data the event's schema describes.`);
    }
    const event = { eventType, data };
    const problems = eventProblems(event);
    if (problems.length > 0) {
      throw new EventPublishError('invalid_event', `The ${eventType} event does not match the spec: ${problems.join('; ')}.`);
    }
    if (to !== undefined && (!Array.isArray(to) || to.some((url) => typeof url !== 'string'))) {
      throw new EventPublishError('invalid_endpoint', `to must be an array of endpoint URLs, e.g. ["http://localhost:3000/webhooks"]; got ${JSON.stringify(to)}.`);
    }
    // A 1 MiB body holds some 25,000 URLs: signing and sending them all held the sandbox for half a minute.
    if (to !== undefined && to.length > MAX_EVENT_TARGETS) {
      throw new EventPublishError('invalid_endpoint', `to names ${to.length} endpoints; send one event to at most ${MAX_EVENT_TARGETS} at a time.`);
    }
    let rawBody: string;
    try {
      rawBody = JSON.stringify(event);
    } catch (error) {
      throw new EventPublishError('invalid_event', `The ${eventType} event cannot be sent as JSON (${(error as Error).message}); pass plain JSON data.`);
    }
    const targets = to ? to.map(parseEndpointUrl) : [...this.#endpoints.values()];
    return targets.map((url) => this.scheduler.deliver(url, eventType, rawBody));
  }
}
