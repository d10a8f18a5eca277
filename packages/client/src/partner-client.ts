import openapiFetchDefault, { type Client } from 'openapi-fetch';
import type { WebhookPublicKey } from '@capi/openapi-types';
import { getDailyLimit, setDailyLimit, type DailyLimit, type DailyLimitContext, type PendingDailyLimit, type SetDailyLimitParams, type WaitForLimitSyncOptions } from './daily-limit.js';
import { DEFAULT_MAX_DAILY_LIMIT_CENTS } from './daily-limit-input.js';
import { describeValue } from './describe-value.js';
import { InvalidArgumentError, loadChunk } from './errors.js';
import { assertFunctionOptions } from './function-options.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { resolveRetryPolicy, type RetriesOption } from './retry-policy.js';
import type { SignInResult, SignInWithEthereumParams } from './sign-in.js';
import { TokenManager } from './token-manager.js';
import { createTransport, type FetchFunction, type RequestOptions, type RetryEvent } from './transport.js';
import type { RawPaths } from './raw-paths.js';

/**
 * Options of {@link createPartnerClient}.
 *
 * @example
 * const options: PartnerClientOptions = { baseUrl: 'https://api.example.com', timeoutMs: 10_000, retries: 3 };
 */
export interface PartnerClientOptions {
  /** The core user API base, e.g. the sandbox or production deployment's address. */
  baseUrl: string;
  /** The webhook key service's address, needed by `getWebhookPublicKey`. */
  webhooksUrl?: string | undefined;
  /**
   * A fetch implementation, called as `fetch(url, init)`; default the global `fetch`. The
   * timeout and the caller's signal hold even when it ignores `init.signal`.
   */
  fetch?: FetchFunction | undefined;
  /** Holds and renews the tokens; default a TokenManager that can only store them. */
  tokenManager?: TokenManager | undefined;
  /** Time allowed for each request attempt, to the last byte. Default 30 000 ms. */
  timeoutMs?: number | undefined;
  /** Retries of idempotent requests (GET, HEAD, OPTIONS) on connection errors, timeouts, 408, 429, 500, 502, 503 and 504. Default 2. */
  retries?: RetriesOption | undefined;
  /** The highest daily limit `setDailyLimit` accepts, in cents: the maximum agreed with the platform at onboarding when it is not the service's 1,000,000 (higher or lower). Default 1,000,000. */
  maxDailyLimitCents?: number | undefined;
  /** Called before each retry, e.g. for logging. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
}

/**
 * The client returned by {@link createPartnerClient}.
 *
 * @example
 * const client: PartnerClient = createPartnerClient({ baseUrl });
 * const { amount } = await client.getDailyLimit();
 */
export interface PartnerClient {
  /**
   * The openapi-fetch client: every path of the spec typed; does not throw on error statuses.
   * Open enums (e.g. the onboarding status) are typed `string` here, see {@link RawPaths}.
   */
  readonly raw: Client<RawPaths>;
  /** The TokenManager holding this client's tokens. */
  readonly tokenManager: TokenManager;
  /** Signs in with a wallet (SIWE) and stores the tokens. Its code is a lazily loaded chunk: when that cannot load (a deploy replaced it while the page was open, or the network is down), `PartnerClientError` `client_code_unavailable` (reload the page). */
  signInWithEthereum(params: SignInWithEthereumParams): Promise<SignInResult>;
  /** Reads the daily spending limit; `currency` is `USD` when the service leaves it out. Newer generation only: an older-generation deployment answers `NotFoundError` (404), its users set the limit onchain. */
  getDailyLimit(options?: RequestOptions): Promise<DailyLimit>;
  /** Sets the daily spending limit; checked locally first, never retried unless `options.retries` is given. Answers it `pending` (reference 3.1). Newer generation only, as `getDailyLimit`. */
  setDailyLimit(params: SetDailyLimitParams, options?: RequestOptions): Promise<PendingDailyLimit>;
  /** Polls until the limit's `syncStatus` is `synced` (with `amount`, until that amount is the one synced: `LimitSupersededError` when another is). Newer generation only, as `getDailyLimit`. A lazily loaded chunk, as `signInWithEthereum` (`client_code_unavailable`). */
  waitForLimitSync(options?: WaitForLimitSyncOptions): Promise<DailyLimit>;
  /** Fetches the webhook signing key from `webhooksUrl`. A lazily loaded chunk, as `signInWithEthereum` (`client_code_unavailable`). */
  getWebhookPublicKey(options?: RequestOptions): Promise<WebhookPublicKey>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Creates a client of the partner interface: typed requests, SIWE sign-in, token renewal,
 * typed errors, retries and timeouts.
 *
 * @example
 * const client = createPartnerClient({ baseUrl: 'https://api.sandbox.example.com' });
 * await client.signInWithEthereum({ ...signerFromViemAccount(account), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 });
 * await client.setDailyLimit({ amount: 50_000 });
 * await client.waitForLimitSync();
 */
export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', 'createPartnerClient needs an options object with at least baseUrl.', 'invalid_option');
  }
  const baseUrl = withoutTrailingSlash(assertHttpUrl(options.baseUrl, 'baseUrl'));
  const webhooksUrl = options.webhooksUrl === undefined ? undefined : withoutTrailingSlash(assertHttpUrl(options.webhooksUrl, 'webhooksUrl'));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  assertMilliseconds(timeoutMs, 'timeoutMs', { allowInfinity: true });
  const maxDailyLimitCents = options.maxDailyLimitCents ?? DEFAULT_MAX_DAILY_LIMIT_CENTS;
  if (!Number.isSafeInteger(maxDailyLimitCents) || maxDailyLimitCents <= 0) {
    throw new InvalidArgumentError('maxDailyLimitCents', `maxDailyLimitCents must be a positive whole number of cents, got ${describeValue(options.maxDailyLimitCents)}.`, 'invalid_option');
  }
  assertFunctionOptions(options, ['fetch', 'onRetry'], '');
  const tokenManager = options.tokenManager ?? new TokenManager();
  if (typeof tokenManager.getToken !== 'function' || typeof tokenManager.renewAfterUnauthorized !== 'function') {
    throw new InvalidArgumentError('tokenManager', 'tokenManager must be a TokenManager (createTokenManager() makes one).', 'invalid_option');
  }
  // Looked up per call, so that a fetch installed later (test tooling, polyfills) is used.
  const fetchOnce: FetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  // The global fetch (undici, browsers) stops on its signal; any other is raced against the timeout.
  const fetchHonoursSignal = options.fetch === undefined || options.fetch === globalThis.fetch;
  const transport = createTransport({ fetch: fetchOnce, fetchHonoursSignal, tokenManager, timeoutMs, retryPolicy: resolveRetryPolicy(options.retries), onRetry: options.onRetry });
  // The client's own methods send through the transport directly: the same behaviour as raw,
  // without building a Request and a Response per call (a large part of a call's cost).
  const raw = createOpenapiFetchClient<RawPaths>({ baseUrl, fetch: transport.fetch });
  const serviceContext = { transport, baseUrl };
  const limitContext: DailyLimitContext = { ...serviceContext, maxDailyLimitCents, tokenManager };

  return {
    raw,
    tokenManager,
    // Sign-in (and viem with it) is loaded on first use, so apps that only read limits never download it.
    // A chunk that cannot load (a deploy replaced it) is a PartnerClientError client_code_unavailable.
    signInWithEthereum: async (params) => (await loadChunk(() => import('./sign-in.js'), 'signInWithEthereum')).signInWithEthereum({ ...serviceContext, tokenManager }, params),
    getDailyLimit: (callOptions) => getDailyLimit(limitContext, callOptions),
    setDailyLimit: (params, callOptions) => setDailyLimit(limitContext, params, callOptions),
    waitForLimitSync: async (waitOptions) => (await loadChunk(() => import('./limit-sync.js'), 'waitForLimitSync')).waitForLimitSync(limitContext, waitOptions),
    // A chunk of its own, like the sign-in: a partner's front end never reads the webhook key.
    getWebhookPublicKey: async (callOptions) => (await loadChunk(() => import('./webhook-public-key.js'), 'getWebhookPublicKey')).getWebhookPublicKey(serviceContext, webhooksUrl, callOptions),
  };
}

function assertHttpUrl(value: unknown, argument: string): string {
  if (typeof value !== 'string' || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new InvalidArgumentError(argument, `${argument} must be an absolute http(s) URL such as "https://api.example.com", got ${JSON.stringify(value)}.`, 'invalid_base_url');
  }
  return value;
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

// openapi-fetch's CommonJS build sets `exports.default` without `__esModule`, so from our CJS
// build its default import is the exports object and the function sits one level deeper.
const createOpenapiFetchClient: typeof openapiFetchDefault =
  (openapiFetchDefault as unknown as { default?: typeof openapiFetchDefault }).default ?? openapiFetchDefault;
