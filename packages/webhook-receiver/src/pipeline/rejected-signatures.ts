import { WebhookReceiverError } from '../errors.js';
import type { WebhookErrorContext } from '../receiver-types.js';
import type { ReceiverOutcome } from '../status-table.js';

/** What each 401 that a wrong key or clock also gives says, in the report. */
const KEY_OR_CLOCK: Partial<Record<ReceiverOutcome, string>> = {
  invalid_signature: 'a signature that does not verify with the configured public key',
  timestamp_too_old: 'a timestamp older than toleranceSeconds',
  timestamp_in_future: 'a timestamp further ahead than toleranceSeconds',
};

/** What each 401 that a proxy dropping or rewriting the headers also gives says (scanners give them too). */
const HEADERS: Partial<Record<ReceiverOutcome, string>> = {
  missing_signature: 'no X-Webhook-Signature header',
  missing_timestamp: 'no X-Webhook-Timestamp header',
  malformed_signature: 'an X-Webhook-Signature that is not the base64 of a 64-byte signature',
  malformed_timestamp: 'an X-Webhook-Timestamp that is not Unix seconds',
};

const CHECK_THE_KEY = 'check the public key (the one GET {webhooks_url}/api/v1/public-key serves now: the service may have rotated it, another environment has its own, and a local sandbox makes a new one at each start unless given a fixed one; createPublicKeyProvider({ url }) fetches it and follows rotations) ' +
  "and, for timestamps, this server's clock";
const CLOCK = new Set<ReceiverOutcome>(['timestamp_too_old', 'timestamp_in_future']);
const CHECK_THE_CLOCK = "check this server's clock (NTP): the service signs each retry with a new timestamp, so while the clock is off every attempt is refused alike (a replayed old delivery gives these too)";
const CHECK_THE_HEADERS = 'check that nothing in front of this receiver (a proxy, a load balancer, a middleware) drops or rewrites the X-Webhook-Timestamp and X-Webhook-Signature headers';

/** At most one report in this many ms. */
const REPORT_EVERY_MS = 60_000;

/**
 * Reports the deliveries answered 401 for their signature, their timestamp or those headers to
 * onError, at most once a minute, with how many came since the last report. A forgery gives
 * them, but so does a receiver whose key is wrong (another environment's, a rotated one, a local
 * sandbox's from before its restart) or whose clock is off, or a proxy in front of it that drops
 * the headers, and then every authentic event is lost after its retries with nothing on the
 * partner's side. (Scanners that post without the headers are counted too: at most one report a
 * minute is the price of hearing about such a proxy.) Returns the function the verify stage
 * calls with each rejection's outcome.
 */
export function createRejectedSignatureReport(report: (error: unknown, context: WebhookErrorContext) => void, now: () => number): (outcome: ReceiverOutcome, error: unknown) => void {
  let reportedAt: number | undefined;
  const counts = new Map<ReceiverOutcome, number>();
  // The last timestamp refusal's own words ("X-Webhook-Timestamp is 360s old, beyond the 300s
  // tolerance"): how far off the clock is, for the report's first line rather than its cause.
  let lastClockRefusal: string | undefined;
  // A signature that did not verify with the provider's key, whose refetch then failed: the key
  // endpoint's own words, since a rotation the receiver could not fetch looks like a wrong key.
  let lastKeyFetchFailure: string | undefined;
  return (outcome, error) => {
    if (KEY_OR_CLOCK[outcome] === undefined && HEADERS[outcome] === undefined) return;
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    if (CLOCK.has(outcome) && error instanceof Error) lastClockRefusal = error.message.replace(/: a replay, or a wrong clock on this server\.$/, '').replace(/\.$/, '');
    const fetchFailure = outcome === 'invalid_signature' && error instanceof Error ? error.cause : undefined;
    if (fetchFailure instanceof Error && fetchFailure.name === 'PublicKeyFetchError') lastKeyFetchFailure = fetchFailure.message.replace(/\.$/, '');
    const at = now();
    if (reportedAt !== undefined && at - reportedAt < REPORT_EVERY_MS) return;
    const what = [...counts].map(([each, count]) => `${count} ${count === 1 ? 'delivery' : 'deliveries'} with ${KEY_OR_CLOCK[each] ?? HEADERS[each]!}`).join(', ');
    const kinds = [...counts.keys()];
    const keyOrClock = kinds.some((each) => KEY_OR_CLOCK[each] !== undefined);
    const headers = kinds.some((each) => HEADERS[each] !== undefined);
    const since = reportedAt === undefined ? 'since this receiver started' : `in the last ${Math.round((at - reportedAt) / 1000)} s`;
    reportedAt = at;
    counts.clear();
    // Timestamps alone: the key is fine (those deliveries were refused before their signature was checked), the clock is the suspect.
    const clockOnly = kinds.filter((each) => KEY_OR_CLOCK[each] !== undefined).every((each) => CLOCK.has(each));
    const keyAdvice = clockOnly
      ? `${CHECK_THE_CLOCK}${lastClockRefusal === undefined ? '' : ` (the last one: ${lastClockRefusal})`}`
      : lastKeyFetchFailure === undefined
        ? CHECK_THE_KEY
        : `check the key endpoint first: after a signature did not verify, refetching the public key failed (the last time: ${lastKeyFetchFailure}), so a key the service rotated to has not reached this receiver; then ${CHECK_THE_KEY}`;
    const check = keyOrClock && headers ? `${keyAdvice}; and for the headers, ${CHECK_THE_HEADERS}` : keyOrClock ? keyAdvice : CHECK_THE_HEADERS;
    lastClockRefusal = undefined;
    lastKeyFetchFailure = undefined;
    report(new WebhookReceiverError('signatures_rejected',
      `Answered 401 ${since}: ${what}. ${headers ? 'Forgeries and scanners' : 'Forgeries'} are refused either way; but if these come from the service, its events are lost after their retries: ` +
        `${check}. Reported at most once a minute.`, { cause: error }),
    { outcome, afterReply: false });
  };
}
