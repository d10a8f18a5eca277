import { verifyWebhookSignature, type PublicKeyProvider, type WebCryptoKey } from '@capi/webhook-signature';
import { sha256Hex } from '../body-digest.js';
import type { PipelineContext } from './context.js';
import { parseEvent } from './parse-event.js';
import { unrefTimer } from '../unref-timer.js';

/** A delivery answered 401 or 503 because of the key, kept until a newer key can tell whether it was authentic. */
interface RefusedDelivery {
  readonly rawBody: Uint8Array;
  readonly timestamp: string;
  readonly signature: string;
  /** When it reached the receiver: its place in its subject's order. */
  readonly receivedAt: number;
  /** The receiver's clock (`now`) when its timestamp was checked: it is checked again as of then. */
  readonly checkedAt: number;
  /** When it was answered: the service's wait before the retry counts from then. */
  readonly answeredAt: number;
  /** The key it failed with (`undefined`: none was at hand): it is checked again only with another. */
  readonly triedWith: unknown;
  /** The provider's previous key it was checked with, and failed (see {@link RefusedDeliveries}). */
  triedPrevious?: unknown;
}

/** The most refused deliveries a receiver keeps, and their bodies' total size: a flood of forgeries evicts the oldest, and costs no more. */
export const MAX_REFUSED_DELIVERIES = 1_000;
export const MAX_REFUSED_BYTES = 16 * 1_048_576;
/**
 * How long a refused delivery is kept, and how often the receiver asks its provider for the key
 * meanwhile (the provider fetches at most once per its `minRefreshIntervalMs` once it has a
 * key), from the store's first wait before a retry (`minRetryDelayMs`, 60,000 without one):
 * kept twice that wait (2 minutes by default), since it is only of use until its retry comes
 * (the store records no failure told later, see `DedupeStore.expectRetry`); asked every
 * fifteenth of it, at most every second (67 ms under a sandbox's time scale 60), so that the
 * kept deliveries are verified well before their retries come.
 */
export function refusedTiming(minRetryDelayMs: number | undefined): { keepMs: number; recheckIntervalMs: number } {
  const wait = typeof minRetryDelayMs === 'number' && minRetryDelayMs > 0 ? minRetryDelayMs : 60_000;
  return { keepMs: 2 * wait, recheckIntervalMs: Math.min(1_000, Math.ceil(wait / 15)) };
}

/** What the receiver does with a kept delivery shown authentic: its body, when it arrived, when it was answered. */
export type AuthenticRefusal = (rawBody: Uint8Array, receivedAt: number, answeredAt: number) => Promise<void>;

/**
 * Deliveries answered 401 (`invalid_signature`) or 503 (`public_key_unavailable`) by a receiver
 * whose key comes from a provider (`createPublicKeyProvider`): after the service rotates its key,
 * events signed with the new key are refused until the provider refetches it (at most once per
 * `minRefreshIntervalMs`), and while the key endpoint is down none can be verified. The service
 * retries such an event 1, 5 and 15 minutes later; a newer event of its subject, verified with
 * the new key meanwhile, must not be undone by that retry. The store never saw the refused
 * attempt, so it kept no retry due, and it could not have: an unverified body proves nothing.
 *
 * So the receiver keeps each such delivery here, in memory, for twice the store's first retry
 * wait (at most {@link MAX_REFUSED_DELIVERIES}, {@link MAX_REFUSED_BYTES}), and asks the provider
 * for the key every second meanwhile (sooner under a time scale; see {@link refusedTiming}). Once
 * the provider's key is not the one a kept delivery failed with, at that check or before the next
 * verified delivery claims, the kept one is verified with it (its timestamp checked as at its
 * arrival). An authentic one is told to the store as a retry due
 * (`expectRetry`), in the place where it arrived and counted from when it was answered, as if it
 * had been answered 409: a newer event processed before its retry supersedes it. A kept delivery
 * that failed with the provider's current key is also checked with the key it replaced, while the
 * provider keeps it (`previousKey()`, 5 minutes after the rotation): an attempt signed just before
 * the rotation that arrived after the new key was fetched. Only to place it: it was answered 401,
 * and its retry, signed with the new key, is what is dispatched. The others are forgeries (or
 * bodies changed in transit) and are dropped. Nothing is dispatched from here: the
 * retry is. Kept per process, so a delivery refused by a process that then stops is not
 * recovered.
 */
export class RefusedDeliveries {
  #entries: RefusedDelivery[] = [];
  #bytes = 0;
  #checking: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #authentic: AuthenticRefusal = async () => {};

  constructor(
    private readonly provider: PublicKeyProvider,
    private readonly toleranceSeconds: number | undefined,
    /** See {@link refusedTiming}. */
    private readonly timing = refusedTiming(undefined),
  ) {}

  /** Where the authentic ones go (the receiver's store, see {@link recordAuthenticRefusals}). */
  onAuthentic(authentic: AuthenticRefusal): void {
    this.#authentic = authentic;
  }

  /** How many are kept (those being checked are not). */
  get size(): number {
    return this.#entries.length;
  }

  /** Whether any are kept or being checked: a verified delivery then waits for {@link recheck} before it claims. */
  get pending(): boolean {
    return this.#entries.length > 0 || this.#checking !== undefined;
  }

  keep(rawBody: Uint8Array, timestamp: string, signature: string, receivedAt: number, checkedAt: number): void {
    const answeredAt = Date.now();
    this.#dropExpired(answeredAt);
    // A copy: an adapter may hand a view of a buffer it reuses.
    this.#entries.push({ rawBody: rawBody.slice(), timestamp, signature, receivedAt, checkedAt, answeredAt, triedWith: this.provider.lastKey?.() });
    this.#bytes += rawBody.byteLength;
    while (this.#entries.length > MAX_REFUSED_DELIVERIES || (this.#bytes > MAX_REFUSED_BYTES && this.#entries.length > 1)) {
      this.#bytes -= this.#entries.shift()!.rawBody.byteLength;
    }
    this.#schedule();
  }

  /**
   * While deliveries are kept, asks the provider for the key every second (or sooner, see
   * {@link refusedTiming}) and checks them when it changed: a process that receives nothing else
   * (others behind the same load balancer took the later deliveries) still records them before their retries come, which may reach another
   * process. Best effort: the timer does not keep a process alive (Node, Bun, Deno), an edge
   * runtime may not run it between requests, and a verified delivery checks them too.
   */
  #schedule(): void {
    if (this.#timer !== undefined) return;
    const timer = setTimeout(() => {
      this.#timer = undefined;
      // A provider's refresh that throws, or is missing, must not end the process.
      void Promise.resolve()
        .then(() => this.provider.refresh())
        .catch(() => undefined)
        .then(() => this.recheck())
        .finally(() => {
          this.#dropExpired(Date.now());
          if (this.#entries.length > 0) this.#schedule();
        });
    }, this.timing.recheckIntervalMs);
    this.#timer = timer;
    unrefTimer(timer);
  }

  /**
   * Verifies the kept deliveries with the provider's key, where it is not the key they failed
   * with, and gives the authentic ones to {@link onAuthentic}; every one checked is dropped. One
   * check at a time: a caller that comes during one waits for it. Never rejects.
   */
  recheck(): Promise<void> {
    return (this.#checking ??= this.#run()
      .catch(() => undefined)
      .finally(() => {
        this.#checking = undefined;
      }));
  }

  async #run(): Promise<void> {
    this.#dropExpired(Date.now());
    if (this.#entries.length === 0) return;
    let key: unknown = this.provider.lastKey?.();
    if (key === undefined) key = await Promise.resolve().then(() => this.provider.get()).catch(() => undefined);
    if (key === undefined) return;
    // Failed with the key the provider held before this one, and not checked with it yet: an
    // attempt signed just before a rotation that arrived after the new key was fetched.
    const previous: unknown = this.provider.previousKey?.();
    const beforeRotation = previous === undefined ? [] : this.#entries.filter((entry) => entry.triedWith === key && entry.triedPrevious !== previous);
    const due = this.#entries.filter((entry) => entry.triedWith !== key);
    if (due.length === 0 && beforeRotation.length === 0) return;
    this.#keepOnly(this.#entries.filter((entry) => entry.triedWith === key));
    const authentic: RefusedDelivery[] = [];
    for (const entry of due) {
      // A forgery, or a body changed in transit: dropped.
      if (await this.#verifies(entry, key)) authentic.push(entry);
    }
    for (const entry of beforeRotation) {
      if (await this.#verifies(entry, previous)) {
        authentic.push(entry);
        this.#keepOnly(this.#entries.filter((kept) => kept !== entry));
      } else {
        // Kept for a newer key, not checked with this one again.
        entry.triedPrevious = previous;
      }
    }
    // Told to the store at once, not one after another: deliveries wait for this.
    await Promise.all(authentic.map((entry) => this.#authentic(entry.rawBody, entry.receivedAt, entry.answeredAt)));
  }

  async #verifies(entry: RefusedDelivery, key: unknown): Promise<boolean> {
    try {
      await verifyWebhookSignature({
        rawBody: entry.rawBody,
        timestamp: entry.timestamp,
        signature: entry.signature,
        publicKey: key as WebCryptoKey,
        toleranceSeconds: this.toleranceSeconds,
        now: () => entry.checkedAt,
      });
      return true;
    } catch {
      return false;
    }
  }

  #dropExpired(now: number): void {
    const live = this.#entries.filter((entry) => now - entry.receivedAt < this.timing.keepMs);
    if (live.length !== this.#entries.length) this.#keepOnly(live);
  }

  #keepOnly(entries: RefusedDelivery[]): void {
    this.#entries = entries;
    this.#bytes = entries.reduce((total, entry) => total + entry.rawBody.byteLength, 0);
  }
}

/**
 * The receiver's {@link RefusedDeliveries}: the deliveries the key shows authentic become retries
 * due in the store (checked after a verified delivery, before it claims its subject: it may be
 * one of their retries, and at each recheck interval while any are kept). A body today's schema
 * refuses is left to its retry (dead-lettered then). A store failure is reported.
 */
export function recordAuthenticRefusals(context: PipelineContext, refused: RefusedDeliveries): void {
  const store = context.dedupe;
  if (store?.expectRetry === undefined) return;
  refused.onAuthentic(async (rawBody, receivedAt, answeredAt) => {
    let subject: string | undefined;
    try {
      const digest = await sha256Hex(rawBody);
      const parsed = parseEvent(context, rawBody, digest);
      if (parsed.kind === 'invalid') return;
      subject = parsed.subject;
      const now = Date.now();
      await store.expectRetry!(subject, digest, now - receivedAt, now - answeredAt);
    } catch (error) {
      // Never the failure of the delivery that happened to run the check.
      context.report(error, { outcome: 'dedupe_store_unavailable', ...(subject === undefined ? {} : { subject }), afterReply: false });
    }
  });
}
