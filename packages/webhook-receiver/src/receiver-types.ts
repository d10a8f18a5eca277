import type { WebhookEvent, WebhookEventMap, WebhookEventType } from '@capi/event-types';
import type { WebhookEventValidationError, WebhookEventValidationResult } from '@capi/webhook-validator';
import type { DedupeStore } from './dedupe/dedupe-store.js';
import type { DeadLetterStore } from './dead-letter/dead-letter-store.js';
import type { DeliverySource, ReceiverReply } from './delivery-source.js';
import type { SignatureCheckOptions } from './signature-check.js';
import type { ReceiverOutcome } from './status-table.js';

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
  /**
   * When this receiver received the request (`Date.now()`, ms), before it read the body or
   * fetched a key; for a replay, when the dead-lettered delivery was received. The deduplication
   * store orders the events of a subject by it (see Duplicates in the README), so keep the
   * receivers' clocks synchronised (NTP).
   */
  readonly receivedAt: number;
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
 * An authentic delivery (its signature verified) that this SDK version's schema refuses: a new
 * enum value, an omitted field, a body that is not even JSON. Given to `onInvalidEvent` (and,
 * as an {@link InvalidWebhookEventError}, to `onError`); it never reaches the typed handlers.
 *
 * @example
 * ```ts
 * onInvalidEvent: (invalid) => log.warn({ eventType: invalid.eventType, problems: invalid.errors }, 'schema drift')
 * ```
 */
export interface InvalidWebhookEvent {
  /** The body exactly as received and verified. */
  readonly rawBody: Uint8Array;
  /** What the validator found wrong: JSON Pointer paths, keywords and messages (never the values). */
  readonly errors: readonly WebhookEventValidationError[];
  /** The body's `eventType`, when it named one this SDK knows. */
  readonly eventType?: string;
}

/**
 * Parses and validates a raw body: {@link createWebhookReceiver}'s `validator` option. The
 * default is `parseWebhookEvent` of `@capi/webhook-validator`.
 *
 * @example
 * ```ts
 * import { parseWebhookEvent } from '@capi/webhook-validator';
 * const validator: WebhookEventParser = (rawBody, options) => parseWebhookEvent(rawBody, options);
 * ```
 */
export type WebhookEventParser = (
  rawBody: Uint8Array,
  options: { readonly strict: boolean; readonly maxBytes: number },
) => WebhookEventValidationResult;

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
  /** The event's subject, `<eventType>:<data.id>`, once the body was parsed: which user's event of which type this was about. */
  readonly subject?: string;
  /**
   * The event whose handlers failed (`handler_failed`, or `acknowledged` when a dead-letter store
   * could not keep it after an early 202): after the reply (`afterReply`), the service does not
   * send it again, and without a `deadLetters` store this is what to recover it from.
   */
  readonly event?: WebhookEvent;
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
   * service retry; its claim is released and `onError` is called (with the event in its
   * context), and with a `deadLetters` store the event is kept there for `replay()`. With a
   * `deadLetters` store, each delivery is also kept there before its 202 (`reason: 'in_flight'`,
   * deleted once its handlers succeed), so that a process that stops before they finish leaves
   * it for `replay()`; a store that cannot keep it means no 202 (answered after the handlers,
   * reported). On a graceful stop, await `receiver.drain()` after `server.close()`. Where work
   * stops with the reply (Workers, serverless), pass `handle` a `waitUntil`: on Workers without
   * one, the receiver answers after the handlers instead (`wait_until_missing`, reported once).
   * Default `false`: the reply waits for the handlers (30-second window, reference 4.6).
   */
  acknowledgeEarly?: boolean;
  /**
   * How long a delivery waits, in ms, while an earlier event of its subject
   * (`<eventType>:<data.id>`) is being handled, before it is answered 409
   * `duplicate_in_progress` (retried by the service 1, 5 and 15 minutes later; the store keeps
   * its place, so a newer event processed meanwhile supersedes that retry). Deliveries of a
   * subject wait in the order they arrived in this process;
   * one held by another process is looked up again until the time is up. Default 10,000 (a
   * third of the dedupe store's `replyWindowMs` when that is under 30,000); at most that
   * `replyWindowMs` (30,000 by default: the service waits 30 seconds for an answer; 30,000
   * without a store, or with one that does not have it); `0` answers 409 at once.
   */
  subjectWaitMs?: number;
  /**
   * Called with an event older than the latest processed event of its subject
   * (`<eventType>:<data.id>`): the retry of an event that was not processed (its handler failed,
   * or it was answered 409 after `subjectWaitMs`) or was answered past the service's 30-second
   * window, when a newer event of its subject was processed after that, an event that reached a receiver before the processed one (or before a copy of
   * its body that came too soon to be its retry: that state coming back) but was claimed after it
   * (a key fetch, a Redis outage, two processes), or a dead letter replayed after a newer event.
   * Such an event is answered 200 `superseded` and never given to the handlers: handled last, it
   * would bring back the older state. Use this hook when every transition matters (an audit log); a failure in it is given
   * to `onError` and the delivery is acknowledged all the same.
   */
  onSuperseded?: (event: WebhookEvent, delivery: WebhookDelivery) => unknown;
  /** Called with events whose type this SDK version does not know; they are answered 2xx, never retried. */
  onUnknownEvent?: (event: UnknownWebhookEvent, delivery: WebhookDelivery) => unknown;
  /**
   * Called with every authentic delivery that fails the schema (before the reply). Without a
   * `deadLetters` store, the delivery is acknowledged (200 `invalid_event_handled`) only when
   * this hook returns (or resolves) without throwing; otherwise it is answered 500 and retried.
   */
  onInvalidEvent?: (event: InvalidWebhookEvent, delivery: WebhookDelivery) => unknown;
  /**
   * Where authentic deliveries that fail the schema are kept for {@link WebhookReceiver.replay}
   * ({@link createMemoryDeadLetterStore}, {@link createRedisDeadLetterStore}, or your own). With a
   * store, such a delivery is answered 202 `invalid_event_dead_lettered` once it is kept, 503 when
   * the store fails. It also keeps every event whose handlers failed (`reason: 'handler_failed'`):
   * before its 500, since the service gives it up after its third retry, and with `acknowledgeEarly`
   * after the 202, since the service does not send it again. With `acknowledgeEarly`, it keeps each event
   * from before its 202 until its handlers succeed (`reason: 'in_flight'`: one put and one delete
   * per delivery acknowledged early). Default: none.
   */
  deadLetters?: DeadLetterStore;
  /**
   * Parses and validates the body. Default: `parseWebhookEvent` of `@capi/webhook-validator`.
   * A replacement must accept only events that match the `WebhookEventMap` types, which the
   * handlers rely on: use it to run a newer validator, not to loosen the check.
   */
  validator?: WebhookEventParser;
  /** Called with every failure that is the server's, not the sender's, and with every authentic event the schema refuses. Default: `console.error` (a schema-refused event in one line: its first problems and the sizes of its raw body and problem list, not their contents). */
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
  /**
   * The work that runs after the reply: with `acknowledgeEarly`, the handlers (and the store
   * update); after a 503 because the deduplication store failed, the store calls that keep the
   * delivery's place (best effort). Resolves when it has finished; never rejects.
   */
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
   * The runtime's way of keeping work alive after the reply (Workers' `ctx.waitUntil`, bound:
   * `ctx.waitUntil.bind(ctx)`; Next.js's `after`/`waitUntil`). Needed with `acknowledgeEarly` on
   * runtimes that stop or freeze once the Response is returned (Workers, serverless); not on
   * long-lived servers (Node, Bun, Deno). On Workers without it, the receiver answers after the
   * handlers instead of 202 and reports `wait_until_missing` once.
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
  /**
   * Runs the entries of the `deadLetters` store (events the schema refused, events whose
   * handlers failed, and events acknowledged early whose handlers had not finished when their process stopped:
   * `in_flight` entries, left alone until they are older than the dedupe store's `claimTtlMs`,
   * as their handlers may still be running), oldest first, through the pipeline after the
   * signature check (they were verified when they arrived): validate, claim, dispatch, settle.
   * An entry that is processed (or turns out to be a duplicate, superseded by a newer event of its subject, or of an unknown type) is deleted;
   * one that still fails the schema, or whose handler fails, stays. Throws `invalid_options`
   * when the receiver has no `deadLetters` store.
   * @example
   * const { results } = await receiver.replay({ limit: 500 });
   */
  replay(options?: ReplayOptions): Promise<ReplayReport>;
  /**
   * Resolves once the work that `acknowledgeEarly` runs after its 202s has settled: every
   * delivery's handlers, and the store updates after them (the `in_flight` dead letter deleted,
   * or kept as `handler_failed`), including work that starts while it waits. Resolves at once
   * without `acknowledgeEarly`; never rejects. Call it on a graceful stop, after `server.close()`
   * (which stops new deliveries but does not wait for work after a reply that was already
   * written), before the process exits.
   * @example
   * process.on('SIGTERM', () => server.close(() => void receiver.drain().then(() => process.exit(0))));
   */
  drain(): Promise<void>;
}

/**
 * Options of {@link WebhookReceiver.replay}.
 *
 * @example
 * ```ts
 * await receiver.replay({ limit: 1_000 });
 * ```
 */
export interface ReplayOptions {
  /**
   * Most entries this call brings to an end (processed, duplicate, superseded, unknown type:
   * deleted), oldest first. Default 100. Entries that stay (the schema still refuses them, a
   * handler fails) are run and reported but do not count: the call goes on past them, so they
   * never hold up the entries behind them; each entry runs at most once per call.
   */
  limit?: number;
}

/**
 * What {@link WebhookReceiver.replay} did with each entry it took from the store.
 *
 * @example
 * ```ts
 * const { results } = await receiver.replay();
 * const left = results.filter((result) => !result.deleted).length;
 * ```
 */
export interface ReplayReport {
  readonly results: ReadonlyArray<{
    readonly bodySha256: string;
    /**
     * As a delivery would have been answered: `processed`, `duplicate`, `superseded` (a newer
     * event of its subject was processed since), `unknown_event_type` (the entry is deleted), or `invalid_event_dead_lettered` (it still fails the schema),
     * `handler_failed`, `duplicate_in_progress`, `dedupe_store_unavailable` (it stays).
     */
    readonly outcome: ReceiverOutcome;
    /** Whether the entry left the store. */
    readonly deleted: boolean;
  }>;
}

