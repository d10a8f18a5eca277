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
  const listed = deadLetters.list(limit);
  const entries = isPromiseLike(listed) ? await listed : listed;
  const results: Array<ReplayReport['results'][number]> = [];
  for (const entry of entries) {
    // Placed where it was received: a newer event of its subject processed since supersedes it.
    const delivery = { timestamp: entry.timestamp, bodySha256: entry.bodySha256, receivedAt: entry.receivedAt };
    const { outcome } = await processVerified(context, entry.rawBody, { delivery, signature: entry.signature }, { replay: true });
    let deleted = false;
    if (DONE.has(outcome)) {
      try {
        const removed = deadLetters.delete(entry.bodySha256);
        if (isPromiseLike(removed)) await removed;
        deleted = true;
      } catch (error) {
        // The next replay finds it again, as a duplicate of what was just processed.
        context.report(error, { outcome: 'dead_letter_store_unavailable', delivery, afterReply: true });
      }
    }
    results.push({ bodySha256: entry.bodySha256, outcome, deleted });
  }
  return { results };
}
