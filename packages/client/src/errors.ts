import type { DailyLimit } from './daily-limit.js';
import { readErrorBody } from './error-body.js';
import { redactTokens, redactTokensDeep } from './redact-tokens.js';
import { parseRetryAfter } from './retry-after.js';

/**
 * Options shared by every error of this package. `Code` is the codes the error's class can
 * carry (`ConnectionErrorCode` for a `ConnectionError`): a code the class never carries does not
 * compile.
 *
 * @example
 * new ConnectionError('Could not reach the service.', { code: 'connection_failed', cause });
 */
export interface PartnerClientErrorOptions<Code extends string = string> {
  /** Machine-readable reason, stable across versions. */
  code: Code;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

/**
 * The `code` of an error thrown as a `PartnerClientError` itself, not as one of its subclasses:
 * `client_code_unavailable`, a lazily loaded chunk of this package could not load. (A
 * `PartnerClientError`'s `code` stays `string`: its subclasses carry their own codes, and an
 * `ApiError` the service's.)
 *
 * @example
 * const advice: Record<PartnerClientErrorOwnCode, string> = { client_code_unavailable: 'Reload the page.' };
 */
export type PartnerClientErrorOwnCode = 'client_code_unavailable';

/**
 * The `code` of an {@link InvalidArgumentError}: which argument or option was refused, and why.
 *
 * @example
 * if (error instanceof InvalidArgumentError && error.code === 'amount_out_of_range') showMaximum();
 */
export type InvalidArgumentErrorCode =
  // Client and call options (createPartnerClient, the methods, the onboarding functions, the waits, TokenManager).
  | 'invalid_option'
  | 'invalid_base_url'
  | 'missing_webhooks_url'
  // Sign-in: its fields, its signer, its signature, one sign-in at a time.
  | 'invalid_address'
  | 'invalid_signer'
  | 'invalid_domain'
  | 'invalid_uri'
  | 'invalid_chain_id'
  | 'invalid_statement'
  | 'invalid_siwe_field'
  | 'domain_blocked_by_waf'
  | 'ttl_out_of_range'
  | 'invalid_signature'
  | 'sign_in_in_progress'
  // Tokens given to the TokenManager (setTokens, the tokens option, what refresh resolved to).
  | 'invalid_tokens'
  // setDailyLimit.
  | 'amount_not_integer'
  | 'amount_out_of_range'
  | 'currency_not_supported'
  // The onboarding functions (@capi/client/onboarding) and readTokenClaims.
  | 'invalid_client'
  | 'invalid_body'
  | 'invalid_email'
  | 'invalid_phone'
  | 'invalid_otp'
  | 'invalid_answers'
  | 'invalid_target'
  | 'invalid_token';

/**
 * The `code` of an {@link UnexpectedResponseError}: which 2xx answer the client could not use.
 *
 * @example
 * if (error instanceof UnexpectedResponseError && error.code === 'unexpected_limit_body') checkBaseUrl();
 */
export type UnexpectedResponseErrorCode =
  | 'invalid_nonce'
  | 'missing_token'
  | 'invalid_token'
  | 'unexpected_limit_body'
  | 'unexpected_onboarding_body'
  | 'public_key_unavailable';

/**
 * The `code` of a {@link ConnectionError}: `network_permission_denied` when the runtime refused
 * to send (Deno without `--allow-net`), else `connection_failed`.
 *
 * @example
 * if (error instanceof ConnectionError && error.code === 'network_permission_denied') console.error('allow the network');
 */
export type ConnectionErrorCode = 'connection_failed' | 'network_permission_denied';

/**
 * The `code` of a {@link TimeoutError}: a request's `timeoutMs` (`request_timeout`), or the
 * deadline of `waitForLimitSync` (`limit_sync_timeout`) or `waitForOnboardingStatus`
 * (`onboarding_wait_timeout`).
 *
 * @example
 * if (error instanceof TimeoutError && error.code === 'limit_sync_timeout') showStillPending();
 */
export type TimeoutErrorCode = 'request_timeout' | 'limit_sync_timeout' | 'onboarding_wait_timeout';

/**
 * The `code` of an {@link AbortError}.
 *
 * @example
 * if (error instanceof AbortError && error.code === 'aborted') return;
 */
export type AbortErrorCode = 'aborted';

/**
 * The `code` of a {@link LimitSupersededError}.
 *
 * @example
 * if (error instanceof LimitSupersededError && error.code === 'limit_superseded') showLimit(error.limit.amount);
 */
export type LimitSupersededErrorCode = 'limit_superseded';

/**
 * Base class of every error thrown by `@capi/client`: catch this to handle them all. Its `code`
 * is a `string`; each subclass the client words itself narrows it to the codes it can carry
 * (`TimeoutError`'s is a {@link TimeoutErrorCode}, ...), so that a misspelt code does not
 * compile, while an `ApiError`'s is the service's own, an open set.
 *
 * @typeParam Code - the codes of a subclass (`PartnerClientError<TimeoutErrorCode>`), which its
 * constructor takes and its `code` has; left out, `string`.
 * @example
 * try { await client.getDailyLimit(); } catch (error) {
 *   if (error instanceof PartnerClientError) console.error(error.code, error.message);
 * }
 */
export class PartnerClientError<Code extends string = string> extends Error {
  override name = 'PartnerClientError';
  // The fields set in a constructor are `declare`d here and in the subclasses: no field
  // definition (emitted as `code;` and kept by the minifier) before the constructor assigns
  // them, which keeps the main entry within its size budget. The properties are the same, in
  // the same order.
  // Types only (nothing of it is emitted): `instanceof PartnerClientError` narrows to
  // `PartnerClientError<any>`, whose `code` must be `string` too, not `any`: hence the condition.
  /** Machine-readable reason, stable across versions. */
  declare readonly code: string extends Code ? string : Code;

  constructor(message: string, options: PartnerClientErrorOptions<Code>) {
    // Error reads `cause` only from its options, and sets it only when the key is there.
    super(redactTokens(message), options.cause === undefined ? undefined : options);
    this.code = options.code;
  }

  /** A plain object for structured logs; it never holds a token. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/**
 * An argument was rejected before any request was sent (an amount out of range, a `127.0.0.1`
 * SIWE domain, a `ttlInSeconds` outside 3600..86400, ...). Fix the call; retrying cannot help.
 *
 * @example
 * await client.setDailyLimit({ amount: 0 }); // throws InvalidArgumentError, code 'amount_out_of_range'
 */
export class InvalidArgumentError extends PartnerClientError<InvalidArgumentErrorCode> {
  override name = 'InvalidArgumentError';
  /** Why the argument was rejected (see {@link InvalidArgumentErrorCode}). */
  declare readonly code: InvalidArgumentErrorCode;
  /** The name of the argument or option that was rejected. */
  declare readonly argument: string;

  constructor(argument: string, message: string, code: InvalidArgumentErrorCode) {
    super(message, { code });
    this.argument = argument;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), argument: this.argument };
  }
}

/**
 * The service answered 2xx with a body this client cannot use (no token in the challenge
 * answer, an unusable nonce, a limit without `amount`, a public key with `success: false`, an
 * onboarding answer without its `status` or `User`).
 *
 * @example
 * if (error instanceof UnexpectedResponseError) reportToSupport(error.toJSON());
 */
export class UnexpectedResponseError extends PartnerClientError<UnexpectedResponseErrorCode> {
  override name = 'UnexpectedResponseError';
  /** Which answer could not be used (see {@link UnexpectedResponseErrorCode}). */
  declare readonly code: UnexpectedResponseErrorCode;
}

/**
 * What {@link ApiError} is built from.
 *
 * @example
 * new ApiError({ status: 409, body, requestId, code: 'api_error', message: 'Conflict' });
 */
export interface ApiErrorInit {
  status: number;
  /** The parsed error body (JSON when it parsed, else the text), tokens redacted. */
  body: unknown;
  requestId?: string | undefined;
  /** The service's code when the body had one, else the class's default code. */
  code: string;
  message: string;
  /** The service's own message (its body's `message` or `error`, or its text), tokens redacted. */
  serviceMessage?: string | undefined;
}

/**
 * The service answered with an error status. Subclasses narrow it by status family; `code` is
 * the service's own code when its body carries one (for example `WAFForbidden`), else the
 * class's default (`conflict`, ...): a `string`, since the service's codes are an open set that
 * the reference does not list. `message` says
 * what happened and what to do in this package's terms (method names); `serviceMessage` is the
 * service's own sentence, word for word (it may name raw HTTP paths).
 *
 * @example
 * catch (error) { if (error instanceof ApiError) log(error.status, error.code, error.requestId); }
 */
export class ApiError extends PartnerClientError {
  override name = 'ApiError';
  declare readonly status: number;
  declare readonly body: unknown;
  declare readonly requestId: string | undefined;
  /**
   * The service's own message (its body's `message` or `error`, or its text; at most 500
   * characters), tokens redacted; `undefined` when the body had none. Where the client has advice of its own for the refusal, `message`
   * gives that advice instead of repeating this sentence (which may say the same in raw HTTP
   * terms).
   */
  declare readonly serviceMessage: string | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, { code: init.code });
    this.status = init.status;
    this.body = init.body;
    this.requestId = init.requestId && redactTokens(init.requestId);
    this.serviceMessage = init.serviceMessage && redactTokens(init.serviceMessage);
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), status: this.status, requestId: this.requestId, serviceMessage: this.serviceMessage, body: this.body };
  }
}

/**
 * 401: the access token is missing, expired or revoked, or (on most routes) the wallet has not
 * registered a user yet; at sign-in, the signature or the nonce was refused (any wallet that
 * signs correctly gets a token). When the client has a TokenManager that can renew, this is
 * thrown only after one renewal was tried.
 *
 * @example
 * catch (error) { if (error instanceof AuthenticationError) await signInAgain(); }
 */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}

/**
 * 403: the service refuses this request (for example `DomainNotWhitelisted` for a SIWE domain
 * that is not registered in the partner dashboard).
 *
 * @example
 * catch (error) { if (error instanceof ForbiddenError && error.code === 'DomainNotWhitelisted') showSetupHelp(); }
 */
export class ForbiddenError extends ApiError {
  override name = 'ForbiddenError';
}

/**
 * 403 `WAFForbidden`: the service's firewall blocked the request, typically a SIWE message
 * that mentions `127.0.0.1` (its domain, URI or statement). Use `localhost` instead.
 *
 * @example
 * catch (error) { if (error instanceof WafForbiddenError) console.error(error.message); }
 */
export class WafForbiddenError extends ForbiddenError {
  override name = 'WafForbiddenError';
}

/**
 * 400 or 422: the service rejected the request's content. Sending it again fails the same way.
 *
 * @example
 * catch (error) { if (error instanceof ValidationError) showFormError(error.message); }
 */
export class ValidationError extends ApiError {
  override name = 'ValidationError';
}

/**
 * 404: no such resource; usually a wrong `baseUrl` or `webhooksUrl`.
 *
 * @example
 * catch (error) { if (error instanceof NotFoundError) console.error('check baseUrl', error.message); }
 */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/**
 * 409: the request is well formed but conflicts with the current state, e.g. an onboarding
 * step taken out of order (`code` `OnboardingStepNotReached`) or done twice. Sending it again
 * unchanged fails the same way; `code` names the conflict.
 *
 * @example
 * catch (error) { if (error instanceof ConflictError && error.code === 'OnboardingStepNotReached') await showCurrentStep(); }
 */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}

/**
 * An error status the service may answer with `Retry-After` (429 and 5xx): `retryAfterMs` is
 * that wait, when it sent one. The shared base of {@link RateLimitError} and {@link ServerError}.
 *
 * @example
 * catch (error) { if (error instanceof RateLimitError) setTimeout(again, error.retryAfterMs ?? 1000); }
 */
export class ApiErrorWithRetryAfter extends ApiError {
  declare readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit & { retryAfterMs?: number | undefined }) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), retryAfterMs: this.retryAfterMs };
  }
}

/**
 * 429: too many requests. `retryAfterMs` is the service's `Retry-After`, when it sent one.
 *
 * @example
 * catch (error) { if (error instanceof RateLimitError) setTimeout(again, error.retryAfterMs ?? 1000); }
 */
export class RateLimitError extends ApiErrorWithRetryAfter {
  override name = 'RateLimitError';
}

/**
 * 5xx: the service failed. Idempotent requests answered 500, 502, 503 or 504 have already been
 * retried when this is thrown (other 5xx statuses are not retried).
 * `retryAfterMs` is the service's `Retry-After` (a 503 for maintenance), when it sent one.
 *
 * @example
 * catch (error) { if (error instanceof ServerError) showTryLater(error.retryAfterMs); }
 */
export class ServerError extends ApiErrorWithRetryAfter {
  override name = 'ServerError';
}

/**
 * No response came: DNS, refused connection, reset socket, TLS failure, CORS in a browser.
 *
 * @example
 * catch (error) { if (error instanceof ConnectionError) showOffline(); }
 */
export class ConnectionError extends PartnerClientError<ConnectionErrorCode> {
  override name = 'ConnectionError';
  /** `connection_failed`, or `network_permission_denied` (see {@link ConnectionErrorCode}). */
  declare readonly code: ConnectionErrorCode;
}

/**
 * No complete response within the time allowed (`timeoutMs` of a request, or of `waitForLimitSync` or `waitForOnboardingStatus`: codes `request_timeout`, `limit_sync_timeout`, `onboarding_wait_timeout`).
 *
 * @example
 * await client.getDailyLimit({ timeoutMs: 2000 }); // may throw TimeoutError, code 'request_timeout'
 */
export class TimeoutError extends PartnerClientError<TimeoutErrorCode> {
  override name = 'TimeoutError';
  /** Which time limit ran out (see {@link TimeoutErrorCode}). */
  declare readonly code: TimeoutErrorCode;
  /** The time limit that was exceeded. */
  declare readonly timeoutMs: number;

  constructor(message: string, options: PartnerClientErrorOptions<TimeoutErrorCode> & { timeoutMs: number }) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), timeoutMs: this.timeoutMs };
  }
}

/**
 * The caller's `AbortSignal` fired; nothing is retried after that.
 *
 * @example
 * const controller = new AbortController();
 * const pending = client.getDailyLimit({ signal: controller.signal });
 * controller.abort(); // pending rejects with AbortError
 */
export class AbortError extends PartnerClientError<AbortErrorCode> {
  override name = 'AbortError';
  /** Always `aborted`. */
  declare readonly code: AbortErrorCode;
}

/**
 * `waitForLimitSync({ amount })` read another amount synced than the one it waited for: another
 * change (another tab, process or device of the user) replaced this caller's after it was set.
 * Code `limit_superseded`; `limit` is the limit synced instead, the one in force.
 *
 * @example
 * catch (error) { if (error instanceof LimitSupersededError) showLimit(error.limit.amount); }
 */
export class LimitSupersededError extends PartnerClientError<LimitSupersededErrorCode> {
  override name = 'LimitSupersededError';
  /** Always `limit_superseded`. */
  declare readonly code: LimitSupersededErrorCode;
  // Set by waitForLimitSync (a lazily loaded chunk), which keeps the main entry small.
  /** The limit synced instead, now in force. */
  declare readonly limit: DailyLimit & { syncStatus: 'synced' };
}

const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid'];

/** The advice of a 401 that nothing more specific fits. Internal: also the 401 advice of the client's own operations. */
export const SIGN_IN_AGAIN = 'Sign in again with signInWithEthereum(), or give the client a TokenManager with a reauthenticate callback so that it renews the token itself';

/**
 * Options of {@link errorFromResponse}.
 *
 * @example
 * errorFromResponse(response, body, { advice: 'Sign in again' });
 */
export interface ErrorFromResponseOptions {
  /**
   * What the caller should do, when the operation knows better than the status alone. Given,
   * it stands in `message` in place of the service's own sentence (kept as `serviceMessage`),
   * so that the refusal is said once; left out, `message` has the service's sentence and the
   * status's own advice.
   */
  advice?: string | undefined;
}

/**
 * Builds the typed error for an error response, reading the body tolerantly (`{error}`,
 * `{message}`, `{code, message}` or text). Useful with `client.raw`, which does not throw.
 * `message` is the status and code, then `options.advice` when given, else the service's own
 * sentence and the status's advice; the service's sentence is always `serviceMessage`.
 *
 * @example
 * const { data, error, response } = await client.raw.GET('/user-api/user/account/limit');
 * if (!response.ok) throw errorFromResponse(response, error); // not `error`: an empty error body is undefined
 */
export function errorFromResponse(response: Pick<Response, 'status' | 'headers'>, body: unknown, options: ErrorFromResponseOptions = {}): ApiError {
  const { status } = response;
  const safeBody = redactTokensDeep(body);
  const said = readErrorBody(safeBody);
  const requestId = REQUEST_ID_HEADERS.map((name) => response.headers.get(name)).find((value) => value) as string | undefined;
  const isWaf = status === 403 && /WAFForbidden/i.test(`${said.code ?? ''} ${said.message ?? ''}`);
  const retryAfterMs = status === 429 || isServerErrorStatus(status) ? parseRetryAfter(response.headers.get('retry-after')) : undefined;
  const [ErrorClass, familyCode, title, familyAdvice] = describeStatus(status, isWaf, said.code, retryAfterMs);
  // The operation's advice, in this package's terms, says what the service's sentence says (often
  // in raw HTTP terms, as "register first: POST /email/verification ..."): it stands in its
  // place, and the sentence stays in serviceMessage. Without it, the sentence and the status's
  // own advice. The service's sentence often ends with a full stop; the advice follows after one.
  const saidMessage = options.advice ? undefined : said.message?.replace(/\.+$/, '');
  const message =
    `${title} (HTTP ${status}${said.code ? ` ${said.code}` : ''})` +
    (options.advice ? `: ${options.advice}` : `${saidMessage ? `: ${saidMessage}` : ''}. ${familyAdvice}`) +
    `${requestId ? ` [request id ${requestId}]` : ''}`;
  // retryAfterMs is undefined but for 429 and 5xx, whose classes are the ones that keep it.
  return new ErrorClass({ status, body: safeBody, requestId, code: said.code ?? familyCode, message, serviceMessage: said.message, retryAfterMs });
}

// 5xx only: a status beyond 599 (some proxies and bot walls answer 999) is no server failure.
function isServerErrorStatus(status: number): boolean {
  return status >= 500 && status <= 599;
}

// A status's family: its error class (each takes the init; only the Retry-After ones keep
// `retryAfterMs`), its default code, its title and its advice. A tuple rather than an object,
// which keeps the main entry within its size budget.
type StatusFamily = [
  ErrorClass: new (init: ApiErrorInit & { retryAfterMs?: number | undefined }) => ApiError,
  code: string,
  title: string,
  advice: string,
];

function describeStatus(status: number, isWaf: boolean, serviceCode: string | undefined, retryAfterMs: number | undefined): StatusFamily {
  const retryAfter = retryAfterMs === undefined ? undefined : `Retry after ${Math.ceil(retryAfterMs / 1000)} s`;
  if (isWaf) {
    return [WafForbiddenError, 'WAFForbidden', 'The service firewall blocked the request', 'a SIWE message that mentions 127.0.0.1 (in its domain, URI or statement) is blocked by the firewall: use localhost (any port)'];
  }
  if (status === 401) {
    return [AuthenticationError, 'unauthorized', 'Authentication failed', SIGN_IN_AGAIN];
  }
  if (status === 403) {
    return [
      ForbiddenError,
      'forbidden',
      'The service refused the request',
      serviceCode === 'DomainNotWhitelisted'
        ? 'Register the SIWE domain in the partner dashboard; localhost (any port) is always allowed'
        : 'This user or partner is not allowed to do this; retrying will not help',
    ];
  }
  if (status === 400 || status === 422) {
    return [ValidationError, 'validation_failed', 'The service rejected the request', 'Fix the request as described; sending it again unchanged fails the same way'];
  }
  if (status === 404) return [NotFoundError, 'not_found', 'Not found', 'Check baseUrl (or webhooksUrl) and the path'];
  if (status === 409) {
    return [ConflictError, 'conflict', 'The request conflicts with the current state', 'Read the current state (for onboarding: the onboarding status) and act on it'];
  }
  if (status === 429) return [RateLimitError, 'rate_limited', 'Too many requests', retryAfter ?? 'Slow down and retry later'];
  if (isServerErrorStatus(status)) {
    return [ServerError, 'server_error', 'The service failed', `${retryAfter ?? 'Retry later'}; if it persists, report the request id to the platform`];
  }
  return [ApiError, 'api_error', 'Unexpected status', 'See the status and body'];
}

/** How long an error waits for the chunk that words it before its fallback stands in. */
const CHUNK_GRACE_MS = 1_000;

/**
 * Loads a lazily loaded chunk of this package (`load`). When it cannot load (a deploy replaced
 * the app's files while the page was open, or the network is down): for a chunk loaded only to
 * build errors or their advice, resolves to `fallback`, which builds them without it (the same
 * class and code, a short message or no advice), and so too when the chunk has not arrived
 * within a second (a network that holds the request: the error, a renewal's timeout among
 * them, is not held up with it); for one that holds an operation itself, given the operation's
 * name as `fallback`, rejects with a `PartnerClientError` `client_code_unavailable` whose
 * `cause` is the import's error. Internal.
 *
 * @example
 * const limitErrors = () => loadChunk(() => import('./limit-errors.js'), withoutChunk);
 * (await loadChunk(() => import('./sign-in.js'), 'signInWithEthereum')).signInWithEthereum(context, params);
 */
export function loadChunk<M>(load: () => Promise<M>, fallback: M | string): Promise<M> {
  const loading = load().catch((cause: unknown) => {
    if (typeof fallback != 'string') return fallback;
    throw new PartnerClientError<PartnerClientErrorOwnCode>(`The client's code for ${fallback} could not be loaded (a deploy replaced it, or the network is down): reload the page.`, { code: 'client_code_unavailable', cause });
  });
  if (typeof fallback == 'string') return loading;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CHUNK_GRACE_MS, fallback);
    void loading.then((chunk) => (clearTimeout(timer), resolve(chunk)));
  });
}

/** The runtime refused to send (Deno's NotCapable, or PermissionDenied before Deno 2): no request left the process. */
export function isPermissionDenial(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'NotCapable' || name === 'PermissionDenied';
}
