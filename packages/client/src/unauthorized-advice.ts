// The advice on a 401 of the limit and onboarding operations, loaded with their other error
// messages (the limit-errors chunk, the onboarding entry), never with the main entry.
import { readErrorBody } from './error-body.js';
import { SIGN_IN_AGAIN } from './errors.js';

/**
 * What the TokenManager says about a 401: the wallet's unverified `hasSignedUp` claim when the
 * refusal came, and whether a `reauthenticate` callback can sign the user in again.
 *
 * @example
 * const state: TokenState = { hasSignedUp: client.tokenManager.hasSignedUp, canReauthenticate: client.tokenManager.canReauthenticate };
 */
export interface TokenState {
  hasSignedUp?: boolean | undefined;
  canReauthenticate?: boolean | undefined;
}

/**
 * The advice on a 401 of the client's own operations, in this package's terms; it stands in the
 * error's message in place of the service's sentence (which says the same in raw HTTP terms, and
 * is kept as `serviceMessage`). A wallet that has not registered (`hasSignedUp: false`) and a
 * 401 `UserNotRegistered` (or without a code): the registration steps, then `then`; with
 * `older`, the older generation's `olderNotRegistered` (it has no registration operation). Any
 * other 401 to a client whose TokenManager has `reauthenticate`: the token was refused after its
 * renewal, and the next request renews it again. Else the status's own: sign in again, or give
 * the client a TokenManager with a reauthenticate callback.
 *
 * @example
 * unauthorizedAdvice({ code: 'SessionRevoked' }, { canReauthenticate: true }) // 'The service refused the access token even after the TokenManager renewed it ...'
 */
export function unauthorizedAdvice(body: unknown, state: TokenState | undefined, then = '', olderNotRegistered?: string): string {
  const { code } = readErrorBody(body);
  if ((code ?? 'UserNotRegistered') === 'UserNotRegistered' && (state?.hasSignedUp === false || code !== undefined)) {
    return olderNotRegistered ?? `This wallet has not registered a user yet (hasSignedUp: false): register it with requestEmailVerification(), then registerUser() with the one-time password it emails (POST /user)${then}`;
  }
  return state?.canReauthenticate
    ? 'The service refused the access token even after the TokenManager renewed it for this request (a request is renewed once). The next request renews it again, through the reauthenticate callback (a wallet prompt) when a refresh is refused; or sign the user in again now with signInWithEthereum(). A session the service ended (a refresh token used twice, as two tabs restoring the same stored tokens do) needs that new sign-in'
    : SIGN_IN_AGAIN;
}
