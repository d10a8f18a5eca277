import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import { assertOptionNames, optionNames } from '../option-names.js';
import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeStoreTimingOptions, type ClaimOptions, type DedupeClaim, type DedupeStore, type MarkProcessedOptions, type ReleaseOptions, type SubjectWaiter } from './dedupe-store.js';
import { minRetryDelayOption, positiveIntegerOption, replyWindowOption } from './positive-integer-option.js';
import { watchLinesOver } from './wake-ups.js';
import { checkWaiter, checkWaiterId, claimSubject, deliveryOfWaiter, expectSubjectRetry, failedAgo, joinSubjectLine, leaveSubjectLine, markSubjectProcessed, recordExpiry, releaseSubject, renewSubjectClaim, type SubjectRecord } from './subject-record.js';

/**
 * What one call of a {@link TransactionalDedupeStoreOptions.transact} `change` answers: what to
 * keep under the key afterwards.
 */
export interface DedupeRecordChange {
  /** The text to keep under the key (JSON, at most a few KB); `undefined`: delete the key. */
  readonly value: string | undefined;
  /**
   * With a `value`: when it may be deleted, in ms since the epoch (nothing needs it after then:
   * a job of yours may delete such rows; a row kept longer is harmless). `0` without one.
   */
  readonly expiresAt: number;
  /** `false` when `value` is the text that was read: nothing to write. */
  readonly changed: boolean;
}

/**
 * Runs `change` on the value kept under `key`, atomically: reads it (`undefined` when there is
 * none), calls `change` with it, and writes what it answers (see {@link DedupeRecordChange}), with
 * no other write of `key` in between, in this process or any other. In SQL, a transaction that
 * reads the row `FOR UPDATE`; in a store with conditional writes (DynamoDB, Firestore, etcd), a
 * write conditioned on the value read, tried again when it loses. `change` is synchronous and
 * pure: call it again for each try (only the answer of the try that was written counts). A
 * rejection (the database unreachable) answers the delivery 503, and the service retries it.
 */
export type DedupeTransact = (key: string, change: (stored: string | undefined) => DedupeRecordChange) => Promise<void> | void;

/**
 * Wake-ups across processes for a {@link createTransactionalDedupeStore}: a way to send a short
 * text to every process that shares the table (PostgreSQL: `NOTIFY` and `LISTEN`). With them, a
 * delivery waiting for a subject that another process holds claims it as soon as that process
 * is done, instead of at its next try (every 10 to 250 ms).
 */
export interface DedupeWakeUps {
  /**
   * Sends `message` to every `listen` of every process (PostgreSQL: `SELECT pg_notify(channel,
   * message)`). Called after a transaction that may free a subject for a delivery waiting in
   * another process; best effort: a rejection is ignored, and that delivery claims at its next try.
   */
  notify(message: string): unknown;
  /**
   * Calls `onMessage` with every message any process notifies, from now on (PostgreSQL: a
   * connection of its own that runs `LISTEN channel`); resolves once listening. A rejection (or a
   * throw) is reported to `onError` (`wake_ups_unavailable`) and `listen` is called again after 1 s,
   * then twice as long each time up to 30 s. Called once per store, when a receiver first uses it.
   */
  listen(onMessage: (message: string) => void): unknown;
}

/**
 * Options of {@link createTransactionalDedupeStore}.
 *
 * @example
 * ```ts
 * createTransactionalDedupeStore({ transact: (key, change) => db.transaction(...), keyPrefix: 'capi:' });
 * ```
 */
export interface TransactionalDedupeStoreOptions extends DedupeStoreTimingOptions {
  /** Your database's atomic read-modify-write of one key: see {@link DedupeTransact}. */
  transact: DedupeTransact;
  /** Prefix of every key passed to `transact`, to share one table between receivers. Default `''`. */
  keyPrefix?: string;
  /**
   * Optional wake-ups across processes (see {@link DedupeWakeUps}); without them, a delivery
   * waiting for a subject held in another process claims it at its next try (up to 250 ms).
   */
  wakeUps?: DedupeWakeUps;
  /**
   * Clock in ms, read once as each store call starts (before `transact`). Default `Date.now`.
   * Every process sharing the table places events by its own clock: keep their clocks in step
   * (NTP), closer than the time between two events of one user.
   */
  now?: () => number;
}

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<TransactionalDedupeStoreOptions>({ transact: true, keyPrefix: true, ttlMs: true, claimTtlMs: true, minRetryDelayMs: true, replyWindowMs: true, wakeUps: true, now: true });

/** The version of the stored text's layout: a later one is refused, not misread. */
const FORMAT = 1;

const STATES: ReadonlySet<unknown> = new Set(['processing', 'processed', 'released']);

/**
 * A deduplication store on any database that can update one key atomically (PostgreSQL, MySQL,
 * SQLite, DynamoDB, ...): you give it {@link DedupeTransact}, it keeps one JSON text per subject
 * (`<eventType>:<data.id>`) and applies the same rules as the memory, Redis and Durable Object
 * stores (duplicates, retries in their place, superseded late retries, one line per subject
 * across processes), so that several processes sharing the table agree. It has no wake-ups: a
 * delivery waiting for its subject in another process claims it at its next try (up to 250 ms).
 * One `transact` per store call: a delivery makes two (claim, then settle), three with a renewal.
 *
 * @example
 * ```ts
 * // PostgreSQL with `pg` (the whole example: examples/postgres-dedupe-store.ts):
 * // CREATE TABLE capi_webhook_dedupe (key text PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL)
 * const dedupe = createTransactionalDedupeStore({
 *   async transact(key, change) {
 *     const db = await pool.connect();
 *     let failure: Error | undefined;
 *     const onError = (error: Error) => { failure = error; }; // a connection the server ends
 *     db.on('error', onError);
 *     try {
 *       await db.query('BEGIN ISOLATION LEVEL READ COMMITTED'); // the row lock does the work
 *       // The row, locked (made empty when there is none, or when another transaction deleted it meanwhile).
 *       const { rows } = await db.query(`INSERT INTO capi_webhook_dedupe VALUES ($1, '', 0)
 *         ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING value`, [key]);
 *       const next = change(rows[0].value === '' ? undefined : rows[0].value);
 *       if (next.value === undefined) await db.query('DELETE FROM capi_webhook_dedupe WHERE key = $1', [key]);
 *       else if (next.changed) await db.query('UPDATE capi_webhook_dedupe SET value = $2, expires_at = $3 WHERE key = $1', [key, next.value, next.expiresAt]);
 *       await db.query('COMMIT');
 *     } catch (error) {
 *       failure ??= error as Error;
 *       await db.query('ROLLBACK').catch(() => {});
 *       throw error;
 *     } finally {
 *       db.off('error', onError);
 *       db.release(failure);
 *     }
 *   },
 * });
 * ```
 */
export function createTransactionalDedupeStore(options: TransactionalDedupeStoreOptions): DedupeStore {
  if (typeof options !== 'object' || options === null || typeof options.transact !== 'function') {
    throw new WebhookReceiverError('invalid_options',
      'createTransactionalDedupeStore needs { transact(key, change) }: a function that reads the text kept under key, calls change(text or undefined) and writes what it answers, atomically (a transaction, or a conditional write).');
  }
  assertOptionNames('createTransactionalDedupeStore', options, OPTION_NAMES);
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'now must be a function returning milliseconds, like Date.now.');
  }
  if (options.keyPrefix !== undefined && typeof options.keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:', got ${typeof options.keyPrefix}.`);
  }
  const { transact, wakeUps } = options;
  if (wakeUps !== undefined && (typeof wakeUps?.notify !== 'function' || typeof wakeUps.listen !== 'function')) {
    throw new WebhookReceiverError('invalid_options', 'wakeUps must be { notify(message), listen(onMessage) } (PostgreSQL: pg_notify and LISTEN on a channel), or left out.');
  }
  const keyPrefix = options.keyPrefix ?? '';
  const ttlMs = positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS);
  const minRetryDelayMs = minRetryDelayOption(options.minRetryDelayMs);
  const replyWindowMs = replyWindowOption(options.replyWindowMs);
  const claimTtlMs = positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS);
  const now = options.now ?? Date.now;

  /**
   * Runs `step` on the subject's record inside one `transact`, and answers what the try that was
   * written answered (each try of `transact` calls `change` again, on the value it read then, at
   * the same time).
   */
  async function update<T>(key: string, operation: string, step: (record: SubjectRecord | undefined, at: number) => { record: SubjectRecord | undefined; answer: T }, frees: (answer: T) => boolean = () => false): Promise<T> {
    const name = keyPrefix + key;
    // The clock, read once as the call starts, as the Redis store reads it before it sends its
    // script: the receiver measured waitedMs (and a settlement's sentMsAgo) just before. Read
    // inside change, after the database's round trips, a wait for a connection or for the row's
    // lock, it would add that latency to the arrivals computed from them: an older event placed
    // after a newer one, a failure placed later than the service saw it, and two calls of one
    // delivery no longer agreeing on its arrival (within SAME_ARRIVAL_MS).
    const at = now();
    let answered: { answer: T; record: SubjectRecord | undefined } | undefined;
    let refused: DedupeStoreError | undefined;
    const change = (stored: string | undefined): DedupeRecordChange => {
      let before: SubjectRecord | undefined;
      try {
        before = readRecord(name, stored);
      } catch (error) {
        // Thrown to `transact` (which rolls back), and again below, should it swallow it.
        refused = error as DedupeStoreError;
        throw error;
      }
      const { record, answer } = step(before, at);
      answered = { answer, record };
      if (record === undefined) return { value: undefined, expiresAt: 0, changed: stored !== undefined };
      if (record === before) return { value: stored, expiresAt: recordExpiry(record), changed: false };
      return { value: JSON.stringify({ v: FORMAT, record }), expiresAt: recordExpiry(record), changed: true };
    };
    try {
      await transact(name, change);
    } catch (cause) {
      // A value this store did not write: its own error, whatever transact made of it.
      if (refused !== undefined) throw refused;
      throw new DedupeStoreError('dedupe_store_unavailable',
        `The store's transact failed ${operation} of ${name}: ${cause instanceof Error ? cause.message : String(cause)}. The delivery is answered 503 and will be retried.`, { cause });
    }
    if (refused !== undefined) throw refused;
    if (answered === undefined) {
      throw new DedupeStoreError('unexpected_store_reply',
        `The store's transact returned without calling change for ${operation} of ${name}: it must read the value kept under the key, call change(value) and write what it answers.`);
    }
    // The subject may now be free for the delivery first in its line, perhaps in another process.
    if (wakeUps !== undefined && frees(answered.answer)) {
      const first = firstWaiting(answered.record, at);
      if (first !== undefined) {
        try {
          Promise.resolve(wakeUps.notify(`${name}|${first}`)).catch(() => undefined);
        } catch {
          // Best effort: that delivery claims at its next try.
        }
      }
    }
    return answered.answer;
  }

  const store: DedupeStore = {
    replyWindowMs,
    minRetryDelayMs,
    claimTtlMs,
    claim(key: string, digest: string = key, waitedMs = 0, waiter?: SubjectWaiter, claimOptions?: ClaimOptions): Promise<DedupeClaim> {
      if (waiter !== undefined) checkWaiter(waiter);
      // Unique across processes: a claim's token tells whose the subject is.
      const tokenId = globalThis.crypto.randomUUID();
      return update(key, 'a claim', (record, at) => {
        const result = claimSubject(record, digest, at, claimTtlMs, tokenId, minRetryDelayMs, at - waitedMs, waiter, replyWindowMs, claimOptions);
        return { record: result.record, answer: result.claim };
      }, (claim) => claim.state === 'processed' || claim.state === 'superseded');
    },
    markProcessed(key: string, token: string, settleOptions?: MarkProcessedOptions): Promise<boolean> {
      return update(key, 'markProcessed', (record, at) => ({
        record: markSubjectProcessed(record, key, token, at, ttlMs, minRetryDelayMs, settleOptions, replyWindowMs),
        // Tokens are unique: the record still holds this one unless another delivery took the subject.
        answer: record?.token === token,
      }), () => true);
    },
    release(key: string, token: string, settleOptions?: ReleaseOptions): Promise<void> {
      return update(key, 'release', (record, at) => ({ record: releaseSubject(record, token, at, settleOptions, minRetryDelayMs, replyWindowMs), answer: undefined }), () => true);
    },
    expectRetry(key: string, digest: string, waitedMs = 0, failedMsAgo = 0, waiterId?: string): Promise<void> {
      checkWaiterId(waiterId);
      return update(key, 'expectRetry', (record, at) => ({
        record: expectSubjectRetry(record, digest, at, minRetryDelayMs, at - waitedMs, at - failedAgo(waitedMs, failedMsAgo), replyWindowMs, waiterId),
        answer: undefined,
      }));
    },
    joinLine(key: string, waiter: SubjectWaiter): Promise<void> {
      checkWaiter(waiter);
      return update(key, 'joinLine', (record, at) => ({
        record: joinSubjectLine(record, waiter, at, minRetryDelayMs, deliveryOfWaiter(waiter, at - (waiter.waitedMs ?? 0), minRetryDelayMs, replyWindowMs)),
        answer: undefined,
      }));
    },
    leaveLine(key: string, waiter: SubjectWaiter): Promise<void> {
      checkWaiter(waiter);
      return update(key, 'leaveLine', (record, at) => ({ record: leaveSubjectLine(record, waiter, at, minRetryDelayMs), answer: undefined }), () => true);
    },
    renewClaim(key: string, token: string): Promise<boolean> {
      return update(key, 'renewClaim', (record, at) => {
        const { record: renewed, renewed: owned } = renewSubjectClaim(record, token, at, claimTtlMs);
        return { record: renewed, answer: owned };
      });
    },
  };
  if (wakeUps !== undefined) {
    store.watchLines = watchLinesOver(
      // Messages name prefixed keys: those of another prefix (another receiver on the same channel) are not this store's.
      (onMessage) => wakeUps.listen((message) => { if (message.startsWith(keyPrefix)) onMessage(message.slice(keyPrefix.length)); }),
      (error, retryMs) => new DedupeStoreError('wake_ups_unavailable',
        `The transactional store's wakeUps.listen failed (${error instanceof Error ? error.message : String(error)}); trying again in ${retryMs / 1000} s. Meanwhile deliveries waiting for a subject held in another process claim it at their next try (up to 250 ms) instead of at once.`, { cause: error }));
  }
  return store;
}

/** The id of the delivery first in `record`'s line, when no live claim holds the subject at `at`. */
function firstWaiting(record: SubjectRecord | undefined, at: number): string | undefined {
  if (record === undefined || (record.state === 'processing' && record.expiresAt > at)) return undefined;
  return record.line?.find((place) => !place.left && place.expiresAt > at)?.id;
}

/** The record kept as `stored` under `name` (none: `undefined`), or the store's typed error for a text it did not write. */
function readRecord(name: string, stored: string | undefined): SubjectRecord | undefined {
  if (stored === undefined) return undefined;
  if (typeof stored !== 'string') {
    throw new DedupeStoreError('unexpected_store_reply',
      `transact passed change ${stored === null ? 'null' : `a value of type ${typeof stored}`} for ${name}, not the text it wrote: keep the value as text (a json or jsonb column gives an object: use text, or pass JSON.stringify of it), and pass undefined when there is none.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    parsed = undefined;
  }
  const { v, record } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { v?: unknown; record?: Partial<SubjectRecord> };
  if (typeof v === 'number' && v > FORMAT) {
    throw new DedupeStoreError('unexpected_store_reply',
      `The value under ${name} has layout ${v}, written by a later @capi/webhook-receiver; this one reads layout ${FORMAT}. Upgrade every process that shares the table.`);
  }
  if (v !== FORMAT || typeof record !== 'object' || record === null || !STATES.has(record.state) || typeof record.token !== 'string' || typeof record.digest !== 'string' || typeof record.expiresAt !== 'number') {
    throw new DedupeStoreError('unexpected_store_reply',
      `transact read ${JSON.stringify(stored.slice(0, 80))} under ${name}, which this store did not write: give it a table (or key prefix) of its own, and pass change the text exactly as it was written (or undefined when there is none).`);
  }
  return record as SubjectRecord;
}
