import type { DeadLetterEntry } from '../dead-letter/dead-letter-store.js';
import { DEFAULT_CLAIM_TTL_MS } from '../dedupe/dedupe-store.js';
import { WebhookReceiverError } from '../errors.js';
import type { ReplayOptions, ReplayReport } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';
import { isPromiseLike, type PipelineContext } from './context.js';
import { processVerified } from './receive.js';

// Outcomes after which the entry has done its work: its event reached the handlers (now or before).
// A superseded one was overtaken by a newer event of its subject: replaying it again changes nothing.
const DONE = new Set<ReceiverOutcome>(['processed', 'duplicate', 'superseded', 'unknown_event_type']);

/**
 * Runs dead-lettered entries through the stages after verification. They are not verified again:
 * only verified deliveries enter the store, and their timestamps are long outside the tolerance
 * by the time the SDK is upgraded (the key may have rotated too). The store is therefore trusted
 * like the deduplication store: keep it where only your receivers can write.
 *
 * Oldest first, each entry at most once per call, until `limit` entries have done their work
 * (an outcome in {@link DONE}) or the store has no entry this call has not run. Entries that stay
 * (still refused by the schema, a handler failed, 409) do not count: the store lists oldest first
 * and keeps no cursor, so counting them would give every call the same entries that still fail,
 * and never the ones behind them. To get past them, the store is listed again from its oldest
 * entry, with room for the entries this call left there and at least as many again: the window
 * doubles while entries stay, so a call lists at most about four times the entries it runs
 * (growing it by `limit` each time would list the entries that stay once per listing). A call stops
 * at an entry the deduplication store could not take: it is down, and every further entry would
 * wait for it in vain.
 */
export async function replayDeadLetters(context: PipelineContext, options: ReplayOptions | undefined): Promise<ReplayReport> {
  const { deadLetters } = context;
  if (deadLetters === undefined) {
    throw new WebhookReceiverError('invalid_options', 'receiver.replay() needs the receiver to have a deadLetters store (createWebhookReceiver({ publicKey, deadLetters })).');
  }
  const limit = options?.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit <= 0) {
    throw new WebhookReceiverError('invalid_options', `replay({ limit }) needs a positive integer, got ${String(limit)}.`);
  }
  const results: Array<ReplayReport['results'][number]> = [];
  // Digests run in this call: a later listing starts from the oldest entry again.
  const seen = new Set<string>();
  let done = 0;
  // Entries run in this call that are still in the store (they stay, or their deletion failed).
  let left = 0;
  let window = limit;
  const inFlightMs = claimTtlMs(context);
  for (;;) {
    let entries: readonly DeadLetterEntry[];
    try {
      const listed = deadLetters.list(window);
      entries = isPromiseLike(listed) ? await listed : listed;
    } catch (error) {
      // Nothing run yet: the caller gets the store's error, as before.
      if (results.length === 0) throw error;
      // Entries were run: report the failure and return what they did rather than lose it.
      context.report(error, { outcome: 'dead_letter_store_unavailable', afterReply: true });
      break;
    }
    let ranAny = false;
    const now = Date.now();
    for (const entry of entries) {
      if (seen.has(entry.bodySha256)) continue;
      seen.add(entry.bodySha256);
      if (entry.reason === 'in_flight' && now - entry.receivedAt < inFlightMs) {
        // Its handlers may still be running, in this process or another: left alone, unreported,
        // as an entry that stays (the next listing makes room for it).
        ranAny = true;
        left += 1;
        continue;
      }
      ranAny = true;
      // Placed where it was received: a newer event of its subject processed since supersedes it.
      const delivery = { timestamp: entry.timestamp, bodySha256: entry.bodySha256, receivedAt: entry.receivedAt };
      // An entry its event's claim kept (its handlers failed, or its process died after an early
      // 202) was placed by the store: an event of its subject in the same millisecond came after it.
      const placedByItsClaim = entry.reason === 'handler_failed' || entry.reason === 'in_flight';
      const { outcome } = await processVerified(context, entry.rawBody, { delivery, signature: entry.signature }, { replay: true, placedByItsClaim });
      let deleted = false;
      if (DONE.has(outcome)) {
        done += 1;
        try {
          const removed = deadLetters.delete(entry.bodySha256);
          if (isPromiseLike(removed)) await removed;
          deleted = true;
        } catch (error) {
          // The next replay finds it again, as a duplicate of what was just processed.
          context.report(error, { outcome: 'dead_letter_store_unavailable', delivery, afterReply: true });
        }
      }
      if (!deleted) left += 1;
      results.push({ bodySha256: entry.bodySha256, outcome, deleted });
      if (done >= limit || outcome === 'dedupe_store_unavailable') return { results };
    }
    // A short listing held every entry there was; one with nothing new, every entry not yet run
    // (another process may have deleted some meanwhile, or put one back that this call ran).
    if (!ranAny || entries.length < window) break;
    window = Math.min(left + Math.max(limit - done, left), Number.MAX_SAFE_INTEGER);
  }
  return { results };
}

/**
 * How old an `in_flight` entry must be before replay runs it: the deduplication store's
 * `claimTtlMs` ({@link DEFAULT_CLAIM_TTL_MS}, 2 minutes, when it does not say, or without a store).
 * A younger one may be a delivery whose handlers are still running after its early 202, in this
 * process or another; an older one is run in place, and the store's claim decides: its handlers
 * still running (their claim renewed), `duplicate_in_progress` and it stays; its event processed
 * meanwhile, `duplicate`; a newer event of its subject processed, `superseded`.
 */
function claimTtlMs(context: PipelineContext): number {
  const given = context.dedupe?.claimTtlMs;
  return typeof given === 'number' && Number.isFinite(given) && given > 0 ? given : DEFAULT_CLAIM_TTL_MS;
}
