import type { AccessTokenClaims, Generation, TokenService } from '../auth/token-service.js';
import { ApiError } from '../http/api-error.js';
import type { RouteRequest } from '../http/router.js';
import type { UserRegistry } from '../users/user-registry.js';

/** Checks `Authorization: Bearer <token>` (signature, expiry, session); a 401 otherwise. */
export async function authenticate(request: RouteRequest, tokens: TokenService): Promise<AccessTokenClaims> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    throw new ApiError(401, {
      code: header === undefined ? 'MissingToken' : 'MalformedAuthorization',
      message: 'Send the access token as "Authorization: Bearer <token>"; get one from POST /api/v1/auth/challenge.',
    });
  }
  return tokens.verify(match[1]!);
}

/**
 * The signed-in wallet and the id of its user, if it has one. The user is the token's
 * `userId`, or the signer's wallet's user for a token issued before registration, so a
 * client need not sign in again right after `registerUser`. (Ids only: the limit GET is the
 * hot path, and reading a user copies it.)
 */
export async function signedIn(request: RouteRequest, tokens: TokenService, users: UserRegistry): Promise<{ claims: AccessTokenClaims; userId: string | undefined }> {
  const claims = await authenticate(request, tokens);
  if (claims.userId !== undefined) {
    if (!users.has(claims.userId)) throw new ApiError(401, { code: 'UnknownUser', message: 'The token belongs to a user that no longer exists; sign in again with a registered wallet.' });
    return { claims, userId: claims.userId };
  }
  return { claims, userId: users.userIdByWallet(claims.signerAddress) };
}

/**
 * Reference 5 rule 1: a signer without a user is refused on authenticated routes with
 * `401`; the message says how to register on the sandbox's generation.
 */
export async function registeredUserId(request: RouteRequest, tokens: TokenService, users: UserRegistry): Promise<string> {
  const { userId } = await signedIn(request, tokens, users);
  if (userId !== undefined) return userId;
  throw notRegistered(tokens.generation);
}

/** The 401 for a signer without a user, saying how to register on `generation`. */
export function notRegistered(generation: Generation): ApiError {
  return new ApiError(401, {
    code: 'UserNotRegistered',
    message:
      generation === 'newer'
        ? 'This wallet has no user yet (token claim hasSignedUp: false); register first: POST /email/verification, then POST /user with the email and its one-time password.'
        : 'This wallet owns no registered account (token claim hasSignedUp: false); register it first (sandbox: --user ADDRESS or POST /__sandbox/users).',
  });
}
