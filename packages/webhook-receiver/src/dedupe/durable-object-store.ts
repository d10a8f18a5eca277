import type { DeadLetterEntry } from '../dead-letter/dead-letter-store.js';
import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeStoreTimingOptions, type ClaimOptions, type DedupeClaim, type DedupeStore, type MarkProcessedOptions, type ReleaseOptions, type SubjectWaiter } from './dedupe-store.js';
import { minRetryDelayOption, positiveIntegerOption, replyWindowOption } from './positive-integer-option.js';
import { checkWaiter, checkWaiterId, claimSubject, deliveryOfWaiter, expectSubjectRetry, failedAgo, renewSubjectClaim, joinSubjectLine, leaveSubjectLine, markSubjectProcessed, recordExpiry, releaseSubject, REPLY_WINDOW_MS, sentMsAgoOf, type SubjectRecord } from './subject-record.js';
import { assertOptionNames, optionNames } from '../option-names.js';

// The members of the Workers runtime this module uses, typed here so that the package needs
// neither @cloudflare/workers-types nor an import of `cloudflare:workers`.

/** The storage of a Durable Object (`state.storage`): the members {@link WebhookStoreObject} uses. */
export interface DurableObjectStorageLike {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
  list<T>(options: { prefix: string }): Promise<Map<string, T>>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** The state a Durable Object's constructor receives: the members {@link WebhookStoreObject} uses. */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}

/** A Durable Object namespace binding (`env.WEBHOOK_STORE`): the members the stores use. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init: { method: string; body: string }): Promise<Response> };
}

/** A dead letter as it travels to the object and rests in its storage: the body in base64. */
export interface StoredDeadLetter extends Omit<DeadLetterEntry, 'rawBody'> {
  body: string;
}

/**
 * One operation of the protocol, as the stores' adapters send it to the object. `replyWindowMs`
 * is the store's option; an adapter of the previous version sends none: 30,000.
 */
export type StoreOperation =
  | { op: 'claim'; digest: string; claimTtlMs: number; minRetryDelayMs?: number; waitedMs?: number; arrivedAt?: number; waiter?: SubjectWaiter; replyWindowMs?: number; acknowledgedEarly?: boolean }
  | { op: 'markProcessed'; key: string; token: string; ttlMs: number; minRetryDelayMs?: number; retryExpected?: boolean; replyWindowMs?: number; sentMsAgo?: number; sentAt?: number }
  | { op: 'release'; token: string; retryExpected?: boolean; minRetryDelayMs?: number; replyWindowMs?: number; sentMsAgo?: number; sentAt?: number }
  | { op: 'expectRetry'; digest: string; minRetryDelayMs: number; waitedMs?: number; arrivedAt?: number; failedMsAgo?: number; replyWindowMs?: number; waiterId?: string }
  | { op: 'joinLine'; waiter: SubjectWaiter; arrivedAt?: number; minRetryDelayMs?: number; replyWindowMs?: number }
  | { op: 'leaveLine'; waiter: SubjectWaiter; minRetryDelayMs?: number }
  | { op: 'renewClaim'; token: string; claimTtlMs: number }
  | { op: 'deadLetter.put'; entry: StoredDeadLetter }
  | { op: 'deadLetter.replace'; entry: StoredDeadLetter }
  | { op: 'deadLetter.list'; limit: number }
  | { op: 'deadLetter.delete'; bodySha256: string };

const DEAD_LETTER = 'dead-letter:';

const RECORD = 'record';

/**
 * The Durable Object behind both Workers stores of this package. As a deduplication store
 * ({@link createDurableObjectDedupeStore}) each object keeps the record of ONE subject
 * (`<eventType>:<data.id>`, addressed with `idFromName`): an object runs one request at a time,
 * and each operation reads and writes its in-memory record with no `await` in between, so a
 * claim is atomic across every isolate and location of the Worker; the record is persisted in
 * the object's storage (the reply waits for the write) and deleted by an alarm once it has
 * expired. As a dead-letter store ({@link createDurableObjectDeadLetterStore}) one object,
 * named by the store, keeps every dead letter in its storage until it is deleted.
 *
 * Export it from your Worker's entry module and bind it once (`wrangler.toml`):
 *
 * ```toml
 * [[durable_objects.bindings]]
 * name = "WEBHOOK_STORE"
 * class_name = "WebhookStoreObject"
 *
 * [[migrations]]
 * tag = "v1"
 * new_sqlite_classes = ["WebhookStoreObject"]
 * ```
 *
 * @example
 * ```ts
 * import { createWebhookReceiver, type WebhookReceiver } from '@capi/webhook-receiver';
 * import { createDurableObjectDeadLetterStore, createDurableObjectDedupeStore, WebhookStoreObject } from '@capi/webhook-receiver/durable-object';
 * export { WebhookStoreObject };
 * let receiver: WebhookReceiver | undefined; // one per isolate, not per request
 * export default {
 *   fetch(request: Request, env: Env, ctx: ExecutionContext) {
 *     receiver ??= createWebhookReceiver({
 *       publicKey: env.CAPI_WEBHOOK_PUBLIC_KEY,
 *       dedupe: createDurableObjectDedupeStore({ namespace: env.WEBHOOK_STORE }),
 *       deadLetters: createDurableObjectDeadLetterStore({ namespace: env.WEBHOOK_STORE }),
 *     }).on('kyc.status.changed', (event) => env.DB.prepare('...').bind(event.data.id).run());
 *     return receiver.handle(request, { waitUntil: ctx.waitUntil.bind(ctx) });
 *   },
 * };
 * ```
 */
export class WebhookStoreObject {
  /**
   * Types only, never set: the brand of `@cloudflare/workers-types`' `Rpc.DurableObjectBranded`
   * (a string key there, so it matches structurally), which the Env that `wrangler types`
   * writes requires of the class: `DurableObjectNamespace<WebhookStoreObject>`.
   */
  declare readonly __DURABLE_OBJECT_BRAND: never;
  readonly #storage: DurableObjectStorageLike;
  #record: SubjectRecord | undefined;
  #tokens = 0;

  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
    void state.blockConcurrencyWhile(async () => {
      this.#record = await this.#storage.get<SubjectRecord>(RECORD);
    });
  }

  /** Answers one operation of a store (`POST` with a JSON body); called by the stores' adapters only. */
  async fetch(request: Request): Promise<Response> {
    let operation: StoreOperation;
    try {
      operation = (await request.json()) as StoreOperation;
    } catch {
      return Response.json({ error: 'The body is not a store operation.' }, { status: 400 });
    }
    if (operation.op.startsWith('deadLetter.')) return Response.json(await this.#deadLetter(operation));
    const at = Date.now();
    const record = this.#record;
    let answer: DedupeClaim | { owned: boolean } | null = null;
    switch (operation.op) {
      case 'claim': {
        const result = claimSubject(record, operation.digest, at, operation.claimTtlMs, `${at.toString(36)}.${++this.#tokens}`, operation.minRetryDelayMs ?? 0, arrivalAt(operation, at), operation.waiter, operation.replyWindowMs ?? REPLY_WINDOW_MS, { acknowledgedEarly: operation.acknowledgedEarly === true });
        answer = result.claim;
        this.#record = result.record;
        break;
      }
      case 'markProcessed':
        answer = { owned: record?.token === operation.token };
        this.#record = markSubjectProcessed(record, operation.key, operation.token, at, operation.ttlMs, operation.minRetryDelayMs ?? 0, { retryExpected: operation.retryExpected === true, sentMsAgo: sentMsAgoAt(operation, at) }, operation.replyWindowMs ?? REPLY_WINDOW_MS);
        break;
      case 'release':
        this.#record = releaseSubject(record, operation.token, at, { retryExpected: operation.retryExpected === true, sentMsAgo: sentMsAgoAt(operation, at) }, operation.minRetryDelayMs ?? 0, operation.replyWindowMs ?? REPLY_WINDOW_MS);
        break;
      case 'expectRetry':
        this.#record = expectSubjectRetry(record, operation.digest, at, operation.minRetryDelayMs, arrivalAt(operation, at), at - failedAgo(operation.waitedMs ?? 0, operation.failedMsAgo ?? 0), operation.replyWindowMs ?? REPLY_WINDOW_MS, operation.waiterId);
        break;
      case 'joinLine': {
        // An adapter of the previous version sends neither the waiter's digest nor the schedule:
        // its place lapses as before.
        const minRetryDelayMs = operation.minRetryDelayMs ?? 0;
        const delivery = deliveryOfWaiter(operation.waiter, arrivalAt({ waitedMs: operation.waiter.waitedMs, arrivedAt: operation.arrivedAt }, at), minRetryDelayMs, operation.replyWindowMs ?? REPLY_WINDOW_MS);
        this.#record = joinSubjectLine(record, operation.waiter, at, minRetryDelayMs, delivery);
        break;
      }
      case 'leaveLine':
        this.#record = leaveSubjectLine(record, operation.waiter, at, operation.minRetryDelayMs ?? 0);
        break;
      case 'renewClaim': {
        const result = renewSubjectClaim(record, operation.token, at, operation.claimTtlMs);
        answer = { owned: result.renewed };
        this.#record = result.record;
        break;
      }
      default:
        return Response.json({ error: `Unknown operation ${String(operation.op)}.` }, { status: 400 });
    }
    if (this.#record !== record) await this.#persist();
    return Response.json(answer);
  }

  /** Deletes the deduplication record once it has expired. */
  async alarm(): Promise<void> {
    const record = this.#record;
    if (record === undefined || recordExpiry(record) <= Date.now()) {
      this.#record = undefined;
      await this.#storage.delete(RECORD);
    } else {
      await this.#storage.setAlarm(recordExpiry(record));
    }
  }

  // Input gates: while a storage call is in flight the object takes no other request, so the
  // read and the write of a put are not interleaved with another operation.
  async #deadLetter(operation: StoreOperation): Promise<unknown> {
    switch (operation.op) {
      case 'deadLetter.put': {
        const key = DEAD_LETTER + operation.entry.bodySha256;
        // A second copy of the body leaves the first entry as it is (the DeadLetterStore contract,
        // as the memory and Redis stores keep it): its place, and why and how it was kept.
        if ((await this.#storage.get<StoredDeadLetter>(key)) === undefined) await this.#storage.put(key, operation.entry);
        return null;
      }
      case 'deadLetter.replace':
        // One storage write over the key: the earlier entry is replaced whole, receivedAt included,
        // or (should the write fail) left as it was. Answered non-null, unlike an object of the
        // previous version, which answers null to an operation it does not know.
        await this.#storage.put(DEAD_LETTER + operation.entry.bodySha256, operation.entry);
        return { replaced: true };
      case 'deadLetter.list': {
        const entries = [...(await this.#storage.list<StoredDeadLetter>({ prefix: DEAD_LETTER })).values()];
        return entries.sort((a, b) => a.receivedAt - b.receivedAt).slice(0, operation.limit);
      }
      case 'deadLetter.delete':
        await this.#storage.delete(DEAD_LETTER + operation.bodySha256);
        return null;
      default:
        // An operation of a later adapter: null, as the previous versions answered, which tells
        // that adapter the operation is not known here (see the dead-letter store's replace).
        return null;
    }
  }

  async #persist(): Promise<void> {
    const record = this.#record;
    if (record === undefined) {
      await this.#storage.delete(RECORD);
      return;
    }
    await this.#storage.put(RECORD, record);
    await this.#storage.setAlarm(recordExpiry(record));
  }
}

/**
 * Options of {@link createDurableObjectDedupeStore}.
 *
 * @example
 * ```ts
 * createDurableObjectDedupeStore({ namespace: env.WEBHOOK_STORE, keyPrefix: 'shop-eu:' });
 * ```
 */
export interface DurableObjectDedupeStoreOptions extends DedupeStoreTimingOptions {
  /** The binding of the {@link WebhookStoreObject} namespace (`env.WEBHOOK_STORE`). */
  namespace: DurableObjectNamespaceLike;
  /** Prefix of every object name, to share one namespace between receivers. Default `capi:webhook:`. */
  keyPrefix?: string;
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<DurableObjectDedupeStoreOptions>({ namespace: true, keyPrefix: true, ttlMs: true, claimTtlMs: true, minRetryDelayMs: true, replyWindowMs: true });

/**
 * A deduplication store in Cloudflare Durable Objects, atomic on Workers: one
 * {@link WebhookStoreObject} per subject, so every isolate and location of the Worker sees the
 * same claims, and subjects do not queue behind each other. When the object cannot be reached,
 * the receiver replies 503 and the service retries (fail closed).
 *
 * @example
 * ```ts
 * const dedupe = createDurableObjectDedupeStore({ namespace: env.WEBHOOK_STORE });
 * const receiver = createWebhookReceiver({ publicKey: env.CAPI_WEBHOOK_PUBLIC_KEY, dedupe });
 * ```
 */
export function createDurableObjectDedupeStore(options: DurableObjectDedupeStoreOptions): DedupeStore {
  const namespace = checkNamespace(options?.namespace);
  assertOptionNames('createDurableObjectDedupeStore', options, OPTION_NAMES);
  const keyPrefix = keyPrefixOption(options.keyPrefix);
  const ttlMs = positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS);
  const minRetryDelayMs = minRetryDelayOption(options.minRetryDelayMs);
  const replyWindowMs = replyWindowOption(options.replyWindowMs);
  const claimTtlMs = positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS);
  const send = (key: string, operation: StoreOperation) => sendToObject(namespace, keyPrefix + key, operation,
    (code, message, cause) => new DedupeStoreError(code === 'unavailable' ? 'dedupe_store_unavailable' : 'unexpected_store_reply', message, { cause }));

  return {
    replyWindowMs,
    minRetryDelayMs,
    async claim(key: string, digest: string = key, waitedMs = 0, waiter?: SubjectWaiter, options?: ClaimOptions): Promise<DedupeClaim> {
      if (waiter !== undefined) checkWaiter(waiter);
      // Sent only when set: an object of the previous version ignores it, and keeps the retry due.
      const early = options?.acknowledgedEarly === true ? { acknowledgedEarly: true } : undefined;
      const claim = (await send(key, { op: 'claim', digest, claimTtlMs, minRetryDelayMs, waitedMs, arrivedAt: arrivedAt(waitedMs), waiter, replyWindowMs, ...early })) as DedupeClaim | null;
      if (claim?.state === 'claimed' || claim?.state === 'processing' || claim?.state === 'processed' || claim?.state === 'superseded') return claim;
      throw new DedupeStoreError('unexpected_store_reply',
        `The Durable Object ${keyPrefix + key} answered a claim with ${JSON.stringify(claim)}; is the namespace bound to WebhookStoreObject?`);
    },
    async markProcessed(key: string, token: string, options?: MarkProcessedOptions): Promise<boolean | undefined> {
      // `{ owned }`; an object of the previous version answers null: unknown.
      const answer = (await send(key, { op: 'markProcessed', key, token, ttlMs, minRetryDelayMs, retryExpected: options?.retryExpected === true, replyWindowMs, ...sentMsAgoField(options) })) as { owned?: unknown } | null;
      return typeof answer?.owned === 'boolean' ? answer.owned : undefined;
    },
    async release(key: string, token: string, options?: ReleaseOptions): Promise<void> {
      await send(key, { op: 'release', token, retryExpected: options?.retryExpected === true, minRetryDelayMs, replyWindowMs, ...sentMsAgoField(options) });
    },
    async expectRetry(key: string, digest: string, waitedMs = 0, failedMsAgo = 0, waiterId?: string): Promise<void> {
      checkWaiterId(waiterId);
      // (An object of the previous version ignores waiterId: it finds the place by body and arrival.)
      await send(key, { op: 'expectRetry', digest, minRetryDelayMs, waitedMs, arrivedAt: arrivedAt(waitedMs), failedMsAgo, replyWindowMs, ...(waiterId === undefined ? {} : { waiterId }) });
    },
    async joinLine(key: string, waiter: SubjectWaiter): Promise<void> {
      checkWaiter(waiter);
      // Its arrival on this isolate's clock (see arrivedAt), should its place lapse unanswered.
      const arrival = waiter.digest === undefined ? undefined : { arrivedAt: arrivedAt(waiter.waitedMs ?? 0) };
      await send(key, { op: 'joinLine', waiter, minRetryDelayMs, replyWindowMs, ...arrival });
    },
    async leaveLine(key: string, waiter: SubjectWaiter): Promise<void> {
      checkWaiter(waiter);
      await send(key, { op: 'leaveLine', waiter, minRetryDelayMs });
    },
    claimTtlMs,
    async renewClaim(key: string, token: string): Promise<boolean> {
      const answer = (await send(key, { op: 'renewClaim', token, claimTtlMs })) as { owned?: unknown } | null;
      return answer?.owned === true;
    },
  };
}

/** The namespace option of both stores, checked. */
export function checkNamespace(namespace: DurableObjectNamespaceLike | undefined): DurableObjectNamespaceLike {
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
    throw new WebhookReceiverError('invalid_options',
      'namespace must be the Durable Object namespace binding of WebhookStoreObject (env.WEBHOOK_STORE): declare it under [[durable_objects.bindings]] in wrangler.toml and export WebhookStoreObject from the Worker.');
  }
  return namespace;
}

/** The keyPrefix option of both stores, checked. */
export function keyPrefixOption(keyPrefix: unknown): string {
  if (keyPrefix === undefined) return 'capi:webhook:';
  if (typeof keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:', got ${typeof keyPrefix}.`);
  }
  return keyPrefix;
}

/**
 * Sends one operation to the object named `name` and returns its JSON answer. `failure` makes
 * the store's own error: `unavailable` when the object cannot be reached (the receiver answers
 * 503, fail closed), `unexpected` when it answers something a {@link WebhookStoreObject} would not.
 */
export async function sendToObject(
  namespace: DurableObjectNamespaceLike,
  name: string,
  operation: StoreOperation,
  failure: (kind: 'unavailable' | 'unexpected', message: string, cause?: unknown) => Error,
): Promise<unknown> {
  let response: Response;
  try {
    const stub = namespace.get(namespace.idFromName(name) as never);
    response = await stub.fetch('https://webhook-store.invalid/', { method: 'POST', body: JSON.stringify(operation) });
  } catch (cause) {
    throw failure('unavailable',
      `The Durable Object ${name} failed ${operation.op}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, cause);
  }
  const text = await response.text();
  const unexpected = (cause?: unknown) => failure('unexpected',
    `The Durable Object ${name} answered ${operation.op} with ${response.status} ${text.slice(0, 200)}: is the namespace bound to WebhookStoreObject from @capi/webhook-receiver/durable-object?`, cause);
  if (!response.ok) throw unexpected();
  // An object of another class may well answer 200 with text ("hello from my Worker").
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw unexpected(cause);
  }
}

/**
 * `sentMsAgo` of a settlement with a retry expected, as the operation's fields (none otherwise),
 * with `sentAt`: when the service sent the attempt, on the Worker's clock. The object counts the
 * service's reply window from `sentAt` (see {@link sentMsAgoAt}); an object of the previous
 * version reads `sentMsAgo` alone.
 */
function sentMsAgoField(options: MarkProcessedOptions | ReleaseOptions | undefined): { sentMsAgo?: number; sentAt?: number } {
  const sentMsAgo = sentMsAgoOf(options);
  return sentMsAgo === undefined ? {} : { sentMsAgo, sentAt: Date.now() - sentMsAgo };
}

/**
 * How long before `at` (the object's clock) the service sent the attempt a settlement is about:
 * from the `sentAt` the Worker sent, so that the end of the service's reply window, from which
 * the retry's wait counts, is not placed later by the time the operation took to reach the
 * object (the object's clock less a `sentMsAgo` measured before that transit would be: a retry
 * that came on schedule would then seem too early to be one, be taken for a newer event, and
 * bring the older state back); `sentMsAgo` from an adapter of the previous version.
 */
function sentMsAgoAt(operation: { sentMsAgo?: number; sentAt?: number }, at: number): number | undefined {
  const { sentAt } = operation;
  return typeof sentAt === 'number' && Number.isFinite(sentAt) ? Math.max(1, at - sentAt) : operation.sentMsAgo;
}

/**
 * When the delivery reached the receiver, on the receiver's clock (`Date.now()` there, less the
 * `waitedMs` it measured on that same clock): the event's place in its subject's order. Taken in
 * the Worker, not in the object: the object's own clock, less a wait measured on another clock,
 * would add the time the operation took to reach the object (and to wait behind the object's
 * other operations), which differs from one operation to the next by more than the time between
 * two events of one subject, and would place a newer event before an older one.
 */
function arrivedAt(waitedMs: number): number {
  return Date.now() - Math.max(0, waitedMs);
}

/** The arrival an operation carries (see {@link arrivedAt}); an adapter of the previous version sends only `waitedMs`. */
function arrivalAt(operation: { waitedMs?: number; arrivedAt?: number }, at: number): number {
  const { arrivedAt } = operation;
  return typeof arrivedAt === 'number' && Number.isFinite(arrivedAt) ? Math.min(arrivedAt, at) : at - (operation.waitedMs ?? 0);
}
