/**
 * The answer of {@link DedupeStore.claim}: `claimed` (this delivery owns the body and must
 * process it, then `markProcessed` or `release` with the `token`), `processing` (another
 * delivery owns it right now), `processed` (it was already processed) or `superseded` (a retry
 * of a body that failed, and an event of the subject received after it was processed since:
 * not dispatched).
 *
 * @example
 * ```ts
 * const claim = await store.claim(key);
 * if (claim.state === 'claimed') await store.markProcessed(key, claim.token);
 * ```
 */
export type DedupeClaim =
  | {
    readonly state: 'claimed';
    readonly token: string;
    /**
     * The claimed event's place in its subject's order (ms since the epoch, the receivers'
     * clocks), when it is not this delivery's arrival: the retry of an event that failed before
     * keeps the place of that event's first attempt. The receiver keeps a dead letter of the
     * delivery there (so that `replay()` does not take a late retry of an older event for a
     * newer one). Optional for a store of your own: without it, the delivery's arrival.
     */
    readonly place?: number;
  }
  | { readonly state: 'processing' }
  | { readonly state: 'processed' }
  | { readonly state: 'superseded' };

/**
 * How {@link DedupeStore.release} was called: `retryExpected` when the delivery is answered
 * non-2xx, so that the service sends the same body again (reference 6.3); not after a reply
 * already acknowledged it (`acknowledgeEarly`), nor on a replay.
 *
 * @example
 * ```ts
 * await store.release(subject, claim.token, { retryExpected: true });
 * ```
 */
export interface ReleaseOptions {
  readonly retryExpected: boolean;
  /**
   * Optional, with `retryExpected`: how long ago, in ms, the service SENT this attempt (the
   * receiver's estimate, from the signature's timestamp). The service's reply window starts then,
   * not when the attempt arrived, so an attempt that outlived it failed that much sooner, and its
   * retry comes that much sooner. The stores of this package count the retry's
   * wait from the end of the window so anchored, but never from earlier than the arrival less
   * `replyWindowMs`. Without it: from the arrival.
   */
  readonly sentMsAgo?: number;
}

/**
 * How {@link DedupeStore.markProcessed} was called: `retryExpected` when the handlers succeeded
 * but the delivery is answered after the service's reply window (30 seconds, reference 6.3; the
 * store's {@link DedupeStore.replyWindowMs}), so that the service counted the attempt failed and
 * sends the same body again. The store keeps that retry
 * due, in its event's place, as after a failed handler: while the event is its subject's latest
 * the retry is `processed`, and once a newer event was processed it is `superseded`, not taken
 * for a new event that would bring the older state back.
 *
 * @example
 * ```ts
 * await store.markProcessed(subject, claim.token, { retryExpected: true });
 * ```
 */
export interface MarkProcessedOptions {
  readonly retryExpected: boolean;
  /** Optional, with `retryExpected`: how long ago the service sent this attempt (see {@link ReleaseOptions.sentMsAgo}). */
  readonly sentMsAgo?: number;
}

/**
 * A delivery that waits for its subject, as the receiver describes it to the store (see
 * {@link DedupeStore.claim} and {@link DedupeStore.joinLine}).
 *
 * @example
 * ```ts
 * await store.claim(subject, bodySha256, 0, { id: 'b9f0c2de-7', leftMs: 20_000 });
 * ```
 */
export interface SubjectWaiter {
  /** Unique among the deliveries that wait, across processes: 1 to 200 letters, digits, `-` and `_`. */
  readonly id: string;
  /** How much longer, in ms, the delivery will wait (above 0, at most a day; it is answered 409 then): its place lapses after that. */
  readonly leftMs: number;
  /**
   * Optional, for {@link DedupeStore.joinLine} (a claim tells its own `digest`): the SHA-256 of
   * the delivery's body. A store that keeps it (the stores of this package do)
   * keeps the place's delivery as a retry due of that body, in its event's place, should the
   * place lapse while the delivery still waits for an answer (its process died: the service got
   * no answer and sends the body again), as it does after a 409 (`expectRetry`). A place without
   * it lapses and is dropped, as a store of the previous version drops every place.
   */
  readonly digest?: string;
  /**
   * Optional, with `digest`: how long ago, in ms, the delivery reached the receiver (as `waitedMs`
   * in {@link DedupeStore.claim}): where its event is placed should its place lapse. Default 0.
   */
  readonly waitedMs?: number;
}

/**
 * How {@link DedupeStore.claim} was called: `acknowledgedEarly` when the delivery, once
 * claimed, is answered 2xx BEFORE its handlers settle (`acknowledgeEarly`; not for a replay, nor
 * on Workers without `waitUntil`, whose handlers run before the reply). The service then sends
 * no retry of it, whatever becomes of the handlers.
 *
 * @example
 * ```ts
 * await store.claim(subject, bodySha256, 0, undefined, { acknowledgedEarly: true });
 * ```
 */
export interface ClaimOptions {
  /**
   * The delivery is answered 2xx before its handlers settle. Should the claim then expire (the
   * process died mid-handler), no retry of its body is due: the subject is simply free, as after
   * a release without `retryExpected`, and the next delivery of the subject is claimed whatever
   * its body (A -> B -> A stays three events). A release or `markProcessed` with
   * `retryExpected` still keeps the retry due: the receiver says so when it answered after the
   * handlers after all. A store that ignores it keeps such an expired claim as a retry due, as
   * any other: for the retry-due window (about 25 minutes) a newer event with that body, once
   * another event of the subject was processed, is answered `superseded` and not dispatched.
   */
  readonly acknowledgedEarly?: boolean;
}

/**
 * Where the receiver records which bodies it has seen, keyed by the SHA-256 of the raw body
 * (deliveries carry no id, and a retry is re-signed with a new timestamp, reference 6.2.6).
 * Implement it to keep the record elsewhere (a SQL table, a KV store); the receiver only
 * needs these three operations.
 *
 * @example
 * ```ts
 * const store: DedupeStore = createMemoryDedupeStore({ ttlMs: 48 * 3600_000 });
 * const claim = await store.claim(bodySha256);
 * if (claim.state === 'claimed') await store.markProcessed(bodySha256, claim.token);
 * ```
 */
export interface DedupeStore {
  /**
   * Optional, read-only: how long, in ms, the service waits for an answer before it counts the
   * attempt failed and retries it (30,000, reference 6.3; a sandbox's `--delivery-timeout` /
   * `deliveryTimeoutMs` can shorten or lengthen it). The stores of this package
   * have it, from their `replyWindowMs` option, and count a retry's wait from the end of that
   * window when the handlers outlived it. The receiver reads it once, when it is created: it
   * reports a delivery answered that long or longer after it arrived
   * (`handler_outlived_reply_window`) and calls `markProcessed` with `retryExpected` then, and
   * `subjectWaitMs` may not exceed it. A store without it (one you wrote, or a wrapper around one
   * of these that does not pass it on) counts as 30,000: give it the same value as the store it
   * wraps, or the sandbox's timeout.
   */
  readonly replyWindowMs?: number;
  /**
   * Optional, read-only: the service's first wait before a retry, in ms (60,000, reference 6.3;
   * 60,000 / N against a sandbox with a time scale N). The stores of this package
   * have it, from their `minRetryDelayMs` option. The receiver reads it once, when it is
   * created: it keeps deliveries it refused for the key for twice this wait, and meanwhile asks
   * its key provider for the key every `minRetryDelayMs / 15` ms, at most every second, so that
   * it verifies them well before their retries come. A store without it counts as 60,000.
   */
  readonly minRetryDelayMs?: number;
  /**
   * Atomically claims `key` (the receiver passes the subject, `<eventType>:<data.id>`) for a
   * delivery whose body has SHA-256 `digest` (default: `key` itself). The answer is `processed`
   * only when `digest` is the digest of the LATEST processed body for `key` (a retry of it);
   * another body is a new event for the subject and is `claimed` (A -> B -> A gives three
   * claims); `processing` while another delivery of the same subject holds its claim.
   * A released claim (a handler failed) leaves no processed digest for `key`, and so does one that
   * expired: the next delivery of the subject is claimed whatever its body (unless it is a
   * superseded retry, below). The claim must expire
   * by itself (a process that dies mid-handler must not block the retries forever). A store may
   * answer `superseded` to the first delivery of a digest released with `retryExpected` once
   * an event of `key` first received after it was processed (the stores of this package do; a
   * store that never does dispatches such a late retry). Throws (or rejects) when the store
   * cannot answer: the receiver then replies 503. `waitedMs`: how long ago the delivery reached
   * the receiver (its body read, its key fetched, its wait in its subject's line; on a replay,
   * the dead letter's age). The store judges by that arrival whether the delivery can be a
   * retry, and places a new event there in the subject's order (the memory, Redis and Durable
   * Object stores do): claims that run late (queued in a client while Redis was down, or after a
   * first key fetch) keep the order in which the events arrived, and a new event received
   * before the processed one is answered `superseded`. A claim that expired is kept as a retry
   * due of its body, in its event's place: the service sends it again (unless it was claimed
   * `acknowledgedEarly`, below).
   *
   * `waiter`: the delivery will wait for the subject if it is not free. A store that keeps lines
   * (the stores of this package do) then keeps the waiter's place in the
   * subject's line, in the order deliveries first asked, and gives the subject to the first
   * waiter whose place has not lapsed: it answers `processing` to every other delivery, with or
   * without a `waiter`, until then. The waiter leaves the line when its claim is answered anything
   * but `processing`. So deliveries of one subject that wait in different processes are handled
   * in the order they first asked the store (their arrival, give or take the network). A place
   * that lapses while its delivery still waits for an answer (its process died: it never claimed,
   * gave its place back nor had its 409 recorded by `expectRetry`) is a delivery the service sends
   * again: the stores of this package then keep it as a retry due of `digest`, in
   * its event's place (its arrival, `waitedMs` before the call), as after a 409, so that a newer
   * event processed before that retry supersedes it. A store without lines ignores it.
   *
   * `options`: optional, passed only when it says something (see {@link ClaimOptions}). With
   * `acknowledgedEarly`, a claim that expires leaves no retry due, since the service got its 2xx
   * and sends none; the stores of this package honour it. A store written before
   * it (which ignores it) keeps such a claim as a retry due when it expires, as above.
   */
  claim(key: string, digest?: string, waitedMs?: number, waiter?: SubjectWaiter, options?: ClaimOptions): DedupeClaim | Promise<DedupeClaim>;
  /**
   * Records `key` as processed, for the store's TTL, unless another delivery has taken `key`
   * since this claim expired. May answer whether this claim was still the subject's when the
   * call ran: `false` when it was not (it expired and another delivery took the subject, or the
   * store lost it: a Redis restart or failover without persistence), so that another delivery of
   * the subject may have been handled meanwhile, concurrently with this one's handlers. The
   * receiver reports `false` to onError (`claim_lost`); `true` or nothing reports nothing. The
   * stores of this package answer it. With `retryExpected` (the reply comes
   * after the service's window), the body's retry is due as well: see {@link MarkProcessedOptions}.
   * A store that ignores the options dispatches that retry like a new event once a newer event of
   * the subject was processed.
   */
  markProcessed(key: string, token: string, options?: MarkProcessedOptions): void | boolean | Promise<void | boolean>;
  /**
   * Drops the claim, leaving no processed digest for `key`, so that the next delivery of the
   * subject is processed (a handler failed). With `retryExpected`, the body's retry is due: see
   * {@link DedupeStore.claim}. Without options: no retry is expected.
   */
  release(key: string, token: string, options?: ReleaseOptions): void | Promise<void>;
  /**
   * Optional. A delivery of `key` whose body has SHA-256 `digest` was answered 409 without a
   * claim (an earlier event of the subject was still being handled after `subjectWaitMs`), so
   * the service sends it again: keep its retry due, in its event's place, as a release with
   * `retryExpected` does (see {@link DedupeStore.claim}). Then a newer event processed before
   * the retry arrives supersedes it, and an older one does not. A store without it dispatches
   * such a retry like a new event (the stores of this package have it).
   * `failedMsAgo` (default 0, at most `waitedMs`): how long ago the service saw the attempt fail.
   * The receiver passes it for a delivery it answered 401 or 503 because of the key (a rotation
   * it had not fetched yet, an unreachable key endpoint) and verified later, once it had the
   * key: the retry's wait counts from that answer, not from now. A failure told
   * `minRetryDelayMs` or more after it happened is not recorded: its retry may have come and been
   * handled already, and a later copy of its body would be taken for that retry. A delivery
   * that waited in `key`'s line: the receiver gives its place back (`leaveLine`) first; a store
   * that converts lapsed places records one retry due for it either way (its place, should it
   * still be there, is marked answered; a place that lapsed already and was converted adds
   * nothing here).
   *
   * `waiterId`: the id of that delivery's place (its {@link SubjectWaiter}'s), passed for a 409,
   * whose delivery never held a claim. The store then finds the place by it, not by body and
   * arrival, and records the delivery's failure even when a retry due of its body was placed in
   * the same ms: a copy the service sent beside it (two copies of one body within a ms or two,
   * both answered 409) keeps its own place and its own retry due, and the second copy's retry is
   * not taken for a new event. The stores of this package honour it (a store of the previous
   * version ignores it, and keeps such copies as one retry due); the id must be a non-empty
   * string (`invalid_waiter` otherwise).
   */
  expectRetry?(key: string, digest: string, waitedMs?: number, failedMsAgo?: number, waiterId?: string): void | Promise<void>;
  /**
   * Optional, for stores that keep lines (see `waiter` in {@link DedupeStore.claim}): a store
   * that has it must honour `claim`'s `waiter`, since the receiver then lets every waiting
   * delivery try the claim and relies on the store's line for the order. Puts a
   * delivery in `key`'s line without claiming: the receiver calls it for a delivery that joins
   * deliveries of its subject already waiting in the same process, so that it is not claimed
   * ahead of them. It keeps its place if it has one. The receiver passes the waiter's `digest`
   * and `waitedMs`, so that a place that lapses unanswered becomes a retry due (see `waiter` in
   * {@link DedupeStore.claim}); a store of the previous version ignores them.
   */
  joinLine?(key: string, waiter: SubjectWaiter): void | Promise<void>;
  /**
   * Optional, for stores that keep lines. Gives back the place of `waiter` in `key`'s line: the
   * receiver calls it when the delivery stopped waiting because the store failed (answered
   * 503), so that its place does not hold the subject up until it lapses. Until then (`leftMs`)
   * the store remembers that it left: a call of that delivery that still runs after this one
   * (sent before it, over a client that may reorder commands) takes no place and claims nothing.
   */
  leaveLine?(key: string, waiter: SubjectWaiter): void | Promise<void>;
  /**
   * Optional, read-only: how long, in ms, a claim lives unless renewed (the store's `claimTtlMs`).
   * The receiver renews the claims of handlers still running a quarter of it after the last renewal
   * ({@link DedupeStore.renewClaim}); without it, it counts {@link DEFAULT_CLAIM_TTL_MS}.
   */
  readonly claimTtlMs?: number;
  /**
   * Optional. Extends the claim of `key` held by `token` to `claimTtlMs` from now, and answers
   * whether it was still this claim's (`false` once it expired, was taken, or the store lost it).
   * The receiver calls it while a delivery's handlers run (an `acknowledgeEarly` handler that
   * calls a slow service, a handler that outlives the reply window), so that a handler still
   * running keeps its subject, while the claim of a process that died still expires
   * `claimTtlMs` after its last renewal. The stores of this package have it; a
   * store without it keeps a claim for `claimTtlMs` only: keep that above your longest handlers.
   */
  renewClaim?(key: string, token: string): boolean | Promise<boolean>;
  /**
   * Optional, for stores that keep lines across processes (the Redis store given a
   * `subscriber`): calls `wake(key, waiterId)` whenever the delivery `waiterId` (the first live
   * place in `key`'s line) may now claim `key` (the delivery that held it settled, or the place
   * before it was given back), in whichever process it waits, so that it claims at once rather
   * than at its next try (the receiver tries again every 10 to 250 ms). Without `waiterId`,
   * every delivery waiting for `key` tries. Best effort: a lost wake-up leaves the next try.
   * `failed` hears why wake-ups do not come (it may be called again). The receiver calls it
   * once, when it is created, and keeps `wake` alive for as long as the receiver lives: hold
   * `wake` weakly (a `WeakRef`, and `failed` in a `WeakMap` keyed by it), as the Redis store
   * does, so that receivers the partner drops (one built per request) are collected.
   */
  watchLines?(wake: (key: string, waiterId?: string) => void, failed: (error: unknown) => void): void;
}

/**
 * Default time a processed body is remembered: 24 h, well over the 21 minutes that retries span.
 *
 * @example
 * ```ts
 * createMemoryDedupeStore({ ttlMs: 2 * DEFAULT_DEDUPE_TTL_MS });
 * ```
 */
export const DEFAULT_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Default lifetime of a claim whose delivery has neither finished nor failed (its process died).
 * Longer than the 30-second reply window, short enough that the retries after 6 and 21 minutes
 * (reference 6.3) find it expired and process the event.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client, claimTtlMs: DEFAULT_CLAIM_TTL_MS / 2 });
 * ```
 */
export const DEFAULT_CLAIM_TTL_MS = 2 * 60 * 1000;

/**
 * The options every store of this package takes (memory, Redis, Durable Object, transactional):
 * how long it remembers, and the service's timing that tells a retry from a newer event.
 *
 * @example
 * ```ts
 * const timing: DedupeStoreTimingOptions = { minRetryDelayMs: 60_000 / 10 }; // a sandbox at timeScale 10
 * createMemoryDedupeStore(timing);
 * ```
 */
export interface DedupeStoreTimingOptions {
  /** How long a processed body is remembered, in ms. Default 24 h (retries span 21 minutes). */
  ttlMs?: number;
  /** How long an unfinished claim lives, in ms (a process that died mid-handler). Default 2 minutes; the receiver renews it while the handlers run. */
  claimTtlMs?: number;
  /**
   * The least time, in ms, the service waits after a failed attempt before it retries it; it
   * waits 5 and 15 times as long before the second and third retry (reference 6.3). A copy of a
   * failed body that arrives sooner is a newer event with the same content, not the retry (see
   * Duplicates in the README). Default 60,000; against a sandbox with `timeScale` N, 60,000 / N.
   */
  minRetryDelayMs?: number;
  /**
   * How long, in ms, the service waits for an answer before it counts the attempt failed and
   * retries it (reference 6.3). The receiver reads it from the store: a delivery answered later
   * is reported (`handler_outlived_reply_window`) and its retry kept due, and `subjectWaitMs` may
   * not exceed it. Default 30,000; against a sandbox with `--delivery-timeout` (`deliveryTimeoutMs`)
   * T, T.
   */
  replyWindowMs?: number;
}
