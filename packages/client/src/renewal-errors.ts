// The errors of a token renewal overtaken by a session change (clear(), setTokens()) or given
// something that is not tokens: a chunk of its own, loaded only when one is thrown, so that
// their messages stay out of the main entry (as the sign-in code does).
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
