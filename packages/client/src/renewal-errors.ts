// The errors of a token renewal overtaken by a session change (clear(), setTokens()), whose
// callback failed, did not settle within its bound, or gave something that is not tokens (and
// the check of a refresh result), and of a caller's wait for a renewal that its signal
// ended: a chunk of its own, loaded only when needed, so that their messages stay out
// of the main entry (as the sign-in code does).
import { AbortError, InvalidArgumentError, PartnerClientError } from './errors.js';
import { readJwtClaims } from './jwt-expiry.js';
import { TokenRenewalError } from './token-manager.js';

/**
 * The error of work begun in a session that `clear()` or new tokens have ended since.
 *
 * @example
 * throw sessionChanged('The token renewal');
 */
export function sessionChanged(what: string, outcome = 'its tokens were discarded, and the request waiting for them was not sent again'): TokenRenewalError {
  return new TokenRenewalError(
    `${what} was overtaken: clear() (a sign-out) or new tokens (setTokens(), another sign-in) replaced the session meanwhile, so ${outcome}. Do it again if it is still wanted for the current session.`,
    { code: 'session_changed' },
  );
}

/**
 * `sessionChanged` of a renewal: its tokens were discarded.
 *
 * @example
 * throw renewalOvertaken();
 */
export function renewalOvertaken(): TokenRenewalError {
  return sessionChanged('The token renewal');
}

/**
 * `session_changed` of a renewal whose `reauthenticate` signed in (or whose `refresh` returned
 * tokens of) another account than the session's (`fromToken`'s): its tokens (`toToken`) start a
 * new session, and the requests waiting for it are not sent. The message names both accounts
 * from the tokens' claims.
 *
 * @example
 * throw signerChanged(sessionToken, newToken);
 */
export function signerChanged(fromToken: string | undefined, toToken: string, via: 'reauthenticate' | 'refresh' = 'reauthenticate'): TokenRenewalError {
  const [from, to] = [accountOf(fromToken), accountOf(toToken)];
  // One wallet naming another user means another deployment (baseUrl), or a sandbox that
  // restarted, not a switch in the wallet.
  const why = from.wallet.toLowerCase() === to.wallet.toLowerCase()
    ? 'the same wallet, but the service names another user for it now (another deployment at baseUrl, or a sandbox that restarted?)'
    : via === 'refresh'
      ? 'the account of the session it refreshed (another tab or process signed in as that account and stored its tokens where your refresh callback reads them?)'
      : 'the account of the session it renewed (the user switched accounts in the wallet?)';
  const what = via === 'refresh' ? 'The refresh callback returned tokens of' : 'The reauthenticate callback signed in';
  return new TokenRenewalError(
    `${what} ${to.name}, not ${from.name}, ${why}: its tokens start a new session, and the requests waiting for the renewal, made for ${from.name}, were not sent with them. Send them again if they are still wanted for the new account.`,
    { code: 'session_changed' },
  );
}

// The account a token names: its signer, and its user once it has one.
function accountOf(token: string | undefined): { wallet: string; name: string } {
  const claims = token === undefined ? undefined : readJwtClaims(token);
  const wallet = typeof claims?.signerAddress === 'string' ? claims.signerAddress : 'an unknown wallet';
  return { wallet, name: typeof claims?.userId === 'string' ? `${wallet} (user ${claims.userId})` : wallet };
}

/**
 * `sessionChanged` of a wait (`waitForLimitSync`, `waitForOnboardingStatus`) begun in a session
 * that has ended since: it stops, so that it neither reads the next user's state as its own nor
 * sends a poll without a token (whose 401 would ask for a sign-in).
 *
 * @example
 * throw waitOvertaken('waitForLimitSync');
 */
export function waitOvertaken(what: string): TokenRenewalError {
  return sessionChanged(what, 'it stopped, and read nothing in the new session (a wait for one user never reports the next one\'s state)');
}

/**
 * `sessionChanged` of a request answered 401 with a token of an earlier session: it is not sent
 * again with the current session's token.
 *
 * @example
 * throw requestOvertaken();
 */
export function requestOvertaken(): TokenRenewalError {
  return sessionChanged('A request answered 401', 'it was not sent again with the new session\'s token');
}

/**
 * The error of a `refresh` or `reauthenticate` callback that resolved to something `setTokens`
 * refused (`refused`, its `InvalidArgumentError`): a refresh written as `return response.json()`
 * turns a refused refresh into an error body. It says what the callback resolved to (its keys
 * and a `code`, never values) and what it must do instead.
 *
 * @example
 * throw refusedTokens(refused, 'refresh', { code: 'RefreshTokenReused', message: 'Session ended' });
 */
export function refusedTokens(refused: unknown, callback: 'refresh' | 'reauthenticate', value: unknown): TokenRenewalError {
  const code = (value as { code?: unknown } | null)?.code;
  const got =
    value === null || typeof value !== 'object'
      ? typeof value === 'string' ? 'a string no Authorization header can carry' : String(value)
      : `an object with ${Object.keys(value).slice(0, 8).join(', ') || 'no keys'}${typeof code === 'string' ? ` (code ${JSON.stringify(code.slice(0, 64))}: an error body?)` : ''}`;
  return new TokenRenewalError(
    `The access token could not be renewed: the ${callback} callback resolved to ${got}, not tokens${refused instanceof Error ? ` (${refused.message.replace(/\.$/, '')})` : ''}. It must resolve to ${callback === 'refresh' ? '{ token, refreshToken, expiresAt? }' : 'the sign-in result or the access token'}, and throw when the service refuses (with fetch: if (!response.ok) throw ...). Sign the user in again.`,
    { code: 'token_renewal_failed', cause: refused },
  );
}

/**
 * The error of a `refresh` or `reauthenticate` callback that failed: when `refused`, it resolved
 * to `value`, which `setTokens` refused with `error` (see {@link refusedTokens}); else it threw
 * `error`, which is returned as it is when it is one of this package's, else wrapped in a
 * `TokenRenewalError` (`token_renewal_failed`) whose `cause` is it. `earlier`: a `refresh` that
 * failed so at an earlier renewal, told at a later 401 that nothing could renew (always a new
 * `TokenRenewalError`, whose `cause` is the callback's error, or that failure itself).
 *
 * @example
 * throw renewalFailed(new Error('User rejected the request'), 'reauthenticate', false);
 */
export function renewalFailed(error: unknown, callback: 'refresh' | 'reauthenticate', refused: boolean, value?: unknown, earlier?: boolean): PartnerClientError {
  if (earlier) {
    const said = renewalFailed(error, callback, refused, value).message.replace(/^The access token could not be renewed: /, '').replace(/ Sign the user in again\.$/, '');
    return new TokenRenewalError(
      `The service refused the access token (401) and nothing can renew it: at an earlier renewal, ${said} Its refresh token was dropped then (a rotated refresh token is never offered twice), and there is no reauthenticate callback. Sign the user in again (signInWithEthereum), or give the TokenManager a reauthenticate callback to fall back on.`,
      { code: 'token_renewal_failed', cause: error },
    );
  }
  if (refused) return refusedTokens(error, callback, value);
  if (error instanceof PartnerClientError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new TokenRenewalError(
    `The access token could not be renewed: the ${callback} callback failed (${reason}). Sign the user in again.`,
    { code: 'token_renewal_failed', cause: error },
  );
}

/**
 * The error of a `refresh` that got no answer (`error`: fetch's `TypeError`, or a
 * `ConnectionError` of this package): the refresh token is kept and offered again at the next
 * request, and no wallet prompt was shown. (A timeout is not taken for no answer: the service
 * may have rotated the token.)
 *
 * @example
 * throw refreshUnreachable(new TypeError('Failed to fetch')); // code 'token_refresh_unreachable'
 */
export function refreshUnreachable(error: unknown): TokenRenewalError {
  const reason = error instanceof Error ? error.message : String(error);
  return new TokenRenewalError(
    `The access token could not be renewed: the refresh callback got no answer (${reason}), so the service could not be reached. The refresh token is kept and tried again at the next request; no wallet prompt was shown. Check the network connection.`,
    { code: 'token_refresh_unreachable', cause: error },
  );
}

/**
 * The error of a `refresh` or `reauthenticate` callback that did not settle within its bound
 * (`refreshTimeoutMs`, `reauthenticateTimeoutMs`): the renewal is abandoned.
 *
 * @example
 * throw renewalTimedOut('refresh', 30_000);
 */
export function renewalTimedOut(callback: 'refresh' | 'reauthenticate', ms: number): TokenRenewalError {
  return new TokenRenewalError(
    `The access token could not be renewed: the ${callback} callback did not settle within ${ms} ms (the TokenManager option ${callback}TimeoutMs), so the renewal was abandoned: its signal was aborted, and what it brings later is discarded. The next request starts a new renewal. ${
      callback === 'refresh' ? 'Check that the refresh endpoint answers, and that refresh throws when it fails.' : 'The wallet prompt may have been left open; raise reauthenticateTimeoutMs to give the user longer.'
    }`,
    { code: 'token_renewal_timeout' },
  );
}

/**
 * The refusal of a `refresh` result that would be misread (the TokenManager checks which field):
 * no new `refreshToken` (refresh tokens rotate; one read from `refresh_token` in snake case), or
 * `expiresAt` a number of epoch seconds (as milliseconds, a date in 1970).
 *
 * @example
 * throw misreadRefreshResult('expiresAt', 1_700_000_000); // InvalidArgumentError, argument 'expiresAt'
 */
export function misreadRefreshResult(field: 'refreshToken' | 'expiresAt', expiresAt: unknown): InvalidArgumentError {
  return field === 'refreshToken'
    ? new InvalidArgumentError('refreshToken', 'refresh must resolve to { token, refreshToken, expiresAt? } with the new refreshToken (refresh tokens rotate: each refresh brings a new one), not refresh_token or none.', 'invalid_tokens')
    : new InvalidArgumentError('expiresAt', `expiresAt must be a Date, an ISO string or epoch milliseconds; ${String(expiresAt)} looks like epoch seconds (as milliseconds, a date in 1970): multiply it by 1000.`, 'invalid_tokens');
}

/**
 * The error of a caller's wait for a token renewal that its signal ended; the renewal goes on
 * for the others.
 *
 * @example
 * throw waitEnded();
 */
export function waitEnded(): AbortError {
  return new AbortError("Cancelled by the caller's AbortSignal while waiting for a token renewal (the refresh or reauthenticate callback), so the request was not sent. The renewal goes on for the requests that wait for it.", { code: 'aborted' });
}
