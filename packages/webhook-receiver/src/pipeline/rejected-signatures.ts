import { WebhookReceiverError } from '../errors.js';
import type { WebhookErrorContext } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';

/** What each 401 that a wrong key or clock also gives says, in the report. */
const KEY_OR_CLOCK: Partial<Record<ReceiverOutcome, string>> = {
  invalid_signature: 'a signature that does not verify with the configured public key',
  timestamp_too_old: 'a timestamp older than toleranceSeconds',
  timestamp_in_future: 'a timestamp further ahead than toleranceSeconds',
};

/** At most one report in this many ms. */
const REPORT_EVERY_MS = 60_000;

/**
 * Reports the deliveries answered 401 for their signature or timestamp to onError, at most once
 * a minute, with how many came since the last report. A forgery gives them, but so does a
 * receiver whose key is wrong (another environment's, a rotated one, a local sandbox's from
 * before its restart) or whose clock is off, and then every authentic event is lost after its
 * retries with nothing on the partner's side. Missing or malformed headers (scanners) are not
 * counted. Returns the function the verify stage calls with each rejection's outcome.
 */
export function createRejectedSignatureReport(report: (error: unknown, context: WebhookErrorContext) => void, now: () => number): (outcome: ReceiverOutcome, error: unknown) => void {
  let reportedAt: number | undefined;
  const counts = new Map<ReceiverOutcome, number>();
  return (outcome, error) => {
    if (KEY_OR_CLOCK[outcome] === undefined) return;
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    const at = now();
    if (reportedAt !== undefined && at - reportedAt < REPORT_EVERY_MS) return;
    const what = [...counts].map(([each, count]) => `${count} ${count === 1 ? 'delivery' : 'deliveries'} with ${KEY_OR_CLOCK[each]!}`).join(', ');
    const since = reportedAt === undefined ? 'since this receiver started' : `in the last ${Math.round((at - reportedAt) / 1000)} s`;
    reportedAt = at;
    counts.clear();
    report(new WebhookReceiverError('signatures_rejected',
      `Answered 401 ${since}: ${what}. Forgeries are refused either way; but if these come from the service, its events are lost after their retries: ` +
        'check the public key (the one GET {webhooks_url}/api/v1/public-key serves now: the service may have rotated it, another environment has its own, and a local sandbox makes a new one at each start unless given a fixed one; createPublicKeyProvider({ url }) fetches it and follows rotations) ' +
        "and, for timestamps, this server's clock. Reported at most once a minute.", { cause: error }),
    { outcome, afterReply: false });
  };
}
