// The key behind {webhooks_url}/api/v1/public-key, fetched once and shared: concurrent
// callers wait on one request, and refetches are rate-limited so that forged webhooks
// (which fail verification and ask for a refetch) cannot turn into a flood of key requests.
import { describeValue } from './describe-value.js';
import { PublicKeyFetchError, type PublicKeyFetchErrorCode } from './errors.js';
import { importPublicKeyWithWebCrypto } from './import-key.js';
import type { WebCryptoKey } from './web-crypto-key.js';
import { numberOption, requireOptionsObject } from './options-check.js';

/**
 * Where the webhook public key comes from; `verifyWebhookSignature` accepts one as `publicKey`.
 *
 * @example
 * ```ts
 * const fromEnvironment: PublicKeyProvider = {
 *   get: () => importPublicKey(process.env.CAPI_WEBHOOK_PUBLIC_KEY!),
 *   refresh: () => importPublicKey(process.env.CAPI_WEBHOOK_PUBLIC_KEY!),
 * };
 * ```
 */
export interface PublicKeyProvider {
  /** The current key: cached, fetched when there is none or it is older than the cache TTL. */
  get(): Promise<WebCryptoKey>;
  /** Refetches the key, unless a fetch started less than `minRefreshIntervalMs` ago. */
  refresh(): Promise<WebCryptoKey>;
  /**
   * The last key fetched, however old, or `undefined` before the first. When `get()` fails
   * (the key endpoint is down), `verifyWebhookSignature` verifies with this key instead, so
   * that an outage of the endpoint does not stop verification. Optional for your own providers.
   */
  lastKey?(): WebCryptoKey | undefined;
  /**
   * The key this provider held before {@link lastKey}, for {@link PREVIOUS_KEY_GRACE_MS} (5
   * minutes) after it fetched that one; `undefined` before a rotation and after those 5 minutes.
   * Never used to verify a delivery: `@capi/webhook-receiver` uses it only to recognise an
   * attempt the service signed just before rotating its key that arrives after the new key was
   * fetched (answered 401 all the same), so that its retry, signed with the new key, keeps the
   * attempt's place among its subject's events. Optional for your own providers.
   */
  previousKey?(): WebCryptoKey | undefined;
}

/**
 * How long, in ms, a provider's {@link PublicKeyProvider.previousKey} is kept after the key
 * rotated: 5 minutes, the timestamp tolerance receivers use by default (an attempt signed before
 * the rotation that arrives later than that is refused for its timestamp anyway).
 *
 * @example
 * ```ts
 * const stillPrevious = Date.now() - rotatedAt < PREVIOUS_KEY_GRACE_MS;
 * ```
 */
export const PREVIOUS_KEY_GRACE_MS = 300_000;

/**
 * Options of {@link createPublicKeyProvider}.
 *
 * @example
 * ```ts
 * const options: PublicKeyProviderOptions = { url: `${webhooksUrl}/api/v1/public-key`, cacheTtlMs: 600_000 };
 * ```
 */
export interface PublicKeyProviderOptions {
  /** The endpoint's full URL: `{webhooks_url}/api/v1/public-key`. */
  url: string | URL;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
  /** How long a fetched key is used before it is fetched again (default 1 hour). */
  cacheTtlMs?: number;
  /**
   * The least time between two fetches triggered by `refresh()` (default 15 seconds: a quarter of
   * the service's first wait before a retry, so that a receiver shown a delivery signed with a
   * rotated key fetches that key well before the delivery's retry comes).
   */
  minRefreshIntervalMs?: number;
  /** How long one fetch may take, answer included (default 10 seconds). */
  timeoutMs?: number;
  /** The clock in milliseconds (default `Date.now`); injectable for tests. */
  now?: () => number;
}

function endpointUrl(url: unknown): string {
  try {
    const { href, protocol } = new URL(url as string);
    if (/^https?:$/.test(protocol)) return href;
  } catch {
    // reported below with the value that was passed
  }
  throw new TypeError(`url must be the absolute http(s) URL {webhooks_url}/api/v1/public-key; got ${JSON.stringify(String(url))}.`);
}

async function fetchPublicKeyText(url: string, fetchImpl: typeof fetch, timeoutMs: number): Promise<string> {
  const failure = (code: PublicKeyFetchErrorCode, what: string, details?: { status?: number; cause?: unknown }) =>
    new PublicKeyFetchError(code, `GET ${url} ${what}`, { url, ...details });
  let response: Response;
  let text: string;
  const signal = AbortSignal.timeout(timeoutMs);
  // Raced as well as passed: a fetch that ignores the signal (a wrapper that drops init) would
  // otherwise leave this request, and every get() waiting on it, pending for good.
  const expired = new Promise<never>((_, reject) => { signal.onabort = () => reject(signal.reason); });
  try {
    response = await Promise.race([fetchImpl(url, { headers: { accept: 'application/json' }, signal }), expired]);
    text = await Promise.race([response.text(), expired]);
  } catch (cause) {
    const { name, cause: reason } = (cause ?? {}) as { name?: string; cause?: { code?: string } };
    throw name === 'TimeoutError' || name === 'AbortError'
      ? failure('timeout', `gave no answer within timeoutMs (${timeoutMs} ms).`, { cause })
      : failure('network_error', `failed (${reason?.code ?? String(cause)}): check the URL and the network.`, { cause });
  }
  const { status } = response;
  if (!response.ok) throw failure('http_error', `answered HTTP ${status}; is url {webhooks_url}/api/v1/public-key?`, { status });
  let answer: { success?: unknown; publicKey?: unknown; message?: unknown; error?: unknown } | undefined;
  try {
    answer = JSON.parse(text);
  } catch {
    // described below
  }
  if (answer?.success === false) {
    const reason = answer.message ?? answer.error;
    throw failure('key_unavailable', `answered success: false${typeof reason === 'string' ? ` (${reason})` : ''}: no key for now.`, { status });
  }
  if (answer?.success === true && typeof answer.publicKey === 'string') return answer.publicKey;
  const saw =
    answer === undefined
      ? `a body that is not JSON (${JSON.stringify(text.slice(0, 40))})`
      : typeof answer !== 'object' || !answer || Array.isArray(answer)
        ? describeValue(answer)
        : `the fields [${Object.keys(answer)}] with success ${JSON.stringify(answer.success)}`;
  throw failure('malformed_response', `answered ${saw}, not { success: true, publicKey }.`, { status });
}

/**
 * A cached, single-flight, rate-limited source of the webhook public key.
 *
 * @example
 * ```ts
 * const publicKey = createPublicKeyProvider({ url: 'https://webhooks.example.com/api/v1/public-key' });
 * await verifyWebhookSignature({ rawBody, timestamp, signature, publicKey });
 * ```
 */
export function createPublicKeyProvider(options: PublicKeyProviderOptions): PublicKeyProvider {
  requireOptionsObject(options, 'url: "{webhooks_url}/api/v1/public-key"');
  const url = endpointUrl(options.url);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError(`Pass options.fetch, a fetch function (needed where there is no global fetch); got ${describeValue(fetchImpl)}.`);
  const cacheTtlMs = numberOption(options.cacheTtlMs, 3_600_000, 'cacheTtlMs');
  const minRefreshIntervalMs = numberOption(options.minRefreshIntervalMs, 15_000, 'minRefreshIntervalMs');
  // Whole milliseconds up to what a timer holds (about 24.8 days): AbortSignal.timeout refuses a
  // fraction or Infinity, and fires at once beyond 2^31 - 1.
  const timeoutMs = Math.min(Math.ceil(numberOption(options.timeoutMs, 10_000, 'timeoutMs', false)), 2 ** 31 - 1);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('now must be a function returning milliseconds, like Date.now.');

  let key: CryptoKey | undefined;
  let keyText: string | undefined;
  // The key before `key`, and when `key` replaced it (see previousKey).
  let previous: { key: CryptoKey; replacedAt: number } | undefined;
  let fetchedAt = 0;
  let lastFetchStartedAt = -Infinity;
  let lastFailure: { at: number; error: unknown } | undefined;
  let inFlight: Promise<CryptoKey> | undefined;

  const fetchKey = async (): Promise<CryptoKey> => {
    lastFetchStartedAt = now();
    try {
      const text = await fetchPublicKeyText(url, fetchImpl, timeoutMs);
      // Same text, same CryptoKey: callers compare identities to see whether the key rotated.
      if (text !== keyText) {
        const fetched = await importPublicKeyWithWebCrypto(text).catch((cause: Error) => {
          throw new PublicKeyFetchError('malformed_response', `GET ${url} answered an unusable publicKey. ${cause.message}`, { url, status: 200, cause });
        });
        if (key !== undefined) previous = { key, replacedAt: now() };
        key = fetched;
        keyText = text;
      }
      fetchedAt = now();
      lastFailure = undefined;
      return key!;
    } catch (error) {
      lastFailure = { at: now(), error };
      throw error;
    } finally {
      inFlight = undefined;
    }
  };
  const load = (): Promise<CryptoKey> => (inFlight ??= fetchKey());

  return {
    async get() {
      if (key && now() - fetchedAt < cacheTtlMs) return key;
      // While the endpoint is failing and a key is at hand (which verification falls back on),
      // the failure is retried once per minRefreshIntervalMs, not by every delivery, each of
      // which would wait up to timeoutMs for it.
      if (key && lastFailure && now() - lastFailure.at < minRefreshIntervalMs) throw lastFailure.error;
      return load();
    },
    async refresh() {
      return inFlight ?? (key && now() - lastFetchStartedAt < minRefreshIntervalMs ? key : load());
    },
    lastKey: () => key,
    previousKey: () => (previous !== undefined && now() - previous.replacedAt < PREVIOUS_KEY_GRACE_MS ? previous.key : undefined),
  };
}
