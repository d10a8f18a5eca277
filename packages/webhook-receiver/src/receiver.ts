import { isWebhookEventType } from '@capi/event-types';
import { parseWebhookEvent } from '@capi/webhook-validator';
import type { PublicKeyProvider } from '@capi/webhook-signature';
import { createMemoryDedupeStore } from './dedupe/memory-store.js';
import { replyWindowOption } from './dedupe/positive-integer-option.js';
import { REPLY_WINDOW_MS } from './dedupe/subject-record.js';
import { InvalidWebhookEventError, WebhookReceiverError } from './errors.js';
import { isPromiseLike, type PipelineContext } from './pipeline/context.js';
import { createClaimRenewal } from './pipeline/claim-renewal.js';
import { createHandlerRegistry } from './pipeline/dispatch.js';
import { createRejectedSignatureReport } from './pipeline/rejected-signatures.js';
import { receiveDelivery } from './pipeline/receive.js';
import { recordAuthenticRefusals, RefusedDeliveries, refusedTiming } from './pipeline/refused-deliveries.js';
import { maxSubjectWaitMs } from './pipeline/reply-window.js';
import { replayDeadLetters } from './pipeline/replay.js';
import { createSubjectLines } from './pipeline/subject-lines.js';
import type { HandleOptions, WebhookErrorContext, WebhookEventHandler, WebhookReceiver, WebhookReceiverOptions } from './receiver-types.js';
import type { ReceiverReply } from './delivery-source.js';
import { dropsWorkAfterResponse } from './runtime.js';
import type { ReceiverOutcome } from './status-table.js';
import { createSignatureCheck } from './signature-check.js';
import { deliverySourceFromRequest, replyToResponse } from './web-adapter.js';
import { assertOptionNames, optionNames } from './option-names.js';

const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** Default `subjectWaitMs`: a third of the service's 30-second window (of a shorter window, a third of it). */
const DEFAULT_SUBJECT_WAIT_MS = 10_000;

/** Every option of {@link WebhookReceiverOptions}: any other name is refused (a misspelt option would silently take its default). */
const OPTION_NAMES = optionNames<WebhookReceiverOptions>({ publicKey: true, toleranceSeconds: true, now: true, maxBodyBytes: true, dedupe: true, strict: true,
  acknowledgeEarly: true, subjectWaitMs: true, onSuperseded: true, onUnknownEvent: true, onInvalidEvent: true, deadLetters: true, validator: true, onError: true });

/**
 * Creates a webhook receiver: it verifies the Ed25519 signature on the raw body, parses and
 * validates the event, drops duplicates, calls the typed handlers and answers the status that
 * makes the service do the right thing (see the README's status table). An authentic body the
 * schema refuses goes to `onInvalidEvent`, `onError` and the `deadLetters` store, never to the
 * handlers, and is never answered 4xx.
 *
 * @example
 * ```ts
 * const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
 *   .on('user.created', async (event) => { await users.upsert(event.data); });
 * export const POST = (request: Request) => receiver.handle(request);
 * ```
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const context = pipelineContext(options);
  const receiver: WebhookReceiver = {
    on(eventType, handler) {
      if (!isWebhookEventType(eventType)) {
        throw new WebhookReceiverError('invalid_options',
          `receiver.on: "${String(eventType)}" is not an event type this SDK version knows; handle new kinds with onUnknownEvent.`);
      }
      if (typeof handler !== 'function') {
        throw new WebhookReceiverError('invalid_options', `receiver.on("${eventType}", handler) needs a handler function.`);
      }
      context.handlers.add(eventType, handler as WebhookEventHandler<never>);
      return receiver;
    },
    onAny(handler) {
      if (typeof handler !== 'function') {
        throw new WebhookReceiverError('invalid_options', 'receiver.onAny(handler) needs a handler function.');
      }
      context.handlers.add(undefined, handler as WebhookEventHandler<never>);
      return receiver;
    },
    async handle(request, handleOptions) {
      if (typeof (request as Partial<Request> | null | undefined)?.headers?.get !== 'function') {
        throw new WebhookReceiverError('invalid_options',
          'receiver.handle(request) takes a Web-standard Request (Hono, Next.js route handlers, Workers, Deno, Bun); on node:http, Express or Fastify, serve toNodeHandler(receiver) instead.');
      }
      const waitUntil = handleWaitUntil(handleOptions);
      // With acknowledgeEarly and nothing to keep the handlers alive after the 202 (Workers
      // without waitUntil), the receiver answers after them instead (see DeliveryMode).
      const workDropped = waitUntil === undefined && context.acknowledgeEarly && dropsWorkAfterResponse();
      const { reply, afterReply } = await receiveDelivery(context, deliverySourceFromRequest(request), workDropped);
      if (afterReply !== undefined && waitUntil !== undefined) {
        try {
          // Called on the options object: `receiver.handle(request, ctx)` keeps ctx as `this`.
          handleOptions!.waitUntil!(afterReply);
        } catch (error) {
          // A waitUntil that throws (Workers' ctx.waitUntil passed unbound: "Illegal invocation")
          // would leave the work to be cancelled with the request: finish it before replying.
          context.report(new WebhookReceiverError('invalid_options',
            'receiver.handle(request, { waitUntil }): waitUntil threw, so the work after the reply ran before it instead (the error is the cause). ' +
              'Pass it bound to its context: { waitUntil: ctx.waitUntil.bind(ctx) } or { waitUntil: (work) => ctx.waitUntil(work) }.', { cause: error }),
          { outcome: outcomeOf(reply), afterReply: false });
          await afterReply;
        }
      }
      return replyToResponse(reply);
    },
    receive: (source) => receiveDelivery(context, source),
    replay: (replayOptions) => replayDeadLetters(context, replayOptions),
    drain: () => drainAfterReplyWork(context),
  };
  return receiver;
}

/**
 * Resolves once every piece of work started after an early 202 has settled: the handlers, the
 * store updates after them, and the work started meanwhile (looked at again until none is left).
 * Resolves at once without `acknowledgeEarly`. Never rejects.
 */
async function drainAfterReplyWork(context: PipelineContext): Promise<void> {
  const running = context.afterReplyWork;
  if (running === undefined) return;
  while (running.size > 0) await Promise.all(running);
}

/**
 * `handle`'s `waitUntil`, checked before anything is read: a value that is not a function is
 * refused. Other members are ignored (a Worker may pass its `ctx` itself).
 */
function handleWaitUntil(handleOptions: HandleOptions | undefined): HandleOptions['waitUntil'] {
  if (handleOptions === undefined) return undefined;
  if (handleOptions === null || typeof handleOptions !== 'object') {
    throw new WebhookReceiverError('invalid_options', `receiver.handle(request, options) takes an options object ({ waitUntil }), got ${handleOptions === null ? 'null' : typeof handleOptions}.`);
  }
  const { waitUntil } = handleOptions;
  if (waitUntil !== undefined && typeof waitUntil !== 'function') {
    throw new WebhookReceiverError('invalid_options',
      `receiver.handle(request, { waitUntil }) needs waitUntil to be a function (Workers: ctx.waitUntil.bind(ctx)), got ${waitUntil === null ? 'null' : typeof waitUntil}.`);
  }
  return waitUntil;
}

/** The outcome a reply was written for: its body's `code`. */
function outcomeOf(reply: ReceiverReply): ReceiverOutcome {
  return (JSON.parse(reply.body) as { code: ReceiverOutcome }).code;
}

/** Checks the options once, at creation, and resolves them into what the stages read. */
function pipelineContext(options: WebhookReceiverOptions): PipelineContext {
  if (options === null || typeof options !== 'object') {
    throw new WebhookReceiverError('invalid_options', 'createWebhookReceiver needs an options object with at least publicKey.');
  }
  assertOptionNames('createWebhookReceiver', options, OPTION_NAMES);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new WebhookReceiverError('invalid_options', `maxBodyBytes must be a positive integer number of bytes, got ${String(maxBodyBytes)}.`);
  }
  if (options.dedupe !== undefined && options.dedupe !== false && !hasMethods(options.dedupe, ['claim', 'markProcessed', 'release'])) {
    throw new WebhookReceiverError('invalid_options',
      'dedupe must be a store with claim, markProcessed and release (createMemoryDedupeStore(), createRedisDedupeStore({ client })) or false.');
  }
  if (options.deadLetters !== undefined && !hasMethods(options.deadLetters, ['put', 'list', 'delete'])) {
    throw new WebhookReceiverError('invalid_options',
      'deadLetters must be a store with put, list and delete (createMemoryDeadLetterStore(), createRedisDeadLetterStore({ client })).');
  }
  // How long the service waits for an answer: the store's (a sandbox's delivery timeout may be
  // shorter), else 30 s (no store, or one written before stores had it).
  const dedupe = options.dedupe === false ? undefined : (options.dedupe ?? createMemoryDedupeStore());
  const replyWindowMs = replyWindowOption(dedupe?.replyWindowMs, 'The dedupe store\'s replyWindowMs');
  const maxWaitMs = maxSubjectWaitMs(replyWindowMs);
  const subjectWaitMs = options.subjectWaitMs ?? Math.min(DEFAULT_SUBJECT_WAIT_MS, Math.floor(replyWindowMs / 3));
  if (!Number.isSafeInteger(subjectWaitMs) || subjectWaitMs < 0 || subjectWaitMs > maxWaitMs) {
    const window = replyWindowMs === REPLY_WINDOW_MS ? 'the service waits 30 s for an answer' : `the service waits ${replyWindowMs} ms for an answer: the dedupe store's replyWindowMs`;
    throw new WebhookReceiverError('invalid_options',
      `subjectWaitMs must be an integer number of ms from 0 to ${maxWaitMs} (${window}), got ${typeof subjectWaitMs === 'string' ? JSON.stringify(subjectWaitMs) : String(subjectWaitMs)}.`);
  }
  // A string from the environment ('false') would otherwise switch the option on.
  for (const name of ['strict', 'acknowledgeEarly'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') {
      throw new WebhookReceiverError('invalid_options', `${name} must be true or false, got ${typeof options[name] === 'string' ? JSON.stringify(options[name]) : String(options[name])}.`);
    }
  }
  for (const name of ['onSuperseded', 'onUnknownEvent', 'onInvalidEvent', 'onError', 'validator'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new WebhookReceiverError('invalid_options', `${name} must be a function, got ${typeof options[name]}.`);
    }
  }
  const onError = options.onError ?? logToConsole;
  const lines = createSubjectLines();
  const report = (error: unknown, errorContext: WebhookErrorContext): void => {
    try {
      const reported: unknown = onError(error, errorContext);
      // An async onError (a logger that sends) that rejects must not become an unhandled
      // rejection, which ends a Node process.
      if (isPromiseLike(reported)) reported.then(undefined, () => undefined);
    } catch {
      // onError is the last resort; a failing logger must not change the reply.
    }
  };
  const now = options.now ?? Date.now;
  let missingWaitUntilReported = false;
  const context: PipelineContext = {
    maxBodyBytes,
    signatureCheck: createSignatureCheck(options),
    validator: options.validator ?? parseWebhookEvent,
    parseOptions: { maxBytes: maxBodyBytes, strict: options.strict ?? false },
    decodesForValidator: options.validator === undefined,
    dedupe,
    deadLetters: options.deadLetters,
    acknowledgeEarly: options.acknowledgeEarly ?? false,
    afterReplyWork: options.acknowledgeEarly === true ? new Set() : undefined,
    failedBeforeReply: options.deadLetters !== undefined ? new Set() : undefined,
    subjectWaitMs,
    replyWindowMs,
    lines,
    claimRenewal: typeof dedupe?.renewClaim === 'function' ? createClaimRenewal(dedupe as Parameters<typeof createClaimRenewal>[0]) : undefined,
    // Only a provider's key can change, and only a store that keeps retries due can use what the
    // deliveries refused for it turn out to be.
    refused: typeof (options.publicKey as { get?: unknown } | null)?.get === 'function' && typeof (options.publicKey as { refresh?: unknown }).refresh === 'function' && typeof dedupe?.expectRetry === 'function'
      ? new RefusedDeliveries(options.publicKey as PublicKeyProvider, options.toleranceSeconds, refusedTiming(dedupe.minRetryDelayMs))
      : undefined,
    onSuperseded: options.onSuperseded,
    onUnknownEvent: options.onUnknownEvent,
    onInvalidEvent: options.onInvalidEvent,
    handlers: createHandlerRegistry(),
    report,
    now,
    rejectedSignature: createRejectedSignatureReport(report, now),
    reportMissingWaitUntil: (outcome, delivery, subject) => {
      if (missingWaitUntilReported) return;
      missingWaitUntilReported = true;
      report(new WebhookReceiverError('wait_until_missing',
        'acknowledgeEarly is set, but receiver.handle(request) was called without waitUntil on Cloudflare Workers, which cancels the work a request leaves ' +
          'running once its Response is returned: a 202 would have acknowledged events whose handlers never run (and the service does not retry after a 2xx). ' +
          'So this receiver answers after the handlers instead, as without acknowledgeEarly (200 processed; 500 handler_failed, retried), and reports this once. ' +
          'Pass the Worker\'s waitUntil to acknowledge early: receiver.handle(request, { waitUntil: ctx.waitUntil.bind(ctx) }).'),
      { outcome, delivery, subject, afterReply: false });
    },
  };
  if (context.refused !== undefined) recordAuthenticRefusals(context, context.refused);
  // A store shared by processes wakes the deliveries waiting here when their subject is free.
  // `lines.wake` lives as long as this receiver (its lines), so a store may hold it weakly.
  if (typeof dedupe?.watchLines === 'function') {
    dedupe.watchLines(lines.wake, (error) => context.report(error, { outcome: 'dedupe_store_unavailable', afterReply: false }));
  }
  return context;
}

function logToConsole(error: unknown, context: WebhookErrorContext): void {
  // Which event: its subject (event type and user) and body digest, when known.
  const about = [context.subject, context.delivery && `body SHA-256 ${context.delivery.bodySha256}`].filter(Boolean).join(', ');
  const prefix = `[@capi/webhook-receiver] ${context.outcome}${context.afterReply ? ' (after the reply)' : ''}${about === '' ? '' : ` (${about})`}:`;
  // A schema-refused event: its message names the first problems; the raw body and the whole
  // list (on the error, for onError) would fill a screen of bytes and objects.
  if (error instanceof InvalidWebhookEventError) {
    console.error(prefix, `${error.name}: ${error.message} (error.rawBody: ${error.rawBody.byteLength} bytes; error.errors: ${error.errors.length} problem${error.errors.length === 1 ? '' : 's'}; pass onError to handle it)`);
    return;
  }
  console.error(prefix, error);
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');
}
