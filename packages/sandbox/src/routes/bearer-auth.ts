import type { AccessTokenClaims, TokenService } from '../auth/token-service.js';
import { ApiError } from '../http/api-error.js';
import type { RouteRequest } from '../http/router.js';
import type { UserRegistry } from '../users/user-registry.js';

/** Checks `Authorization: Bearer <token>` and that its user still exists; a 401 otherwise. */
export async function authenticate(request: RouteRequest, tokens: TokenService, users: UserRegistry): Promise<AccessTokenClaims> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    throw new ApiError(401, {
      code: header === undefined ? 'MissingToken' : 'MalformedAuthorization',
      message: 'Send the access token as "Authorization: Bearer <token>"; get one from POST /api/v1/auth/challenge.',
    });
  }
  const claims = await tokens.verify(match[1]!);
  if (!users.has(claims.userId)) {
    throw new ApiError(401, { code: 'UnknownUser', message: 'The token belongs to a user that no longer exists; sign in again with a registered wallet.' });
  }
  return claims;
}
