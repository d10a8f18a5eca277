import type { Delivery, DeliveryScheduler } from './delivery-scheduler.js';
import { closestWords } from '../cli/parse-command-line.js';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from '../conformance/nesting-depth.js';
import { eventProblems, unknownEventFields, unknownEventFieldsMessage } from './event-conformance.js';
import { SANDBOX_EVENT_TYPES } from './sample-event-data.js';

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

/** The longest event kind sent with `unknownEventType` (the known ones have at most 28 characters). */
export const MAX_EVENT_TYPE_LENGTH = 200;

const isKnownEventType = (eventType: unknown): boolean => (SANDBOX_EVENT_TYPES as readonly unknown[]).includes(eventType);

/**
 * The known event kinds `eventType` is a near miss of (`kyc.status.change` → `kyc.status.changed`),
 * as ` Did you mean "kyc.status.changed"?`, or '' when none is near.
 */
export function eventTypeSuggestion(eventType: unknown): string {
  // Edit distances of a long string would take a while; no kind is near one anyway.
  const nearest = typeof eventType === 'string' && eventType.length <= MAX_EVENT_TYPE_LENGTH ? closestWords(eventType, SANDBOX_EVENT_TYPES) : [];
  return nearest.length === 0 ? '' : ` Did you mean ${nearest.map((candidate) => JSON.stringify(candidate)).join(' or ')}?`;
}

/**
 * Why `eventType` is refused without the `unknownEventType` opt-in: the known kinds, and the
 * one it is a typo of ("Did you mean …?"), or else how to send a kind the SDK does not know.
 */
export function unknownEventTypeMessage(eventType: unknown): string {
  const known = `eventType must be one of ${SANDBOX_EVENT_TYPES.join(', ')}; got ${JSON.stringify(typeof eventType === 'string' ? eventType.slice(0, MAX_EVENT_TYPE_LENGTH) : eventType)}.`;
  const suggestion = eventTypeSuggestion(eventType);
  if (suggestion !== '') return `${known}${suggestion}`;
  return `${known} To send an event kind the SDK does not know (reference 6.1: other kinds are not shown; receivers should acknowledge them with a 2xx and ignore them), add "unknownEventType": true (sendEvent(type, data, { unknownEventType: true })).`;
}

/** How the HTTP control route and `sendEvent` spell the `unchecked` opt-in, in refusals. */
export const API_UNCHECKED_SPELLING = '"unchecked": true (sendEvent(type, data, { unchecked: true }))';

/**
 * Why a known kind's data that its schema refuses is not sent, and how to send it on purpose:
 * schema drift (a value today's schema does not have, a missing field) is what a receiver's
 * dead-letter store is for, and `unchecked` is how to try that path.
 */
export function eventMismatchMessage(eventType: string, problems: readonly string[], uncheckedSpelling: string): string {
  return (
    `The ${eventType} event does not match the spec: ${problems.join('; ')}. ` +
    `The service sends only events its schema describes. To send it anyway, signed like any event, e.g. to test how a receiver handles schema drift (a value or a missing field today's schema refuses: its dead-letter store and replay()), add ${uncheckedSpelling}.`
  );
}

/** Options of {@link EventPublisher.publish}. */
export interface PublishOptions {
  /** The endpoints to send to (default: every configured endpoint). */
  to?: readonly string[] | undefined;
  /**
   * Send an event kind that is not one of {@link SANDBOX_EVENT_TYPES}, with the `data` given
   * (a JSON object) unchecked: for testing a receiver's handling of kinds it does not know.
   */
  unknownEventType?: boolean;
  /**
   * Send a known kind whose `data` has fields its schema does not define (`data.cards[0].pan`),
   * to test how a receiver tolerates the fields of a newer schema. Without it such an event is
   * refused: the service sends only the fields of its schema. The data must still match the
   * schema otherwise. No effect with `unknownEventType` (that data is not checked at all).
   */
  allowUnknownFields?: boolean;
  /**
   * Send a known kind's `data` without checking it against the schema (an unknown `kycStatus`,
   * a missing field), signed like any event: to test how a receiver handles schema drift (its
   * dead-letter store and `replay()`). The data must still be a JSON object.
   */
  unchecked?: boolean;
  /**
   * Send the event twice to each endpoint (`true`; reference 6.2: duplicates are possible), or
   * once (`false`), whatever the sandbox's `duplicateRate`; the duplicate's first attempt starts
   * the sandbox's `duplicateAfterMs` after the first (default 0: beside it). Default: the
   * sandbox's `duplicateRate` decides.
   */
  duplicate?: boolean | undefined;
}

/** How the HTTP control route and `sendEvent` spell the opt-ins, in refusals. */
const API_SPELLING = {
  optIn: '"allowUnknownFields": true (sendEvent(type, data, { allowUnknownFields: true }))',
  unknownKind: 'use "unknownEventType": true',
};

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

  /**
   * Sends `{eventType, data}` to `options.to` (default: every configured endpoint); returns
   * the deliveries started. A known kind's event must match its schema, with no field the
   * schema does not define unless `allowUnknownFields: true`, or else be sent `unchecked: true`
   * (a JSON object as `data`); any other kind needs `unknownEventType: true` and a JSON object
   * as `data`. A duplicate (see {@link PublishOptions.duplicate}) follows the delivery it copies.
   */
  publish(eventType: string, data: unknown, options: PublishOptions = {}): Delivery[] {
    const { to, unknownEventType = false, allowUnknownFields = false, unchecked = false, duplicate } = options;
    for (const [name, value] of [['unknownEventType', unknownEventType], ['allowUnknownFields', allowUnknownFields], ['unchecked', unchecked], ['duplicate', duplicate ?? false]] as const) {
      if (typeof value !== 'boolean') throw new EventPublishError('invalid_event', `${name} must be true or false; got ${JSON.stringify(value)}.`);
    }
    // Unchecked data is still an event body a receiver can parse: {eventType, data} with an object as data.
    const requireObjectData = () => {
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        throw new EventPublishError('invalid_event', `The ${eventType} event's data must be a JSON object (reference 4.6: the body is {eventType, data}); got ${Array.isArray(data) ? 'an array' : JSON.stringify(data)}.`);
      }
    };
    if (unknownEventType) {
      if (typeof eventType !== 'string' || eventType.length === 0 || eventType.length > MAX_EVENT_TYPE_LENGTH) {
        throw new EventPublishError('invalid_event', `eventType must be a string of 1 to ${MAX_EVENT_TYPE_LENGTH} characters, such as "card.statement.created".`);
      }
      if (isKnownEventType(eventType)) {
        throw new EventPublishError('invalid_event', `${eventType} is an event kind the SDK knows; leave out unknownEventType, so that its data is checked against its schema.`);
      }
      requireObjectData();
    } else if (!isKnownEventType(eventType)) {
      throw new EventPublishError('invalid_event', unknownEventTypeMessage(eventType));
    } else if (unchecked) {
      requireObjectData();
    }
    // The delivery log clones the event and its answers serialise it: a value nested too
    // deep would overflow the stack there, after the deliveries had started. The limit is the
    // user registry's, so that a user it stores never has its event refused afterwards.
    if (nestsDeeperThan(data)) {
      throw new EventPublishError('invalid_event', `The ${eventType} event's data nests values more than ${MAX_NESTING_DEPTH} levels deep; send the data the event's schema describes.`);
    }
    const event = { eventType, data };
    const skipChecks = unknownEventType || unchecked;
    const problems = skipChecks ? [] : eventProblems(event);
    if (problems.length > 0) throw new EventPublishError('invalid_event', eventMismatchMessage(eventType, problems, API_UNCHECKED_SPELLING));
    // The schemas are open (receivers must tolerate newer fields), so the check above lets
    // fields through that the service never sends: refused unless asked for on purpose.
    const unknownFields = skipChecks || allowUnknownFields ? [] : unknownEventFields(event);
    if (unknownFields.length > 0) throw new EventPublishError('invalid_event', unknownEventFieldsMessage(eventType, unknownFields, API_SPELLING));
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
    return targets.flatMap((url) => this.scheduler.deliver(url, eventType, rawBody, duplicate));
  }
}
