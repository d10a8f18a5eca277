import { describeValue } from './describe-value.js';
import { AbortError, ConnectionError, InvalidArgumentError, isPermissionDenial, loadChunk, PartnerClientError } from './errors.js';
import { assertFunctionOptions } from './function-options.js';
import { readJwtClaims, readJwtExpiry, readJwtLifetimeMs } from './jwt-expiry.js';
import { assertMilliseconds } from './milliseconds-option.js';
import { holdToken } from './redact-tokens.js';
import type { RequestOptions } from './transport.js';
import { untilAborted } from './until-aborted.js';

/**
 * The two infrastructure generations: `older` issues one token valid `ttlInSeconds` (1 to 24 h);
 * `newer` issues a 15-minute access token plus a 7-day refresh token that rotates.
 *
 * @example
 * const generation: TokenGeneration = tokenManager.generation; // 'older' | 'newer'
 */
export type TokenGeneration = 'older' | 'newer';

/**
 * The tokens of a signed-in session, as returned by sign-in, `reauthenticate` and `refresh`.
 *
 * @example
 * const tokens: TokenSet = { token: jwt, refreshToken, expiresAt: new Date(Date.now() + 900_000) };
 */
export interface TokenSet {
  /** The access token (a JWT), sent as `Authorization: Bearer <token>`. */
  token: string;
  /**
   * When the access token expires, on this device's clock. Given, it is taken as it is (your
   * own figure, for example the `expiresAt` of a sign-in you saved). Left out, the TokenManager
   * works it out: for a token just received (from a `refresh` or `reauthenticate` callback), the
   * time it arrived plus its lifetime (the JWT's `exp` - `iat`), so that a device clock that is
   * off from the service's does not shorten or lengthen it; for tokens you restore
   * (`setTokens()`, the `tokens` option), the JWT's `exp`, but never later than its lifetime from
   * now. Without `iat`, the `exp`; without `exp`, 15 minutes from when it is stored for a
   * newer-generation token (one with a `refreshToken`).
   */
  expiresAt?: Date | undefined;
  /** The newer generation's refresh token; each refresh returns a new one (rotation). */
  refreshToken?: string | undefined;
}

/**
 * Options of {@link TokenManager}.
 *
 * @example
 * const options: TokenManagerOptions = { renewBeforeMs: 120_000, reauthenticate: ({ signal }) => client.signInWithEthereum({ ...params, signal }) };
 */
export interface TokenManagerOptions {
  /**
   * Signs the user in again (a new nonce and a wallet signature, so usually user interaction).
   * One renewal runs at a time in a session, however many requests need it; but a callback
   * still open when `clear()` or `setTokens()` starts a new session, or when it is abandoned
   * after `reauthenticateTimeoutMs`, does not hold up the next renewal, so two can be open at
   * once (what the earlier one brings is discarded). `signal` aborts when it is abandoned: pass
   * it on to `signInWithEthereum`, which then stores nothing. The tokens that the sign-in it
   * calls (`signInWithEthereum` of this client, begun in the renewal's session) stores belong
   * to the renewal; `setTokens()` while it runs starts a new session, as at any other time.
   */
  reauthenticate?: ((options: { signal: AbortSignal }) => Promise<TokenSet | string>) | undefined;
  /**
   * Newer generation: trades the refresh token for new tokens. The operation is outside the
   * reference, so it is yours to supply. It must throw when the service refuses (check
   * `response.ok`: a 401 `RefreshTokenReused` means the session has ended), and resolve to
   * `{ token, refreshToken, expiresAt? }` with the new (rotated) `refreshToken`; anything else
   * (an error body, `refresh_token`, `expiresAt` in seconds) is a `TokenRenewalError`
   * (`token_renewal_failed`) too. `signal` aborts when it is abandoned after
   * `refreshTimeoutMs`. When the service refused it (it threw an error of its own after an
   * answer, or resolved to something that is not tokens) or timed out (a `TimeoutError`, or
   * `refreshTimeoutMs` ran out: the service may have rotated the token and answered late), its
   * refresh token is never offered again and `reauthenticate` is tried; without
   * `reauthenticate`, the error that ends the session later (a 401 at expiry) is a
   * `TokenRenewalError` whose `cause` is this failure. When it got no answer (it threw a
   * `TypeError`, what `fetch` throws when no response arrives, or a `ConnectionError` of this
   * package: offline, a connection that failed), the refresh token is kept and offered again at
   * the next request, `reauthenticate` is not called (no wallet prompt), and the request fails
   * with `TokenRenewalError` `token_refresh_unreachable`, unless the access token is still valid
   * (then it is used).
   */
  refresh?: ((refreshToken: string, options: { signal: AbortSignal }) => Promise<TokenSet>) | undefined;
  /**
   * How long a `refresh` may take (a machine call) before it is abandoned with
   * `TokenRenewalError` `token_renewal_timeout`: as for a refused refresh, its refresh token is
   * not offered again (the service may have rotated it and answered late) and `reauthenticate`
   * is tried; the next request starts a new renewal.
   * Default 30 000 ms; `Infinity` for no bound.
   */
  refreshTimeoutMs?: number | undefined;
  /**
   * How long a `reauthenticate` may take (a person at a wallet) before it is abandoned with
   * `TokenRenewalError` `token_renewal_timeout` and the next request starts a new renewal.
   * Default 300 000 ms (5 minutes); `Infinity` for no bound.
   */
  reauthenticateTimeoutMs?: number | undefined;
  /**
   * Renew this long before the token expires (`expiresAt`, on this device's clock). Default
   * 180 000 ms (3 minutes). Keep it well below the token lifetime
   * (15 minutes in the newer generation): a token that a renewal brings already within it is
   * not renewed ahead of time again, but used until the service answers 401.
   */
  renewBeforeMs?: number | undefined;
  /** Fix the generation; by default it is `newer` when the tokens carry a refresh token. */
  generation?: TokenGeneration | undefined;
  /** Tokens to start with, for example restored from secure storage. */
  tokens?: TokenSet | string | undefined;
}

/**
 * The `code` of a {@link TokenRenewalError}: the callback failed or gave no tokens
 * (`token_renewal_failed`), `refresh` got no answer (`token_refresh_unreachable`, the refresh
 * token is kept), the callback did not settle in time (`token_renewal_timeout`), or the session
 * was replaced meanwhile (`session_changed`).
 *
 * @example
 * if (error instanceof TokenRenewalError && error.code === 'session_changed') return;
 */
export type TokenRenewalErrorCode = 'token_renewal_failed' | 'token_refresh_unreachable' | 'token_renewal_timeout' | 'session_changed';

/**
 * A token could not be renewed. Code `token_renewal_failed`: `reauthenticate` or `refresh`
 * failed with an error of its own (for example the user rejected the wallet prompt, or the
 * service refused the refresh; `cause` holds that error), or resolved to something that is not
 * tokens (an error body, `undefined`; `cause` is the `InvalidArgumentError` of `setTokens`);
 * also at a 401 after a `refresh` was refused earlier and nothing else can renew (`cause` is
 * that failure). Code `token_refresh_unreachable`: `refresh` got no answer (it threw a
 * `TypeError`, what `fetch` throws when no response arrives, or a `ConnectionError`): the
 * refresh token is kept and tried again at the next request, and no wallet prompt was shown;
 * `cause` is the network error. Code `token_renewal_timeout`: the callback did not settle within
 * `refreshTimeoutMs` or `reauthenticateTimeoutMs`, and the renewal was abandoned. Code `session_changed`: `clear()`
 * (sign-out) or new tokens from elsewhere (`setTokens()`, a sign-in) replaced the session while
 * the renewal, or a sign-in, ran; its tokens were discarded and the request was not sent again.
 *
 * @example
 * catch (error) {
 *   if (error instanceof TokenRenewalError && error.code === 'session_changed') return; // the user signed out meanwhile
 *   if (error instanceof TokenRenewalError && error.code === 'token_refresh_unreachable') return showOffline(); // kept: the next request refreshes again
 *   if (error instanceof TokenRenewalError) showSignInButton();
 * }
 */
export class TokenRenewalError extends PartnerClientError<TokenRenewalErrorCode> {
  override name = 'TokenRenewalError';
  /** Why the renewal failed (see {@link TokenRenewalErrorCode}). */
  declare readonly code: TokenRenewalErrorCode;
}

// The sign-in's access to a TokenManager of this copy of the package (a TypeError for any other
// object): reads its session and, given tokens, first stores them (see storeSignIn). One hook
// for both, with the checks in sessionOf and storeSignIn (which only the lazy sign-in chunk
// uses), keeps the main entry small.
let sessionHook: (tokenManager: TokenManager, tokens?: StoredTokens, session?: number) => number;

/**
 * The session counter of `tokenManager`, changed by `clear()`, `setTokens()` and a sign-in that
 * is not a renewal's; `undefined` for an object that is not a TokenManager of this copy of the
 * package. Internal: for the sign-in.
 *
 * @example
 * const session = sessionOf(tokenManager); // later: sessionOf(tokenManager) !== session after clear()
 */
export function sessionOf(tokenManager: TokenManager): number | undefined {
  try {
    return sessionHook(tokenManager);
  } catch {
    return undefined; // not a TokenManager of this copy: it has no #session
  }
}

/**
 * Stores the tokens of a sign-in begun in `session` (from {@link sessionOf}), already checked
 * (a non-empty token a header can carry, `expiresAt` a Date), if that session is still the
 * current one (else nothing; the sign-in checks it first, to reject with `session_changed`).
 * They belong to the renewal whose `reauthenticate` callback runs in that session (the sign-in
 * it calls); otherwise they start a new session, as `setTokens()` always does.
 * Internal: for the sign-in.
 *
 * @example
 * storeSignIn(tokenManager, result, session);
 */
export function storeSignIn(tokenManager: TokenManager, tokens: StoredTokens, session: number): void {
  if (sessionHook(tokenManager) === session) sessionHook(tokenManager, tokens, session);
}

// The errors of a renewal overtaken by a session change, whose callback failed, timed out or
// gave something that is not tokens, and of a wait a caller ended, are built in a chunk of their
// own, loaded only then: their messages stay out of the main entry. Each is awaited only right
// before it is thrown (a refresh result refused as misread, before the session check that
// follows it), so that no check of the session is ever separated by an await from what it
// guards, and a renewal that succeeds never waits for the chunk.
// When the chunk cannot load (the network is down, as it may well be when a refresh got no
// answer, or a deploy replaced it), each error is built here instead: the same class, `code` and
// `cause`, with a short message.
export const renewalErrors = () => loadChunk(() => import('./renewal-errors.js'), withoutChunk);

const shortError = (code: TokenRenewalErrorCode, cause?: unknown) => new TokenRenewalError(`The token could not be renewed (${code}).`, { code, cause });
const withoutChunk: Pick<typeof import('./renewal-errors.js'), 'requestOvertaken' | 'waitOvertaken' | 'renewalOvertaken' | 'signerChanged' | 'renewalFailed' | 'refreshUnreachable' | 'renewalTimedOut' | 'misreadRefreshResult' | 'waitEnded'> = {
  requestOvertaken: () => shortError('session_changed'),
  waitOvertaken: () => shortError('session_changed'),
  renewalOvertaken: () => shortError('session_changed'),
  signerChanged: () => shortError('session_changed'),
  renewalFailed: (error) => shortError('token_renewal_failed', error),
  refreshUnreachable: (error) => shortError('token_refresh_unreachable', error),
  renewalTimedOut: () => shortError('token_renewal_timeout'),
  misreadRefreshResult: (field) => new InvalidArgumentError(field, `refresh resolved to tokens whose ${field} would be misread (invalid_tokens).`, 'invalid_tokens'),
  waitEnded: () => new AbortError('Cancelled while waiting for a token renewal.', { code: 'aborted' }),
};

/**
 * A caller's wait for a token renewal shared with other requests: its `signal` ends its own
 * wait (`AbortError`), never the renewal (which is bounded by `refreshTimeoutMs` and
 * `reauthenticateTimeoutMs`).
 *
 * @example
 * const token = await tokenManager.getToken({ signal: AbortSignal.timeout(10_000) });
 */
export type TokenWaitOptions = Pick<RequestOptions, 'signal'>;

// A few minutes before exp, as service-facts advises: 3 minutes leaves a newer-generation
// access token (15 minutes) 80% of its life and an older one (1 h to 24 h) nearly all of it.
// The expiry is counted on this device's clock from the token's arrival (its lifetime, exp -
// iat), so a device clock that is off does not eat into it; the margin absorbs the time the
// token took to arrive.
const DEFAULT_RENEW_BEFORE_MS = 180_000;

/**
 * Whether `token` can be sent as `Authorization: Bearer <token>`: visible ASCII, no spaces.
 *
 * @example
 * isBearerTokenText('eyJhbGciOi.eyJleHAiOj.sig') // true
 */
export function isBearerTokenText(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}

/**
 * Holds the session's tokens, renews them ahead of expiry and after a 401, one renewal at a
 * time (single flight), through `refresh` (newer generation) or `reauthenticate`.
 * Tokens are kept in private fields and never appear in its JSON, string or inspect output.
 *
 * @example
 * const tokenManager = new TokenManager({
 *   reauthenticate: ({ signal }) => client.signInWithEthereum({ address, signMessage, domain, uri, chainId: 100, signal }),
 * });
 * const client = createPartnerClient({ baseUrl, tokenManager });
 */
export class TokenManager {
  #token: string | undefined;
  #refreshToken: string | undefined;
  #expiresAt: number | undefined;
  #hasSignedUp: boolean | undefined;
  readonly #renewBeforeMs: number;
  #renewal: Promise<string | undefined> | undefined;
  // Until when the token is not renewed ahead of time, but used as it is. Infinity when a
  // renewal brought a token that is already due (a service issuing tokens shorter than
  // renewBeforeMs, or a token without iat read by its exp on a device clock far ahead): renewing
  // again would bring the same, so it is used until the service answers 401. Its expiry when a renewal ahead of time failed (the user rejected the wallet prompt).
  // Either way not one renewal (a wallet prompt) per request.
  #keepUntil = 0;
  // Why the last refresh failed (renewalFailed's arguments: the error, whether it resolved to
  // something refused, that value):
  // the error of a later 401 that nothing can renew says it. Reset with new tokens.
  #refreshFailure: [unknown, 'refresh', boolean, unknown] | undefined;
  // The session: clear(), setTokens() and a sign-in that is not a renewal's start a new one.
  // Work begun in an earlier session (a renewal, a sign-in, a request's 401) never stores its
  // tokens in this one, nor is a request of an earlier session sent again with this session's
  // token.
  #session = 0;
  // The access tokens stored in this session (the latest 8): a 401 for any other token is a
  // request of an earlier session.
  #sessionTokens: string[] = [];
  // The session whose reauthenticate callback is running: the tokens of a sign-in begun in that
  // session and stored meanwhile (the sign-in it calls) are that renewal's, not a new session.
  #reauthenticating: number | undefined;
  // The session a renewal's sign-in left because it signed in another account, and the tokens
  // of the two (their claims name the accounts in the error's message).
  #accountSwitch: { session: number; from: string | undefined; to: string } | undefined;
  #inferredGeneration: TokenGeneration = 'older';
  readonly #fixedGeneration: TokenGeneration | undefined;
  readonly #reauthenticate: TokenManagerOptions['reauthenticate'];
  readonly #refresh: TokenManagerOptions['refresh'];
  readonly #timeoutsMs: { refresh: number; reauthenticate: number };
  // The signal of the renewal callback running now, aborted when its session ends.
  #callbackAbort: AbortController | undefined;

  static {
    sessionHook = (tokenManager, tokens, session) => {
      if (tokens) {
        if (session === tokenManager.#reauthenticating) {
          tokenManager.#storeRenewalSignIn(tokens);
        } else {
          tokenManager.#newSession();
          tokenManager.#store(tokens);
        }
      }
      return tokenManager.#session;
    };
  }

  constructor(options: TokenManagerOptions = {}) {
    const renewBeforeMs = options.renewBeforeMs ?? DEFAULT_RENEW_BEFORE_MS;
    // A finite number >= 0, else "renewBeforeMs must be a number of milliseconds >= 0, got ...".
    assertMilliseconds(renewBeforeMs, 'renewBeforeMs', { allowZero: true });
    assertFunctionOptions(options, ['reauthenticate', 'refresh'], ' returning a Promise of tokens');
    if (options.generation !== undefined && options.generation !== 'older' && options.generation !== 'newer') {
      throw new InvalidArgumentError('generation', `generation must be 'older' or 'newer', got ${describeValue(options.generation)}.`, 'invalid_option');
    }
    // A refresh is a machine call; a re-sign-in waits for a person at a wallet.
    const timeoutsMs = (this.#timeoutsMs = { refresh: options.refreshTimeoutMs ?? 30_000, reauthenticate: options.reauthenticateTimeoutMs ?? 300_000 });
    for (const callback of ['refresh', 'reauthenticate'] as const) assertMilliseconds(timeoutsMs[callback], `${callback}TimeoutMs`, { allowInfinity: true });
    this.#renewBeforeMs = renewBeforeMs;
    this.#reauthenticate = options.reauthenticate;
    this.#refresh = options.refresh;
    this.#fixedGeneration = options.generation;
    if (options.tokens !== undefined) this.setTokens(options.tokens);
  }

  /** The generation: the `generation` option, else inferred from the last tokens stored. */
  get generation(): TokenGeneration {
    return this.#fixedGeneration ?? this.#inferredGeneration;
  }

  /**
   * When the current access token expires, if known, on this device's clock (the instant it is
   * renewed ahead of, less `renewBeforeMs`): the time a token arrived plus its lifetime (the
   * JWT's `exp` - `iat`), or the `expiresAt` given with it; see {@link TokenSet.expiresAt}. It
   * differs from the JWT's `exp` (the service's clock, `readJwtExpiry`) by as much as the two
   * clocks do. Save it with the tokens, to restore them with it.
   */
  get expiresAt(): Date | undefined {
    return this.#expiresAt === undefined ? undefined : new Date(this.#expiresAt);
  }

  /** Whether an access token is held (it may have expired). */
  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /**
   * Stores new tokens (a {@link TokenSet} or a bare access token), for example restored from
   * storage. The expiry (on this device's clock) is taken from `expiresAt`, as given; else from
   * the JWT's `exp`, but never later than the token's lifetime (`exp` - `iat`) from now: a
   * restored token may be older than this call, and its `exp` is on the service's clock; else
   * (a newer-generation token: with a `refreshToken`) 15 minutes from now. To store a token you
   * have just received yourself, pass its `expiresAt` (the result of `signInWithEthereum` has
   * it). This starts a new session: a renewal
   * still in flight is dropped, and what it brings later is discarded (the requests waiting for it fail
   * with `TokenRenewalError` `session_changed`), so that it cannot replace these tokens. This
   * holds while the `reauthenticate` callback runs too: only the tokens that the sign-in it calls
   * stores itself belong to that renewal.
   *
   * @example
   * tokenManager.setTokens(await client.signInWithEthereum(params));
   */
  setTokens(tokens: TokenSet | string): void {
    const set = readTokenSet(tokens);
    this.#newSession();
    this.#store(set);
  }

  /**
   * The last access token's unverified `hasSignedUp` claim: `false` for a wallet that has not
   * registered a user yet (newer generation), `undefined` when the token does not say. Kept
   * after a 401 dropped that token, until new tokens or `clear()`.
   */
  get hasSignedUp(): boolean | undefined {
    return this.#hasSignedUp;
  }

  /**
   * Whether a `reauthenticate` callback was given: a 401 that no refresh can renew is then renewed
   * by signing the user in again (a wallet prompt). The advice of a 401 depends on it.
   */
  get canReauthenticate(): boolean {
    return this.#reauthenticate !== undefined;
  }

  /**
   * Forgets every token (sign-out) and starts a new session: a renewal or sign-in still in
   * flight stores nothing afterwards (its callers get `TokenRenewalError` `session_changed`),
   * and a request sent before gets no token of a later session when it is answered 401.
   *
   * @example
   * tokenManager.clear(); // sign-out, even while a renewal is in flight
   */
  clear(): void {
    this.#newSession();
    this.#hasSignedUp = undefined;
    this.#token = undefined;
    this.#refreshToken = undefined;
    this.#expiresAt = undefined;
  }

  /**
   * The access token to send now: renewed first when it is absent or within `renewBeforeMs`
   * of its expiry ({@link TokenManager.expiresAt}, on this device's clock). A token whose claims
   * say `hasSignedUp: false` (a wallet not registered yet) is, while still valid, renewed ahead
   * of time through `refresh` only, never `reauthenticate` (no wallet prompt): it is what
   * registration needs; without `refresh` it is used until it expires (then renewed as any
   * other). If that renewal fails (or a refresh-only one brings nothing) while the
   * old token is still valid, the old token is used, and it is not renewed ahead of time again
   * until it expires or the service answers 401. `signal` ends the wait for a renewal
   * (`AbortError`). Rejects with `TokenRenewalError`
   * `session_changed` when `clear()` or new tokens end the session during the renewal.
   *
   * @example
   * const token = await tokenManager.getToken({ signal });
   */
  async getToken(options?: TokenWaitOptions): Promise<string | undefined> {
    if (this.#token !== undefined && this.#renewal === undefined && (!this.#isDue(Date.now()) || Date.now() < this.#keepUntil)) return this.#token;
    // A wallet that has not registered: its token, still valid, is what registration needs, and
    // is renewed ahead of time through refresh only (no wallet prompt), as after a 401.
    const refreshOnly = this.#hasSignedUp === false && this.#token !== undefined && !this.#isExpired(Date.now());
    if (refreshOnly ? this.#renewal === undefined && !this.#canRefresh() : !this.#canRenew()) return this.#token;
    const session = this.#session;
    const kept = () => (this.#session === session && !this.#isExpired(Date.now()) ? this.#token : undefined);
    return this.#wait(
      () => this.#renew(refreshOnly).then(
        (token) => token ?? kept(),
        (error: unknown) => kept() ?? Promise.reject(error),
      ),
      options,
    );
  }

  /**
   * Called when a request sent with `rejectedToken` got a 401: drops that token and renews
   * once for everyone. Returns the token to retry with, or `undefined` when none can be had.
   * A token whose claims say `hasSignedUp: false` is kept until it expires, and never renewed
   * by `reauthenticate` (a wallet prompt), when the 401's `code` is `UserNotRegistered` or
   * absent: that 401 means "register first", and the token is what registration needs. It is
   * refreshed, though, when `refresh` can (newer generation, no user interaction): the 401 may
   * also come from a token the service's clock has expired, and the refreshed token names the
   * user once the wallet has registered. With any other `code` (`TokenExpired`, ...) the token
   * is renewed as any other: the claim may be stale (the wallet registered since).
   * Rejects with `TokenRenewalError` `session_changed` when `rejectedToken` belongs to an
   * earlier session (`clear()` or new tokens since the request was sent), or the session
   * changes during the renewal: the request is not sent again with another session's token.
   * (A request sent without a token is checked by the client itself, which knows the session it
   * was sent in.) When nothing can renew because a `refresh` failed earlier, rejects with
   * `TokenRenewalError` `token_renewal_failed` whose `cause` is that failure. `signal` ends the
   * wait, as for {@link TokenManager.getToken}.
   *
   * @example
   * const next = await tokenManager.renewAfterUnauthorized(sentToken, 'TokenExpired', { signal });
   */
  async renewAfterUnauthorized(rejectedToken: string | undefined, code?: string, options?: TokenWaitOptions): Promise<string | undefined> {
    if (rejectedToken !== undefined && !this.#sessionTokens.includes(rejectedToken)) throw (await renewalErrors()).requestOvertaken();
    const renewal = this.#renewal;
    if (renewal !== undefined) return this.#wait(() => renewal, options);
    // Another request already renewed while this one was in flight.
    if (this.#token !== undefined && this.#token !== rejectedToken) return this.#token;
    // A wallet that has not registered gets 401 on most routes (reference 5 rule 1), and its
    // token still serves registration: keep it. A renewal would only bring the same answer.
    // A 401 that says something else (TokenExpired) is not about registration: the claim
    // may be stale (the wallet registered with this token), and the token is renewed.
    if (this.#hasSignedUp === false && this.#token !== undefined && !this.#isExpired(Date.now()) && (code === undefined || code === 'UserNotRegistered')) {
      return this.#canRefresh() ? this.#wait(() => this.#renew(true), options) : undefined;
    }
    this.#token = undefined;
    this.#expiresAt = undefined;
    if (this.#canRenew()) return this.#wait(() => this.#renew(), options);
    // The refresh that failed earlier is why there is nothing to renew with: say so.
    if (this.#refreshFailure) throw (await renewalErrors()).renewalFailed(...this.#refreshFailure, true);
    return undefined;
  }

  /**
   * Newer generation, after `registerUser`: the token still says `hasSignedUp: false` (no
   * `userId`), so this trades the refresh token for tokens that name the new user. Only through
   * `refresh`, never `reauthenticate` (no wallet prompt); without either it does nothing, and
   * a failed refresh keeps the current token (and one overtaken by `clear()` or new tokens
   * stores nothing). `signal` ends the wait (the refresh itself goes on); it then resolves as
   * well. `registerUser` calls it with its own.
   *
   * @example
   * await tokenManager.refreshAfterRegistration({ signal }); // tokenManager.hasSignedUp === true
   */
  async refreshAfterRegistration(options?: TokenWaitOptions): Promise<void> {
    // The registration stands whatever happens here: a refresh overtaken by clear() or new
    // tokens, or a wait the caller ended, is nothing to report to its caller.
    if (this.#canRefresh()) await this.#wait(() => this.#renew(true), options).catch(() => undefined);
  }

  toJSON(): Record<string, unknown> {
    return { generation: this.generation, hasToken: this.hasToken, expiresAt: this.expiresAt?.toISOString() };
  }

  toString(): string {
    return `TokenManager ${JSON.stringify(this.toJSON())}`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  #newSession(): void {
    this.#session += 1;
    // A renewal of the earlier session is left to settle on its own (it will store nothing);
    // requests of this session start their own.
    this.#renewal = undefined;
    this.#callbackAbort?.abort();
    this.#sessionTokens = [];
    this.#keepUntil = 0;
    this.#refreshFailure = undefined;
  }

  #store(set: StoredTokens): void {
    this.#token = set.token;
    this.#refreshToken = set.refreshToken;
    holdToken(set.token);
    holdToken(set.refreshToken);
    const hasSignedUp = readJwtClaims(set.token)?.hasSignedUp;
    this.#hasSignedUp = typeof hasSignedUp === 'boolean' ? hasSignedUp : undefined;
    this.#expiresAt = set.expiresAt?.getTime();
    this.#inferredGeneration = set.refreshToken ? 'newer' : 'older';
    this.#keepUntil = 0;
    this.#refreshFailure = undefined;
    if (!this.#sessionTokens.includes(set.token) && this.#sessionTokens.push(set.token) > 8) this.#sessionTokens.shift();
  }

  #isDue(now: number): boolean {
    return this.#expiresAt !== undefined && this.#expiresAt - now <= this.#renewBeforeMs;
  }

  #isExpired(now: number): boolean {
    return this.#expiresAt !== undefined && this.#expiresAt <= now;
  }

  #canRenew(): boolean {
    return this.#reauthenticate !== undefined || this.#canRefresh();
  }

  #canRefresh(): boolean {
    return this.#refresh !== undefined && this.#refreshToken !== undefined && this.generation === 'newer';
  }

  // `refreshOnly`: through `refresh` alone, never `reauthenticate` (no wallet prompt).
  #renew(refreshOnly?: boolean): Promise<string | undefined> {
    if (this.#renewal === undefined) {
      const session = this.#session;
      const before = this.#token;
      const renewal: Promise<string | undefined> = this.#runRenewal(refreshOnly).finally(() => {
        // clear() or setTokens() may have dropped this one, and another may run now.
        if (this.#renewal === renewal) this.#renewal = undefined;
        // It brought nothing for a token still valid (ahead of expiry): that one is used, and
        // not renewed ahead of time again until it expires or a 401 comes.
        if (this.#session === session && this.#token === before && !this.#isExpired(Date.now())) this.#keepUntil = this.#expiresAt ?? 0;
      });
      this.#renewal = renewal;
    }
    return this.#renewal;
  }

  // A caller's own wait for a renewal shared with others: its signal ends the wait only. The
  // renewal is started (`start`) only when the signal has not aborted yet: one already aborted
  // starts none (no wallet prompt for a request that was given up).
  #wait<T>(start: () => Promise<T>, options: TokenWaitOptions = {}): Promise<T> {
    return untilAborted(start, options.signal, async () => (await renewalErrors()).waitEnded());
  }

  // The callback, abandoned (its signal aborted) when it has not settled within its bound, or
  // when clear() or new tokens end the session it renews (what it brings would be discarded: a
  // callback that persists tokens checks its signal first).
  #bounded<T>(callback: 'refresh' | 'reauthenticate', call: (options: { signal: AbortSignal }) => Promise<T>): Promise<T> {
    const controller = (this.#callbackAbort = new AbortController());
    const ms = this.#timeoutsMs[callback];
    return untilAborted(() => call({ signal: controller.signal }), undefined, async () => (controller.abort(), (await renewalErrors()).renewalTimedOut(callback, ms)), ms);
  }

  // Each await is followed by a check that the session is still the one the renewal began in:
  // otherwise (clear(), setTokens() from elsewhere) it stores nothing and changes nothing.
  async #runRenewal(refreshOnly?: boolean): Promise<string | undefined> {
    const session = this.#session;
    const overtaken = async () => (await renewalErrors()).renewalOvertaken();
    const refreshToken = this.#refreshToken;
    if (refreshToken !== undefined && this.#canRefresh()) {
      let failure: unknown;
      let refusedResult = false;
      let tokens: unknown;
      try {
        tokens = await this.#bounded('refresh', (options) => this.#refresh!(refreshToken, options));
        // Refused rather than misread: no new refresh token (they rotate), expiresAt in seconds.
        // Checked here, so that a good refresh never waits for the chunk: only a misread result
        // loads the words of its refusal.
        const { refreshToken: rotated, expiresAt } = (tokens ?? {}) as { refreshToken?: unknown; expiresAt?: unknown };
        const misread = typeof rotated !== 'string' || rotated === '' ? 'refreshToken' : typeof expiresAt === 'number' && expiresAt < 1e11 ? 'expiresAt' : undefined;
        if (misread) {
          refusedResult = true;
          throw (await renewalErrors()).misreadRefreshResult(misread, expiresAt);
        }
      } catch (error) {
        failure = error;
      }
      if (this.#session !== session) throw await overtaken();
      if (failure === undefined) {
        let set: StoredTokens | undefined;
        try {
          set = readTokenSet(tokens as TokenSet | string, true);
        } catch (refused) {
          failure = refused;
          refusedResult = true;
        }
        if (set !== undefined) {
          // Another account's tokens (a refresh that reads a store the tabs or processes share, where
          // another one signed in as another user): they start a new session, as a re-sign-in of
          // another account does, and the requests waiting for this renewal, the earlier account's,
          // are not sent with them.
          const sessionToken = this.#sessionTokens.at(-1);
          if (!sameAccount(sessionToken, set.token)) {
            this.#newSession();
            this.#adoptSet(set);
            throw (await renewalErrors()).signerChanged(sessionToken, set.token, 'refresh');
          }
          return this.#adoptSet(set);
        }
      }
      // No answer (fetch's TypeError, this package's ConnectionError: the device is offline, the
      // connection failed; Deno refused the host, so nothing was sent): nothing says the refresh token is spent. It is kept for the next
      // request's refresh, and nobody is asked to sign in (no wallet prompt) for a network that is
      // down. Not a timeout (a TimeoutError, or refreshTimeoutMs ran out): the service may have
      // rotated the token and answered late, and offering it again would end the session.
      if (!refusedResult && (failure instanceof TypeError || failure instanceof ConnectionError || isPermissionDenial(failure))) {
        if (refreshOnly) return undefined;
        throw (await renewalErrors()).refreshUnreachable(failure);
      }
      // Refused: a rotated refresh token must never be offered twice (reusing it ends the session).
      this.#refreshToken = undefined;
      this.#refreshFailure = [failure, 'refresh', refusedResult, tokens];
      // The kept token of a wallet not yet registered: the request's own 401 stands, or (ahead
      // of expiry) the token is used until it expires.
      if (refreshOnly) return undefined;
      if (this.#reauthenticate === undefined) throw (await renewalErrors()).renewalFailed(failure, 'refresh', refusedResult, tokens);
    }
    if (refreshOnly || this.#reauthenticate === undefined) return undefined;
    const before = this.#token;
    const sessionToken = this.#sessionTokens.at(-1);
    let tokens: unknown;
    let failed = false;
    let rejection: unknown;
    this.#reauthenticating = session;
    try {
      tokens = await this.#bounded('reauthenticate', this.#reauthenticate);
    } catch (error) {
      failed = true;
      rejection = error;
    } finally {
      // Before any await: tokens stored from now on are a new session's.
      if (this.#reauthenticating === session) this.#reauthenticating = undefined;
    }
    if (this.#session !== session) {
      // The sign-in the callback called stored another account's tokens (see sessionHook).
      const switched = this.#accountSwitch;
      if (switched?.session === session) throw (await renewalErrors()).signerChanged(switched.from, switched.to);
      throw await overtaken();
    }
    if (failed) throw (await renewalErrors()).renewalFailed(rejection, 'reauthenticate', false);
    const token = typeof tokens === 'string' ? tokens : (tokens as TokenSet | undefined)?.token;
    if (this.#token !== before && this.#token !== token) {
      // Other tokens than the callback's were stored while it ran (in this session, so by a
      // sign-in begun in it): they are the session now.
      this.#newSession();
      this.#sessionTokens = [this.#token!];
      throw await overtaken();
    }
    let set: StoredTokens;
    try {
      set = readTokenSet(tokens as TokenSet | string, true);
    } catch (refused) {
      throw (await renewalErrors()).renewalFailed(refused, 'reauthenticate', true, tokens);
    }
    // Another account than the session's (the user switched accounts in the wallet before its
    // prompt): its tokens start a new session, and the requests waiting for this renewal were
    // the earlier account's, so none is sent with the new account's token.
    if (!sameAccount(sessionToken, set.token)) {
      this.#newSession();
      this.#adoptSet(set);
      throw (await renewalErrors()).signerChanged(sessionToken, set.token);
    }
    return this.#adoptSet(set);
  }

  #adoptSet(set: StoredTokens): string {
    this.#store(set);
    if (this.#isDue(Date.now())) this.#keepUntil = Infinity;
    return set.token;
  }

  // Tokens a sign-in begun in the renewal's session stores while its reauthenticate callback
  // runs are that renewal's; but when they are another account's, they start a new session at
  // once, before anything can send them for a request of the earlier account (a 401 that comes
  // back meanwhile, a callback that then fails).
  #storeRenewalSignIn(tokens: StoredTokens): void {
    const sessionToken = this.#sessionTokens.at(-1);
    if (!sameAccount(sessionToken, tokens.token)) {
      const from = this.#session;
      this.#newSession();
      this.#accountSwitch = { session: from, from: sessionToken, to: tokens.token };
      this.#adoptSet(tokens);
      return;
    }
    this.#store(tokens);
  }
}

/**
 * Creates a {@link TokenManager}.
 *
 * @example
 * const tokenManager = createTokenManager({ refresh: (refreshToken) => myRefresh(refreshToken) });
 */
export function createTokenManager(options: TokenManagerOptions = {}): TokenManager {
  return new TokenManager(options);
}

// Whether `token` is of the same account as `sessionToken` (unverified claims): the same
// `userId` when both name one (an older-generation user may sign in with several wallets), else
// the same `signerAddress`; a token that says neither, or no session token, is taken to be.
function sameAccount(sessionToken: string | undefined, token: string): boolean {
  if (sessionToken === undefined) return true;
  const [one, other] = [readJwtClaims(sessionToken), readJwtClaims(token)];
  if (typeof one?.userId === 'string' && typeof other?.userId === 'string') return one.userId === other.userId;
  const [signer, otherSigner] = [one?.signerAddress, other?.signerAddress];
  return typeof signer !== 'string' || typeof otherSigner !== 'string' || signer.toLowerCase() === otherSigner.toLowerCase();
}


/** Tokens as stored: checked, `expiresAt` a Date. */
export interface StoredTokens {
  token: string;
  refreshToken?: string | undefined;
  expiresAt: Date | undefined;
}

// Checks tokens before anything is stored: a refused set changes nothing. `received`: just
// received (a callback's), rather than restored by the app (setTokens()).
function readTokenSet(tokens: TokenSet | string, received?: boolean): StoredTokens {
  const set = typeof tokens === 'string' ? { token: tokens } : tokens;
  if (typeof set?.token !== 'string' || set.token === '') {
    throw new InvalidArgumentError('tokens', 'setTokens needs a non-empty access token string, or { token, expiresAt?, refreshToken? }.', 'invalid_tokens');
  }
  if (!isBearerTokenText(set.token)) {
    throw new InvalidArgumentError('tokens', 'The access token cannot be sent in the Authorization header (it holds spaces, line breaks or non-ASCII characters): pass it as the service issued it.', 'invalid_tokens');
  }
  return { token: set.token, refreshToken: set.refreshToken, expiresAt: readExpiresAt(set.expiresAt) ?? accessTokenExpiry(set.token, set.refreshToken, received) };
}

/**
 * When an access token expires on this device's clock, as far as the client can tell. A token
 * just `received` (a sign-in, the tokens of a `refresh` or `reauthenticate` callback): now, its
 * arrival, plus its lifetime (`exp` - `iat`), whatever this device's clock says of `exp` (the
 * service's clock). A token restored (`setTokens()`): its `exp`, but never later than its
 * lifetime from now (it cannot have more left). Without a usable `iat`, the `exp`; without
 * `exp`, for the newer generation (tokens that come with a refresh token), 15 minutes from now,
 * its access tokens' lifetime (reference 5 rule 7); else unknown (renewed after a 401). The one
 * rule for sign-in, `setTokens()` and the tokens of the callbacks.
 *
 * @example
 * accessTokenExpiry(jwtWithoutExp, refreshToken) // a Date 15 minutes from now
 * accessTokenExpiry(jwt, undefined, true) // now + (exp - iat), with a device clock off from the service's
 */
export function accessTokenExpiry(token: string, refreshToken: unknown, received?: boolean): Date | undefined {
  const now = Date.now();
  const exp = readJwtExpiry(token)?.getTime();
  const lifetimeMs = readJwtLifetimeMs(token);
  const counted = lifetimeMs === undefined ? NaN : received ? now + lifetimeMs : Math.min(exp!, now + lifetimeMs);
  // Beyond what a Date holds (an iat far before a far exp): the exp.
  const expiresAt = counted < 864e13 ? counted : exp ?? (refreshToken ? now + 900_000 : undefined);
  return expiresAt === undefined ? undefined : new Date(expiresAt);
}

/**
 * When the access token of `tokens`, just received (the result of your `refresh` at the service,
 * a sign-in), expires on this device's clock, as the TokenManager counts it: their `expiresAt`
 * when given, else now plus the token's lifetime (the JWT's `exp` - `iat`; see
 * {@link TokenSet.expiresAt}). Store it with tokens that another tab or process may take later
 * (their TokenManager takes a given `expiresAt` as it is), so that they are not counted there as
 * brand new, valid for a whole lifetime from when they are taken.
 *
 * @example
 * const tokens = await refreshAtService(refreshToken, signal);
 * localStorage.setItem(key, JSON.stringify({ ...tokens, expiresAt: receivedTokensExpiry(tokens) }));
 */
export function receivedTokensExpiry(tokens: TokenSet): Date | undefined {
  return readExpiresAt(tokens.expiresAt) ?? accessTokenExpiry(tokens.token, tokens.refreshToken, true);
}

// Refresh callbacks often hand over parsed JSON, where a date is a string or epoch milliseconds.
function readExpiresAt(value: unknown): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError('expiresAt', `expiresAt must be a Date (or an ISO string or epoch milliseconds), got ${JSON.stringify(value)}.`, 'invalid_tokens');
  }
  return date;
}
