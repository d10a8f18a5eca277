import {
  isWebhookEventType,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookEvent,
  type WebhookEventMap,
  type WebhookEventType,
} from '@capi/event-types';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { sha256Hex } from './body-digest.js';
import type { DedupeClaim, DedupeStore } from './dedupe/dedupe-store.js';
import { createMemoryDedupeStore } from './dedupe/memory-store.js';
import type { DeliverySource, ReceiverReply } from './delivery-source.js';
import { WebhookReceiverError } from './errors.js';
import { replyFor } from './reply.js';
import { createSignatureCheck, type SignatureCheckOptions } from './signature-check.js';
import type { ReceiverOutcome } from './status-table.js';
import { deliverySourceFromRequest, replyToResponse } from './web-adapter.js';

/**
 * What the handlers learn about the delivery besides the event.
 *
 * @example
 * ```ts
 * receiver.on('user.created', (event, delivery) => db.insertOnce(delivery.bodySha256, event.data));
 * ```
 */
export interface WebhookDelivery {
  /**
   * `X-Webhook-Timestamp`: when the service sent (or re-sent) this delivery ATTEMPT, Unix
   * seconds. Not when the change happened: a retry of an older event can carry a later
   * timestamp than a newer event, so never order events by it.
   */
  readonly timestamp: number;
  /**
   * Lower-case hex SHA-256 of the raw body, the same for every retry of the event. A delivery
   * is a duplicate when this equals the latest processed digest of its (`eventType`, `data.id`).
   */
  readonly bodySha256: string;
}

/**
 * A handler of one event type; throwing (or rejecting) answers 500 so that the service retries.
 *
 * @example
 * ```ts
 * const onKyc: WebhookEventHandler<KycStatusChangedEvent> = async (event) => { await kyc.set(event.data.id, event.data.kycStatus); };
 * receiver.on('kyc.status.changed', onKyc);
 * ```
 */
export type WebhookEventHandler<E = WebhookEvent> = (event: E, delivery: WebhookDelivery) => unknown;

/**
 * The body of an event whose `eventType` this SDK version does not know, as parsed.
 *
 * @example
 * ```ts
 * createWebhookReceiver({ publicKey, onUnknownEvent: (event) => log.warn('new event kind', event.eventType) });
 * ```
 */
export interface UnknownWebhookEvent {
  readonly eventType: string;
  readonly data?: unknown;
  readonly [property: string]: unknown;
}

/**
 * Where a failure given to `onError` happened, and how the delivery was answered.
 *
 * @example
 * ```ts
 * onError: (error, { outcome, afterReply }) => logger.error({ error, outcome, afterReply }, 'webhook failure')
 * ```
 */
export interface WebhookErrorContext {
  /** The outcome the delivery was answered with (`handler_failed`, `dedupe_store_unavailable`...). */
  readonly outcome: ReceiverOutcome;
  /** Present once the signature was verified. */
  readonly delivery?: WebhookDelivery;
  /** `true` when the failure came after the reply (a handler run with `acknowledgeEarly`, or marking the body processed). */
  readonly afterReply: boolean;
}

/**
 * Options of {@link createWebhookReceiver}.
 *
 * @example
 * ```ts
 * createWebhookReceiver({ publicKey, maxBodyBytes: 256 * 1024, dedupe: createRedisDedupeStore({ client: redis }), onError: report });
 * ```
 */
export interface WebhookReceiverOptions extends SignatureCheckOptions {
  /** Largest body read, in bytes; a larger one is answered 413 without reading the rest. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Where duplicates are recorded. Default: {@link createMemoryDedupeStore} (one process).
   * Several processes: {@link createRedisDedupeStore}. `false` dispatches every delivery.
   */
  dedupe?: DedupeStore | false;
  /** Reject properties the schemas do not list (default `false`: the service may add fields). */
  strict?: boolean;
  /**
   * Reply 202 right after verification, validation and the deduplication claim, and run the
   * handlers afterwards. Trade-off: a handler that fails after the reply cannot make the
   * service retry; its claim is released and `onError` is called, so recovering is yours.
   * Default `false`: the reply waits for the handlers (30-second window, reference 4.6).
   */
  acknowledgeEarly?: boolean;
  /** Called with events whose type this SDK version does not know; they are answered 2xx, never retried. */
  onUnknownEvent?: (event: UnknownWebhookEvent, delivery: WebhookDelivery) => unknown;
  /** Called with every failure that is the server's, not the sender's. Default: `console.error`. */
  onError?: (error: unknown, context: WebhookErrorContext) => void;
}

/**
 * What {@link WebhookReceiver.receive} produced: the reply, and the handlers' work still running after it.
 *
 * @example
 * ```ts
 * const { reply, afterReply } = await receiver.receive(source);
 * write(reply);
 * await afterReply;
 * ```
 */
export interface WebhookReceipt {
  readonly reply: ReceiverReply;
  /** With `acknowledgeEarly`: resolves when the handlers (and the store update) have finished; never rejects. */
  readonly afterReply?: Promise<void>;
}

/**
 * Options of {@link WebhookReceiver.handle}.
 *
 * @example
 * ```ts
 * export default { fetch: (request, env, ctx) => receiver.handle(request, { waitUntil: (work) => ctx.waitUntil(work) }) };
 * ```
 */
export interface HandleOptions {
  /**
   * The runtime's way of keeping work alive after the reply (Workers' `ctx.waitUntil`,
   * Next.js's `after`/`waitUntil`). Needed with `acknowledgeEarly` on runtimes that freeze
   * once the Response is returned.
   */
  waitUntil?: (work: Promise<unknown>) => void;
}

/**
 * A webhook receiver: register handlers, then serve it with `handle` or `toNodeHandler`.
 *
 * @example
 * ```ts
 * const receiver: WebhookReceiver = createWebhookReceiver({ publicKey }).onAny((event) => audit(event));
 * ```
 */
export interface WebhookReceiver {
  /**
   * Registers a handler of one event type, typed by the generated event map. Several handlers
   * run one after another, in registration order with `onAny` handlers.
   * @example
   * receiver.on('kyc.status.changed', (event) => console.log(event.data.kycStatus));
   */
  on<T extends WebhookEventType>(eventType: T, handler: WebhookEventHandler<WebhookEventMap[T]>): WebhookReceiver;
  /**
   * Registers a handler of every known event type.
   * @example
   * receiver.onAny((event, delivery) => audit.log(event.eventType, delivery.bodySha256));
   */
  onAny(handler: WebhookEventHandler<WebhookEvent>): WebhookReceiver;
  /**
   * Serves one delivery as a Web-standard `Request -> Response` (Hono, Next.js route
   * handlers, Workers, Deno, Bun).
   * @example
   * export async function POST(request: Request) { return receiver.handle(request); }
   */
  handle(request: Request, options?: HandleOptions): Promise<Response>;
  /**
   * Runs the pipeline over any server's request, through a {@link DeliverySource} adapter,
   * and returns the reply to write. `handle` and `toNodeHandler` are built on it.
   * @example
   * const { reply } = await receiver.receive(deliverySourceFromRequest(request));
   */
  receive(source: DeliverySource): Promise<WebhookReceipt>;
}

interface Registration {
  readonly eventType: string | undefined;
  readonly handler: WebhookEventHandler<never>;
}

const TIMESTAMP_HEADER = WEBHOOK_TIMESTAMP_HEADER.toLowerCase();
const SIGNATURE_HEADER = WEBHOOK_SIGNATURE_HEADER.toLowerCase();
const DEFAULT_MAX_BODY_BYTES = 1_048_576;

function logToConsole(error: unknown, context: WebhookErrorContext): void {
  console.error(`[@capi/webhook-receiver] ${context.outcome}${context.afterReply ? ' (after the reply)' : ''}:`, error);
}

/**
 * Creates a webhook receiver: it verifies the Ed25519 signature on the raw body, parses and
 * validates the event, drops duplicates, calls the typed handlers and answers the status that
 * makes the service do the right thing (see the README's status table).
 *
 * @example
 * ```ts
 * const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
 *   .on('user.created', async (event) => { await users.upsert(event.data); });
 * export const POST = (request: Request) => receiver.handle(request);
 * ```
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  if (options === null || typeof options !== 'object') {
    throw new WebhookReceiverError('invalid_options', 'createWebhookReceiver needs an options object with at least publicKey.');
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new WebhookReceiverError('invalid_options', `maxBodyBytes must be a positive integer number of bytes, got ${String(maxBodyBytes)}.`);
  }
  if (options.dedupe !== undefined && options.dedupe !== false && !isDedupeStore(options.dedupe)) {
    throw new WebhookReceiverError('invalid_options',
      'dedupe must be a store with claim, markProcessed and release (createMemoryDedupeStore(), createRedisDedupeStore({ client })) or false.');
  }
  // A string from the environment ('false') would otherwise switch the option on.
  for (const name of ['strict', 'acknowledgeEarly'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') {
      throw new WebhookReceiverError('invalid_options', `${name} must be true or false, got ${typeof options[name] === 'string' ? JSON.stringify(options[name]) : String(options[name])}.`);
    }
  }
  for (const name of ['onUnknownEvent', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new WebhookReceiverError('invalid_options', `${name} must be a function, got ${typeof options[name]}.`);
    }
  }
  const signatureCheck = createSignatureCheck(options);
  const dedupe = options.dedupe === false ? undefined : (options.dedupe ?? createMemoryDedupeStore());
  const parseOptions = { maxBytes: maxBodyBytes, strict: options.strict ?? false };
  const acknowledgeEarly = options.acknowledgeEarly ?? false;
  const onUnknownEvent = options.onUnknownEvent;
  const onError = options.onError ?? logToConsole;
  const registrations: Registration[] = [];

  const report = (error: unknown, context: WebhookErrorContext): void => {
    try {
      const reported: unknown = onError(error, context);
      // An async onError (a logger that sends) that rejects must not become an unhandled
      // rejection, which ends a Node process.
      if (isPromiseLike(reported)) reported.then(undefined, () => undefined);
    } catch {
      // onError is the last resort; a failing logger must not change the reply.
    }
  };

  // Synchronous handlers (the common case) run without a promise or a tick per delivery; from
  // the first handler that returns a promise on, the rest run in dispatchAfter. A synchronous
  // throw propagates as a throw, so callers catch both.
  const dispatch = (event: WebhookEvent, delivery: WebhookDelivery): void | Promise<void> => {
    for (let index = 0; index < registrations.length; index++) {
      const { eventType, handler } = registrations[index]!;
      if (eventType === undefined || eventType === event.eventType) {
        const result = (handler as WebhookEventHandler)(event, delivery);
        if (isPromiseLike(result)) return dispatchAfter(result, index + 1, event, delivery);
      }
    }
    return undefined;
  };

  const dispatchAfter = async (pending: PromiseLike<unknown>, from: number, event: WebhookEvent, delivery: WebhookDelivery): Promise<void> => {
    await pending;
    for (let index = from; index < registrations.length; index++) {
      const { eventType, handler } = registrations[index]!;
      if (eventType === undefined || eventType === event.eventType) {
        const result = (handler as WebhookEventHandler)(event, delivery);
        if (isPromiseLike(result)) await result;
      }
    }
  };

  const giveToUnknownEventHandler = async (rawBody: Uint8Array, delivery: WebhookDelivery): Promise<void> => {
    if (onUnknownEvent === undefined) return;
    try {
      // The validator kept only the type; parse again on this rare path rather than on every delivery.
      await onUnknownEvent(JSON.parse(new TextDecoder().decode(rawBody)) as UnknownWebhookEvent, delivery);
    } catch (error) {
      // Acknowledged all the same: a retry would fail the same way, and new kinds must not cause retry storms.
      report(error, { outcome: 'unknown_event_type', delivery, afterReply: false });
    }
  };

  const releaseAfterFailure = async (
    key: string,
    token: string,
    error: unknown,
    delivery: WebhookDelivery,
    afterReply: boolean,
  ): Promise<ReceiverOutcome> => {
    report(error, { outcome: 'handler_failed', delivery, afterReply });
    if (dedupe !== undefined) {
      try {
        await dedupe.release(key, token);
      } catch (releaseError) {
        // The claim then expires after claimTtlMs and a later retry is processed.
        report(releaseError, { outcome: 'dedupe_store_unavailable', delivery, afterReply });
      }
    }
    return 'handler_failed';
  };

  const reportMarkFailure = (error: unknown, delivery: WebhookDelivery): void =>
    report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: true });

  const markProcessed = (key: string, token: string, delivery: WebhookDelivery): void | Promise<void> => {
    // The handlers succeeded, so the event is answered 2xx; a duplicate arriving after the
    // claim expires may be processed again (at-least-once while the store is down).
    try {
      const marked = dedupe?.markProcessed(key, token);
      if (isPromiseLike(marked)) {
        return Promise.resolve(marked).then(undefined, (error: unknown) => reportMarkFailure(error, delivery));
      }
    } catch (error) {
      reportMarkFailure(error, delivery);
    }
    return undefined;
  };

  /** Runs the handlers and records the result in the store; synchronous when both are. */
  const settle = (
    key: string,
    token: string,
    delivery: WebhookDelivery,
    event: WebhookEvent,
    afterReply: boolean,
  ): ReceiverOutcome | Promise<ReceiverOutcome> => {
    let work: void | Promise<void>;
    try {
      work = dispatch(event, delivery);
    } catch (error) {
      return releaseAfterFailure(key, token, error, delivery, afterReply);
    }
    if (work === undefined) {
      const marked = markProcessed(key, token, delivery);
      return marked === undefined ? 'processed' : marked.then(() => 'processed');
    }
    return work.then(
      async () => {
        await markProcessed(key, token, delivery);
        return 'processed' as const;
      },
      (error: unknown) => releaseAfterFailure(key, token, error, delivery, afterReply),
    );
  };

  const reportInternalError = (error: unknown): WebhookReceipt => {
    report(error, { outcome: 'internal_error', afterReply: false });
    return { reply: replyFor('internal_error') };
  };

  const receive = async (source: DeliverySource): Promise<WebhookReceipt> => {
    // One try around the whole pipeline rather than a derived promise per delivery.
    try {
      if (source.method !== 'POST') return { reply: replyFor('method_not_allowed') };

      let rawBody: Uint8Array;
      try {
        rawBody = await source.readRawBody(maxBodyBytes);
      } catch (error) {
        if (error instanceof WebhookReceiverError && (error.code === 'body_too_large' || error.code === 'body_incomplete')) {
          // Sender-side: nothing to report (the reply may not even reach a sender that left).
          return { reply: replyFor(error.code, error.message) };
        }
        if (error instanceof WebhookReceiverError && error.code === 'body_already_consumed') {
          report(error, { outcome: 'body_already_consumed', afterReply: false });
          return { reply: replyFor('body_already_consumed', error.message) };
        }
        throw error;
      }

      const timestampHeader = source.header(TIMESTAMP_HEADER);
      try {
        await signatureCheck.verify(rawBody, timestampHeader, source.header(SIGNATURE_HEADER));
      } catch (error) {
        const rejection = signatureCheck.toRejection(error);
        if (rejection.serverSide) report(rejection.error, { outcome: rejection.outcome, afterReply: false });
        return { reply: replyFor(rejection.outcome, rejection.detail) };
      }

      const digest = sha256Hex(rawBody);
      const delivery: WebhookDelivery = {
        timestamp: Number(Array.isArray(timestampHeader) ? timestampHeader[0] : timestampHeader),
        bodySha256: typeof digest === 'string' ? digest : await digest,
      };

      const parsed = parseWebhookEvent(rawBody, parseOptions);
      if (!parsed.ok && !parsed.unknownEventType) {
        const notJson = parsed.errors.some((error) => error.keyword === 'json' || error.keyword === 'encoding');
        const detail = parsed.errors.slice(0, 5).map((error) => error.message).join('; ');
        return { reply: replyFor(notJson ? 'body_not_json' : 'schema_mismatch', detail) };
      }

      let token = '';
      const key = dedupeKey(parsed, delivery.bodySha256);
      if (dedupe !== undefined) {
        let claim: DedupeClaim;
        try {
          const claimed = dedupe.claim(key, delivery.bodySha256);
          claim = isPromiseLike(claimed) ? await claimed : claimed;
        } catch (error) {
          report(error, { outcome: 'dedupe_store_unavailable', delivery, afterReply: false });
          return { reply: replyFor('dedupe_store_unavailable') };
        }
        if (claim.state === 'processed') return { reply: replyFor('duplicate') };
        if (claim.state === 'processing') return { reply: replyFor('duplicate_in_progress') };
        token = claim.token;
      }

      if (!parsed.ok) {
        await giveToUnknownEventHandler(rawBody, delivery);
        const marked = markProcessed(key, token, delivery);
        if (marked !== undefined) await marked;
        return { reply: replyFor('unknown_event_type') };
      }

      const { event } = parsed;
      if (acknowledgeEarly) {
        // Started on a later task, not a microtask: the adapters write the reply in the
        // microtasks that follow this return (and a runtime sends a returned Response), so a
        // microtask would run the handlers' synchronous code before the reply went out.
        const afterReply = new Promise<void>((resolve) => { setTimeout(resolve, 0); })
          .then(() => settle(key, token, delivery, event, true))
          .then(() => undefined);
        return { reply: replyFor('acknowledged'), afterReply };
      }
      const settled = settle(key, token, delivery, event, false);
      return { reply: replyFor(typeof settled === 'string' ? settled : await settled) };
    } catch (error) {
      return reportInternalError(error);
    }
  };

  const receiver: WebhookReceiver = {
    on(eventType, handler) {
      if (!isWebhookEventType(eventType)) {
        throw new WebhookReceiverError('invalid_options',
          `receiver.on: "${String(eventType)}" is not an event type this SDK version knows; handle new kinds with onUnknownEvent.`);
      }
      if (typeof handler !== 'function') {
        throw new WebhookReceiverError('invalid_options', `receiver.on("${eventType}", handler) needs a handler function.`);
      }
      registrations.push({ eventType, handler: handler as WebhookEventHandler<never> });
      return receiver;
    },
    onAny(handler) {
      if (typeof handler !== 'function') {
        throw new WebhookReceiverError('invalid_options', 'receiver.onAny(handler) needs a handler function.');
      }
      registrations.push({ eventType: undefined, handler: handler as WebhookEventHandler<never> });
      return receiver;
    },
    async handle(request, handleOptions) {
      if (typeof (request as Partial<Request> | null | undefined)?.headers?.get !== 'function') {
        throw new WebhookReceiverError('invalid_options',
          'receiver.handle(request) takes a Web-standard Request (Hono, Next.js route handlers, Workers, Deno, Bun); on node:http, Express or Fastify, serve toNodeHandler(receiver) instead.');
      }
      const { reply, afterReply } = await receive(deliverySourceFromRequest(request));
      if (afterReply !== undefined) handleOptions?.waitUntil?.(afterReply);
      return replyToResponse(reply);
    },
    receive,
  };
  return receiver;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

function isDedupeStore(value: unknown): value is DedupeStore {
  const store = value as Partial<DedupeStore> | null;
  return typeof store === 'object' && store !== null
    && typeof store.claim === 'function' && typeof store.markProcessed === 'function' && typeof store.release === 'function';
}

/**
 * The subject a delivery is deduplicated under: `<eventType>:<data.id>`. A body is a duplicate
 * only when it repeats the latest processed body of its subject, so an event that brings a
 * subject back to an earlier state (A -> B -> A) is dispatched. Bodies without a subject
 * (unknown event types) fall back to their own digest.
 */
function dedupeKey(parsed: { ok: boolean; event?: unknown }, bodySha256: string): string {
  const event = parsed.ok ? (parsed.event as { eventType?: unknown; data?: { id?: unknown } }) : undefined;
  const id = event?.data?.id;
  return typeof event?.eventType === 'string' && typeof id === 'string' ? `${event.eventType}:${id}` : bodySha256;
}
