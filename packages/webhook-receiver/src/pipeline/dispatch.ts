import type { WebhookEvent } from '@capi/event-types';
import type { WebhookDelivery, WebhookEventHandler } from '../receiver-types.js';
import { isPromiseLike, type MaybePromise } from './context.js';

/** The handlers registered with `on` and `onAny`, and stage 5, dispatch. */
export interface HandlerRegistry {
  /** Adds a handler of one event type, or of every known type (`undefined`). */
  add(eventType: string | undefined, handler: WebhookEventHandler<never>): void;
  /**
   * Runs the handlers of the event's type and the `onAny` handlers, one after another in
   * registration order; throws (or rejects with) the first handler's failure. Returns at once
   * when every handler returned synchronously.
   */
  dispatch(event: WebhookEvent, delivery: WebhookDelivery): MaybePromise<void>;
}

/** An empty handler registry. */
export function createHandlerRegistry(): HandlerRegistry {
  const registrations: Array<{ readonly eventType: string | undefined; readonly handler: WebhookEventHandler }> = [];
  return {
    add(eventType, handler) {
      registrations.push({ eventType, handler: handler as WebhookEventHandler });
    },
    dispatch(event, delivery) {
      return runFrom(0, event, delivery);
    },
  };

  // A synchronous handler is not awaited: no tick per handler on the common path. From the
  // first handler that returns a promise on, the rest run once it has settled.
  function runFrom(first: number, event: WebhookEvent, delivery: WebhookDelivery): MaybePromise<void> {
    for (let index = first; index < registrations.length; index++) {
      const { eventType, handler } = registrations[index]!;
      if (eventType !== undefined && eventType !== event.eventType) continue;
      const result = handler(event, delivery);
      if (isPromiseLike(result)) return Promise.resolve(result).then(() => runFrom(index + 1, event, delivery));
    }
    return undefined;
  }
}
