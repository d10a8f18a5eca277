import type { WebhookEvent } from '@capi/event-types';
import type { WebhookDelivery, WebhookEventHandler } from '../receiver-types.js';
import { isPromiseLike } from './context.js';

/** The handlers registered with `on` and `onAny`, and stage 5, dispatch. */
export interface HandlerRegistry {
  /** Adds a handler of one event type, or of every known type (`undefined`). */
  add(eventType: string | undefined, handler: WebhookEventHandler<never>): void;
  /**
   * Runs the handlers of the event's type and the `onAny` handlers, one after another in
   * registration order; rejects with the first handler's failure.
   */
  dispatch(event: WebhookEvent, delivery: WebhookDelivery): Promise<void>;
}

/** An empty handler registry. */
export function createHandlerRegistry(): HandlerRegistry {
  const registrations: Array<{ readonly eventType: string | undefined; readonly handler: WebhookEventHandler }> = [];
  return {
    add(eventType, handler) {
      registrations.push({ eventType, handler: handler as WebhookEventHandler });
    },
    async dispatch(event, delivery) {
      for (const { eventType, handler } of registrations) {
        if (eventType !== undefined && eventType !== event.eventType) continue;
        // A synchronous handler is not awaited: no tick per handler on the common path.
        const result = handler(event, delivery);
        if (isPromiseLike(result)) await result;
      }
    },
  };
}
