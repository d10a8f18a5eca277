import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { postWebhook, type PostOutcome } from './post-webhook.js';
import type { WebhookSigner } from './webhook-signer.js';

/**
 * Delays before the 2nd, 3rd and 4th attempt, in milliseconds of real time (reference 6.3):
 * 1, 5 and 15 minutes. The sandbox divides them by its time scale.
 *
 * @example
 * ```ts
 * const scaled = RETRY_DELAYS_MS.map((ms) => ms / 60); // --time-scale 60: 1 s, 5 s, 15 s
 * ```
 */
export const RETRY_DELAYS_MS = [60_000, 300_000, 900_000] as const;

/**
 * How long a receiver has to answer (reference 4.6): 30 seconds. `@capi/webhook-receiver`
 * counts this window: a lower `deliveryTimeoutMs` shows what a slow receiver gets from the
 * service, but the receiver then misses that its late answers were counted failed.
 *
 * @example
 * ```ts
 * await startSandbox({ deliveryTimeoutMs: DEFAULT_DELIVERY_TIMEOUT_MS / 100 }); // what a slow receiver of your own gets, quickly
 * ```
 */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 30_000;

/**
 * One POST of a delivery, as the delivery log shows it.
 *
 * @example
 * ```ts
 * const statuses = sandbox.deliveries()[0].attempts.map((attempt: DeliveryAttempt) => attempt.status);
 * ```
 */
export interface DeliveryAttempt {
  /** 1 for the first POST, 2 to 4 for the retries. */
  attempt: number;
  /** The wait before this attempt after the previous one finished, already divided by the time scale. */
  delayMs: number;
  /** The wait the live service would use (0, 60000, 300000, 900000). */
  unscaledDelayMs: number;
  startedAt: string;
  finishedAt: string;
  /** The `X-Webhook-Timestamp` this attempt was signed with: every attempt is signed afresh. */
  webhookTimestamp: string;
  /** The receiver's HTTP status, null when it did not answer. */
  status: number | null;
  outcome: PostOutcome['outcome'];
  /** The first KiB of the receiver's answer, or why there was none. */
  responseBody?: string;
  error?: string;
}

/**
 * One event sent to one endpoint, with every attempt. `state`: `scheduled` while a duplicate
 * waits for its first attempt (`duplicateAfterMs`), `delivering` while an attempt is in flight,
 * `retrying` while waiting for the next, then `succeeded` or `failed` (after the 4th attempt, or
 * when the sandbox closed).
 *
 * @example
 * ```ts
 * await sandbox.whenDeliveriesSettled();
 * const failed = sandbox.deliveries().filter((delivery: Delivery) => delivery.state === 'failed');
 * ```
 */
export interface Delivery {
  id: string;
  eventType: string;
  url: string;
  /** The event exactly as sent (the raw body parsed back). */
  event: unknown;
  state: 'scheduled' | 'delivering' | 'retrying' | 'succeeded' | 'failed';
  /**
   * The delivery this one duplicates: the service sent the same event to the same endpoint
   * twice (reference 6.2: duplicates are possible), each copy with its own attempts and retries
   * (the sandbox's `duplicateRate`, or `sendEvent`'s `duplicate`).
   */
  copyOf?: string;
  createdAt: string;
  /** When the next attempt is due, while `retrying`. */
  nextAttemptAt: string | null;
  attempts: DeliveryAttempt[];
}

export interface DeliverySchedulerOptions {
  signer: WebhookSigner;
  /** Divides every retry delay: 60 makes the 1/5/15-minute schedule take 1/5/15 seconds. */
  timeScale: number;
  deliveryTimeoutMs: number;
  /** Called after each attempt, once the delivery's state says what comes next (a retry, or none). */
  onAttempt?: (delivery: Delivery, attempt: DeliveryAttempt) => void;
  /** The share of deliveries (0 to 1) the service sends twice. Default 0. */
  duplicateRate?: number;
  /** How long after the first copy the duplicate's first attempt starts, in ms. Default 0: at once, beside it. */
  duplicateAfterMs?: number;
}

/**
 * Delivers events to partner endpoints with the live service's retry schedule and keeps the
 * log of every attempt. Each attempt is re-signed with a new timestamp over the same body.
 */
export class DeliveryScheduler {
  readonly #deliveries: Delivery[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #closing = new AbortController();
  readonly #idleWaiters = new Set<() => void>();
  /** The deliveries in flight or waiting for a retry, whether or not the log still shows them. */
  readonly #unsettled = new Set<Delivery>();
  /** Called after each delivery settles: the filtered waits check their deliveries again. */
  readonly #settleListeners = new Set<() => void>();
  #inFlight = 0;
  /**
   * The signature of the attempt started last. Signing is asynchronous (WebCrypto finishes
   * concurrent signatures in no set order), so each attempt signs only once the one before has
   * signed: the POSTs start in the order the changes were made, as the service sends them.
   */
  #signedLast: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DeliverySchedulerOptions) {
    // Every attempt in flight listens for close(); past 10 at once (a burst of user changes,
    // several endpoints) Node would print a "possible memory leak" warning that is not one.
    setMaxListeners(0, this.#closing.signal);
  }

  /**
   * Starts delivering `rawBody` to `url` (first attempt at once); returns the log entries: this
   * delivery, and its duplicate when the service sends this one twice (`duplicate`, or else at
   * the scheduler's `duplicateRate`), whose first attempt starts `duplicateAfterMs` later.
   */
  deliver(url: URL, eventType: string, rawBody: string, duplicate?: boolean): Delivery[] {
    const first = this.#add(url, eventType, rawBody, undefined);
    this.#startAttempt(first, url, rawBody, 0);
    if (!(duplicate ?? Math.random() < (this.options.duplicateRate ?? 0))) return [first];
    const copy = this.#add(url, eventType, rawBody, first.id);
    const afterMs = this.options.duplicateAfterMs ?? 0;
    if (afterMs === 0) {
      this.#startAttempt(copy, url, rawBody, 0);
    } else {
      copy.state = 'scheduled';
      copy.nextAttemptAt = new Date(Date.now() + afterMs).toISOString();
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#startAttempt(copy, url, rawBody, 0);
      }, afterMs);
      this.#timers.add(timer);
    }
    return [first, copy];
  }

  #add(url: URL, eventType: string, rawBody: string, copyOf: string | undefined): Delivery {
    const delivery: Delivery = {
      id: randomUUID(),
      eventType,
      url: url.href,
      event: JSON.parse(rawBody) as unknown,
      state: 'delivering',
      createdAt: new Date().toISOString(),
      nextAttemptAt: null,
      attempts: [],
    };
    if (copyOf !== undefined) delivery.copyOf = copyOf;
    this.#deliveries.push(delivery);
    this.#unsettled.add(delivery);
    this.#inFlight++;
    return delivery;
  }

  /** The delivery log, oldest first. */
  list(): Delivery[] {
    return structuredClone(this.#deliveries);
  }

  clear(): void {
    this.#deliveries.length = 0;
  }

  /** Resolves when no delivery is in flight or waiting for a retry. */
  whenIdle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.add(resolve));
  }

  /**
   * The deliveries in flight or waiting for a retry that `match` picks (copies), including those
   * a cleared log no longer shows: they go on, as the log's DELETE leaves them.
   */
  unsettled(match: (delivery: Delivery) => boolean = () => true): Delivery[] {
    return [...this.#unsettled].filter(match).map((delivery) => structuredClone(delivery));
  }

  /**
   * Resolves once no delivery `match` picks is in flight or waiting for a retry, counting those
   * started while it waits. `cancel` stops the wait (the promise then never settles).
   */
  whenSettled(match: (delivery: Delivery) => boolean): { settled: Promise<void>; cancel: () => void } {
    const anyUnsettled = () => [...this.#unsettled].some(match);
    let listener: (() => void) | undefined;
    const settled = new Promise<void>((resolve) => {
      if (!anyUnsettled()) return resolve();
      listener = () => {
        if (anyUnsettled()) return;
        this.#settleListeners.delete(listener!);
        resolve();
      };
      this.#settleListeners.add(listener);
    });
    return { settled, cancel: () => void (listener && this.#settleListeners.delete(listener)) };
  }

  /** Stops every pending retry and duplicate and aborts attempts in flight; their deliveries end `failed`. */
  close(): void {
    this.#closing.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const delivery of this.#unsettled) {
      if (delivery.state === 'retrying' || delivery.state === 'scheduled') this.#finish(delivery, 'failed');
    }
  }

  // An attempt that throws (a signing failure: a sandbox bug, not the receiver's fault) ends
  // the delivery as failed instead of leaving it in flight forever.
  #startAttempt(delivery: Delivery, url: URL, rawBody: string, retryIndex: number): void {
    this.#attempt(delivery, url, rawBody, retryIndex).catch((error: unknown) => {
      delivery.attempts.push({
        attempt: retryIndex + 1,
        ...this.#waitBefore(retryIndex),
        startedAt: new Date().toISOString(),
        finishedAt: new Date().toISOString(),
        webhookTimestamp: '',
        status: null,
        outcome: 'network-error',
        error: `the sandbox could not sign or send the delivery: ${(error as Error)?.message ?? String(error)}`,
      });
      this.#finish(delivery, 'failed');
      this.#report(delivery);
    });
  }

  async #attempt(delivery: Delivery, url: URL, rawBody: string, retryIndex: number): Promise<void> {
    delivery.state = 'delivering';
    delivery.nextAttemptAt = null;
    const signing = this.#signedLast.then(() => this.options.signer.sign(rawBody));
    this.#signedLast = signing.catch(() => undefined);
    const signed = await signing;
    const startedAt = new Date().toISOString();
    const result = await postWebhook(url, rawBody, signed.headers, this.options.deliveryTimeoutMs, this.#closing.signal);
    delivery.attempts.push({
      attempt: retryIndex + 1,
      ...this.#waitBefore(retryIndex),
      startedAt,
      finishedAt: new Date().toISOString(),
      webhookTimestamp: signed.timestamp,
      status: result.status,
      outcome: result.outcome,
      ...('responseBody' in result ? { responseBody: result.responseBody } : { error: result.error }),
    });
    if (result.outcome === 'succeeded' || retryIndex >= RETRY_DELAYS_MS.length || this.#closing.signal.aborted) {
      this.#finish(delivery, result.outcome === 'succeeded' ? 'succeeded' : 'failed');
      return this.#report(delivery);
    }
    const delayMs = RETRY_DELAYS_MS[retryIndex]! / this.options.timeScale;
    delivery.state = 'retrying';
    delivery.nextAttemptAt = new Date(Date.now() + delayMs).toISOString();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#startAttempt(delivery, url, rawBody, retryIndex + 1);
    }, delayMs);
    this.#timers.add(timer);
    this.#report(delivery);
  }

  #report(delivery: Delivery): void {
    this.options.onAttempt?.(delivery, delivery.attempts.at(-1)!);
  }

  /** The wait before attempt `retryIndex + 1`, as the live service has it and as scaled here. */
  #waitBefore(retryIndex: number): { delayMs: number; unscaledDelayMs: number } {
    const unscaledDelayMs = retryIndex === 0 ? 0 : RETRY_DELAYS_MS[retryIndex - 1]!;
    return { delayMs: unscaledDelayMs / this.options.timeScale, unscaledDelayMs };
  }

  #finish(delivery: Delivery, state: 'succeeded' | 'failed'): void {
    delivery.state = state;
    delivery.nextAttemptAt = null;
    this.#unsettled.delete(delivery);
    this.#inFlight--;
    for (const listener of [...this.#settleListeners]) listener();
    if (this.#inFlight === 0) {
      for (const resolve of this.#idleWaiters) resolve();
      this.#idleWaiters.clear();
    }
  }
}
