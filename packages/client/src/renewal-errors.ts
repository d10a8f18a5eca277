// The errors of a token renewal overtaken by a session change (clear(), setTokens()), whose
// callback failed, or given something that is not tokens: a chunk of its own, loaded only when
// one is thrown, so that their messages stay out of the main entry (as the sign-in code does).
import { PartnerClientError } from './errors.js';
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
    `The access token could not be renewed: the ${callback} callback resolved to ${got}, not tokens. It must resolve to ${callback === 'refresh' ? '{ token, refreshToken, expiresAt? }' : 'the sign-in result or the access token'}, and throw when the service refuses (with fetch: if (!response.ok) throw ...). Sign the user in again.`,
    { code: 'token_renewal_failed', cause: refused },
  );
}

/**
 * The error of a `refresh` or `reauthenticate` callback that failed: when `refused`, it resolved
 * to `value`, which `setTokens` refused with `error` (see {@link refusedTokens}); else it threw
 * `error`, which is returned as it is when it is one of this package's, else wrapped in a
 * `TokenRenewalError` (`token_renewal_failed`) whose `cause` is it.
 *
 * @example
 * throw renewalFailed(new Error('User rejected the request'), 'reauthenticate', false);
 */
export function renewalFailed(error: unknown, callback: 'refresh' | 'reauthenticate', refused: boolean, value?: unknown): PartnerClientError {
  if (refused) return refusedTokens(error, callback, value);
  if (error instanceof PartnerClientError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new TokenRenewalError(
    `The access token could not be renewed: the ${callback} callback failed (${reason}). Sign the user in again.`,
    { code: 'token_renewal_failed', cause: error },
  );
}
