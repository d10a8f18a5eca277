import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeClaim, type DedupeStore } from './dedupe-store.js';
import { positiveIntegerOption } from './positive-integer-option.js';
import { claimSubject, markSubjectProcessed, releaseSubject, type SubjectRecord } from './subject-record.js';

// The members of the Workers runtime this module uses, typed here so that the package needs
// neither @cloudflare/workers-types nor an import of `cloudflare:workers`.

/** The storage of a Durable Object (`state.storage`): the members {@link WebhookDedupeObject} uses. */
export interface DurableObjectStorageLike {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  deleteAll(): Promise<void>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** The state a Durable Object's constructor receives: the members {@link WebhookDedupeObject} uses. */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}

/** A Durable Object namespace binding (`env.WEBHOOK_DEDUPE`): the members the store uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init: { method: string; body: string }): Promise<Response> };
}

/** One operation of the store protocol, as the adapter sends it to the object. */
type Operation =
  | { op: 'claim'; digest: string; claimTtlMs: number }
  | { op: 'markProcessed'; key: string; token: string; ttlMs: number }
  | { op: 'release'; token: string };

const RECORD = 'record';

/**
 * The Durable Object that keeps the deduplication record of ONE subject (`<eventType>:<data.id>`;
 * the store addresses one object per subject with `idFromName`). A Durable Object runs one
 * request at a time, and each operation reads and writes its in-memory record with no `await`
 * in between, so a claim is atomic across every isolate and every location of the Worker; the
 * record is persisted in the object's storage (the reply waits for the write) and deleted by an
 * alarm once it has expired.
 *
 * Export it from your Worker's entry module and bind it (`wrangler.toml`):
 *
 * ```toml
 * [[durable_objects.bindings]]
 * name = "WEBHOOK_DEDUPE"
 * class_name = "WebhookDedupeObject"
 *
 * [[migrations]]
 * tag = "v1"
 * new_sqlite_classes = ["WebhookDedupeObject"]
 * ```
 *
 * @example
 * ```ts
 * import { createWebhookReceiver } from '@capi/webhook-receiver';
 * import { createDurableObjectDedupeStore, WebhookDedupeObject } from '@capi/webhook-receiver/durable-object';
 * export { WebhookDedupeObject };
 * export default {
 *   fetch: (request: Request, env: Env) =>
 *     createWebhookReceiver({ publicKey: env.CAPI_WEBHOOK_PUBLIC_KEY, dedupe: createDurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE }) })
 *       .on('kyc.status.changed', (event) => env.DB.prepare('...').bind(event.data.id).run())
 *       .handle(request),
 * };
 * ```
 */
export class WebhookDedupeObject {
  readonly #storage: DurableObjectStorageLike;
  #record: SubjectRecord | undefined;
  #tokens = 0;

  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
    void state.blockConcurrencyWhile(async () => {
      this.#record = await this.#storage.get<SubjectRecord>(RECORD);
    });
  }

  /** Answers one operation of the store (`POST` with a JSON body); called by the store's adapter only. */
  async fetch(request: Request): Promise<Response> {
    let operation: Operation;
    try {
      operation = (await request.json()) as Operation;
    } catch {
      return Response.json({ error: 'The body is not a store operation.' }, { status: 400 });
    }
    const at = Date.now();
    const record = this.#record;
    let answer: DedupeClaim | null = null;
    switch (operation.op) {
      case 'claim': {
        const result = claimSubject(record, operation.digest, at, operation.claimTtlMs, `${at.toString(36)}.${++this.#tokens}`);
        answer = result.claim;
        this.#record = result.record;
        break;
      }
      case 'markProcessed':
        this.#record = markSubjectProcessed(record, operation.key, operation.token, at, operation.ttlMs);
        break;
      case 'release':
        this.#record = releaseSubject(record, operation.token, at);
        break;
      default:
        return Response.json({ error: `Unknown operation ${String((operation as { op?: unknown }).op)}.` }, { status: 400 });
    }
    if (this.#record !== record) await this.#persist();
    return Response.json(answer);
  }

  /** Deletes the record once it (and the record a claim replaced) has expired. */
  async alarm(): Promise<void> {
    const record = this.#record;
    if (record === undefined || expiryOf(record) <= Date.now()) {
      this.#record = undefined;
      await this.#storage.deleteAll();
    } else {
      await this.#storage.setAlarm(expiryOf(record));
    }
  }

  async #persist(): Promise<void> {
    const record = this.#record;
    if (record === undefined) {
      await this.#storage.deleteAll();
      return;
    }
    await this.#storage.put(RECORD, record);
    await this.#storage.setAlarm(expiryOf(record));
  }
}

function expiryOf(record: SubjectRecord): number {
  return Math.max(record.expiresAt, record.previous?.expiresAt ?? 0);
}

/**
 * Options of {@link createDurableObjectDedupeStore}.
 *
 * @example
 * ```ts
 * createDurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE, keyPrefix: 'shop-eu:' });
 * ```
 */
export interface DurableObjectDedupeStoreOptions {
  /** The binding of the {@link WebhookDedupeObject} namespace (`env.WEBHOOK_DEDUPE`). */
  namespace: DurableObjectNamespaceLike;
  /** Prefix of every object name, to share one namespace between receivers. Default `capi:webhook:`. */
  keyPrefix?: string;
  /** How long a processed body is remembered, in ms. Default 24 h (retries span 21 minutes). */
  ttlMs?: number;
  /** How long an unfinished claim lives, in ms (an isolate that died mid-handler). Default 2 minutes. */
  claimTtlMs?: number;
}

/**
 * A deduplication store in Cloudflare Durable Objects, atomic on Workers: one
 * {@link WebhookDedupeObject} per subject, so every isolate and location of the Worker sees the
 * same claims, and subjects do not queue behind each other. When the object cannot be reached,
 * the receiver replies 503 and the service retries (fail closed).
 *
 * @example
 * ```ts
 * const dedupe = createDurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE });
 * const receiver = createWebhookReceiver({ publicKey: env.CAPI_WEBHOOK_PUBLIC_KEY, dedupe });
 * ```
 */
export function createDurableObjectDedupeStore(options: DurableObjectDedupeStoreOptions): DedupeStore {
  const namespace = options?.namespace;
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
    throw new WebhookReceiverError('invalid_options',
      'namespace must be the Durable Object namespace binding of WebhookDedupeObject (env.WEBHOOK_DEDUPE): declare it under [[durable_objects.bindings]] in wrangler.toml and export WebhookDedupeObject from the Worker.');
  }
  const keyPrefix = options.keyPrefix ?? 'capi:webhook:';
  if (typeof keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:', got ${typeof keyPrefix}.`);
  }
  const ttlMs = positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS);
  const claimTtlMs = positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS);

  const send = async (key: string, operation: Operation): Promise<unknown> => {
    let response: Response;
    try {
      const stub = namespace.get(namespace.idFromName(keyPrefix + key) as never);
      response = await stub.fetch('https://webhook-dedupe.invalid/', { method: 'POST', body: JSON.stringify(operation) });
    } catch (cause) {
      throw new DedupeStoreError('dedupe_store_unavailable',
        `The Durable Object of ${keyPrefix + key} failed ${operation.op}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, { cause });
    }
    const text = await response.text();
    if (!response.ok) {
      throw new DedupeStoreError('unexpected_store_reply',
        `The Durable Object of ${keyPrefix + key} answered ${operation.op} with ${response.status} ${text.slice(0, 200)}: is the namespace bound to WebhookDedupeObject from @capi/webhook-receiver/durable-object?`);
    }
    return JSON.parse(text) as unknown;
  };

  return {
    async claim(key: string, digest: string = key): Promise<DedupeClaim> {
      const claim = (await send(key, { op: 'claim', digest, claimTtlMs })) as DedupeClaim | null;
      if (claim?.state === 'claimed' || claim?.state === 'processing' || claim?.state === 'processed') return claim;
      throw new DedupeStoreError('unexpected_store_reply',
        `The Durable Object of ${keyPrefix + key} answered a claim with ${JSON.stringify(claim)}; is the namespace bound to WebhookDedupeObject?`);
    },
    async markProcessed(key: string, token: string): Promise<void> {
      await send(key, { op: 'markProcessed', key, token, ttlMs });
    },
    async release(key: string, token: string): Promise<void> {
      await send(key, { op: 'release', token });
    },
  };
}
