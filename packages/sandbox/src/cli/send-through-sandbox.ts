import type { Delivery } from '../webhooks/delivery-scheduler.js';
import { describeAttemptAnswer } from '../webhooks/receiver-answer.js';
import { SANDBOX_EVENT_TYPES } from '../webhooks/sample-event-data.js';
import { CliUsageError } from './cli-usage-error.js';
import type { CliStreams } from './run-cli.js';

/** Where `send-event --sandbox` looks without a URL: what `capi-sandbox serve` listens on by default. */
export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:4010';

/** How long a control request to the sandbox may take before it counts as not answering. */
const CONTROL_TIMEOUT_MS = 5_000;
/** How often the delivery log is read while the first attempt is in flight. */
const POLL_INTERVAL_MS = 50;

/**
 * `send-event --sandbox` found no running sandbox at the URL (nothing listens, or what answers
 * is not a sandbox's core base URL). Exit code 2, like every unusable command line.
 */
export class SandboxUnreachableError extends CliUsageError {
  override readonly name = 'SandboxUnreachableError';
  readonly code = 'sandbox_unreachable';
}

/**
 * `--sandbox` takes an optional URL, which node:util's parseArgs cannot express: a bare
 * `--sandbox` (followed by nothing, another flag or the event type) becomes
 * `--sandbox=<DEFAULT_SANDBOX_URL>`. A word after it is its URL only when it has a scheme
 * (`http:`, or `localhost:` as in `localhost:4010`, refused later with advice): an event kind
 * the SDK does not know (`--unknown-event-type`) has none.
 */
export function expandSandboxFlag(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    if (arg !== '--sandbox') return arg;
    const next = args[index + 1];
    const takesNext =
      next !== undefined && !next.startsWith('-') && !(SANDBOX_EVENT_TYPES as readonly string[]).includes(next) && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(next);
    return takesNext ? arg : `--sandbox=${DEFAULT_SANDBOX_URL}`;
  });
}

/** The sandbox's base URL from `--sandbox`, without a trailing slash. */
export function parseSandboxUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliUsageError(`--sandbox takes the base URL that "capi-sandbox serve" prints, such as ${DEFAULT_SANDBOX_URL}; got "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliUsageError(`--sandbox takes an http(s) base URL, such as ${DEFAULT_SANDBOX_URL}; got "${value}".`);
  }
  return url.href.replace(/\/+$/, '');
}

interface SandboxAnswer {
  status: number;
  body: unknown;
}

async function callSandbox(sandboxUrl: string, method: string, path: string, body?: unknown): Promise<SandboxAnswer> {
  let response: Response;
  try {
    response = await fetch(sandboxUrl + path, {
      method,
      signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new SandboxUnreachableError(
      `No capi sandbox answers at ${sandboxUrl} (${cause}); start one with "capi-sandbox serve" (port 4010 by default) or pass its base URL: --sandbox http://127.0.0.1:PORT.`,
    );
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: text };
  }
}

function isSandboxDescription(body: unknown): body is { publicKey: string; webhookEndpoints: string[] } {
  const description = body as { publicKey?: unknown; webhookEndpoints?: unknown } | null;
  return typeof description === 'object' && description !== null && typeof description.publicKey === 'string' && Array.isArray(description.webhookEndpoints);
}

function refusal(body: unknown): string {
  const error = body as { message?: unknown; code?: unknown } | null;
  return typeof error?.message === 'string' ? error.message : JSON.stringify(body);
}

// Every attempt made so far (a retry may already have run under a large time scale), then
// what happens next.
function describeDelivery(delivery: Delivery, sandboxUrl: string): string {
  const [first, ...retries] = delivery.attempts;
  const answers = [describeAttemptAnswer(first!), ...retries.map((attempt) => `then attempt ${attempt.attempt}: ${describeAttemptAnswer(attempt)}`)].join(', ');
  const line = `${delivery.eventType} -> ${delivery.url}: ${answers}`;
  if (delivery.state === 'succeeded') return `${line} (signed by the sandbox at ${sandboxUrl}, delivery ${delivery.id})\n`;
  const next =
    delivery.state === 'failed'
      ? 'the sandbox gave up on it'
      : `the sandbox retries it${delivery.nextAttemptAt ? ` at ${delivery.nextAttemptAt}` : ''} (attempt ${delivery.attempts.length + 1} of 4)`;
  return `${line}; ${next}: ${sandboxUrl}/__sandbox/deliveries?id=${delivery.id}\n`;
}

/**
 * `send-event TYPE --sandbox [URL]`: asks a running sandbox to sign the event with its key
 * and deliver it (`POST /__sandbox/events`), to `--to` or to its configured endpoints, with
 * the live retry schedule; prints the outcome of each first attempt (and of any retry already
 * made). Exit code 0 when every delivery has succeeded by then, 1 otherwise (the sandbox
 * keeps retrying), 2 when no sandbox answers or it refuses the event.
 */
export async function sendEventThroughSandbox(
  input: { sandboxUrl: string; eventType: string; to: string[]; data?: unknown; userId?: string; unknownEventType?: boolean; allowUnknownFields?: boolean; unchecked?: boolean; duplicate?: boolean },
  { out }: CliStreams,
): Promise<number> {
  const { sandboxUrl } = input;
  const description = await callSandbox(sandboxUrl, 'GET', '/__sandbox');
  if (description.status !== 200 || !isSandboxDescription(description.body)) {
    throw new SandboxUnreachableError(
      `${sandboxUrl} is not a capi sandbox's base URL (GET /__sandbox answered HTTP ${description.status}); pass the "base URL" that "capi-sandbox serve" prints, not its webhooks URL.`,
    );
  }
  if (input.to.length === 0 && description.body.webhookEndpoints.length === 0) {
    throw new CliUsageError(
      `The sandbox at ${sandboxUrl} has no webhook endpoints; pass --to URL, or start it with --webhook-url URL (or add one: POST ${sandboxUrl}/__sandbox/webhook-endpoints).`,
    );
  }
  const sent = await callSandbox(sandboxUrl, 'POST', '/__sandbox/events', {
    eventType: input.eventType,
    ...(input.data !== undefined ? { data: input.data } : {}),
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
    ...(input.to.length > 0 ? { to: input.to } : {}),
    ...(input.unknownEventType === true ? { unknownEventType: true } : {}),
    ...(input.allowUnknownFields === true ? { allowUnknownFields: true } : {}),
    ...(input.unchecked === true ? { unchecked: true } : {}),
    ...(input.duplicate === true ? { duplicate: true } : {}),
  });
  if (sent.status !== 202) throw new CliUsageError(`The sandbox at ${sandboxUrl} refused the event (HTTP ${sent.status}): ${refusal(sent.body)}`);
  const started = (sent.body as { deliveries: Delivery[] }).deliveries;
  let allSucceeded = true;
  for (const { id } of started) {
    let delivery: Delivery | undefined;
    // The sandbox bounds the first attempt by its delivery timeout (30 s by default).
    for (;;) {
      const log = await callSandbox(sandboxUrl, 'GET', `/__sandbox/deliveries?id=${encodeURIComponent(id)}`);
      delivery = (log.body as { deliveries?: Delivery[] } | null)?.deliveries?.[0];
      if (delivery === undefined) {
        out.write(`${input.eventType}: delivery ${id} is no longer in the sandbox's log (cleared by DELETE /__sandbox/deliveries?).\n`);
        break;
      }
      if (delivery.attempts.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
    if (delivery === undefined || delivery.state !== 'succeeded') allSucceeded = false;
    if (delivery !== undefined) out.write(describeDelivery(delivery, sandboxUrl));
  }
  return allSucceeded ? 0 : 1;
}
