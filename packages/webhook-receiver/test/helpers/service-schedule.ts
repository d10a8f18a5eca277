import type { FakeService } from './service.js';

/**
 * The service's delivery schedule (reference 6.3), scaled: an attempt answered other than 2xx,
 * or not answered at all, is retried `minRetryDelayMs` times 1, 5 and 15 after it failed (1, 5
 * and 15 minutes for real), 4 attempts in all. Every attempt is signed anew, with the time it
 * is sent (as the service re-signs a retry).
 */
export const RETRY_WAIT_FACTORS = [1, 5, 15] as const;
export const MAX_ATTEMPTS = 4;

/** One attempt as the service saw it: the status and code, or no answer (`status` undefined: the connection failed). */
export interface AttemptResult {
  readonly attempt: number;
  readonly status: number | undefined;
  readonly code: string | undefined;
}

export const acknowledged = (result: AttemptResult): boolean => result.status !== undefined && result.status >= 200 && result.status < 300;

/** `200 processed`, `409 duplicate_in_progress`, `no answer`: for assertion messages. */
export const describeAttempt = (result: AttemptResult): string => (result.status === undefined ? 'no answer' : `${result.status} ${result.code}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Sends one attempt of `body` to `url`, signed now. */
export async function sendAttempt(service: FakeService, url: string, body: string, attempt: number): Promise<AttemptResult> {
  try {
    const { status, body: reply } = await service.deliver(url, body);
    return { attempt, status, code: reply.code };
  } catch {
    // fetch failed: the receiver died with the request, or refused the connection.
    return { attempt, status: undefined, code: undefined };
  }
}

/**
 * Delivers one event as the service does: the first attempt now, each retry after the wait of
 * its step, until an attempt is answered 2xx or the 4th fails. `urlFor(attempt)` says where
 * each attempt goes (a load balancer's choice).
 */
export async function deliverOnSchedule(
  service: FakeService,
  body: string,
  { minRetryDelayMs, urlFor }: { minRetryDelayMs: number; urlFor: (attempt: number) => string },
): Promise<AttemptResult[]> {
  const results: AttemptResult[] = [];
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await sleep(minRetryDelayMs * RETRY_WAIT_FACTORS[attempt - 2]!);
    const result = await sendAttempt(service, urlFor(attempt), body, attempt);
    results.push(result);
    if (acknowledged(result)) break;
  }
  return results;
}

/**
 * The retries of events whose attempt `nextAttempt - 1` all failed at `failedAt` (the same
 * moment: the receiver that had them died), in rounds, as the service sends them: each round
 * comes its step's wait after the last failure of the round before, and sends the events still
 * unacknowledged in their order, `staggerMs` apart (so that the first is first in the
 * receiver's line), to `url`. Returns each event's attempts, in the order of `bodies`.
 */
export async function retryInRounds(
  service: FakeService,
  bodies: readonly string[],
  { url, nextAttempt, failedAt, minRetryDelayMs, staggerMs }: { url: string; nextAttempt: number; failedAt: number; minRetryDelayMs: number; staggerMs: number },
): Promise<AttemptResult[][]> {
  const results: AttemptResult[][] = bodies.map(() => []);
  let lastFailure = failedAt;
  for (let attempt = nextAttempt; attempt <= MAX_ATTEMPTS; attempt++) {
    const open = bodies.map((_, index) => index).filter((index) => !results[index]!.some(acknowledged));
    if (open.length === 0) break;
    await sleep(lastFailure + minRetryDelayMs * RETRY_WAIT_FACTORS[attempt - 2]! - Date.now());
    await Promise.all(open.map(async (index, order) => {
      await sleep(order * staggerMs);
      results[index]!.push(await sendAttempt(service, url, bodies[index]!, attempt));
    }));
    lastFailure = Date.now();
  }
  return results;
}
