import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { ApiError } from '../http/api-error.js';

/**
 * Which infrastructure generation the sandbox imitates (reference 5 and 9):
 * - `older`: one JWT whose lifetime is the requested `ttlInSeconds` (1 to 24 hours);
 * - `newer`: a 15-minute access token plus a 7-day refresh token that rotates on every
 *   refresh; presenting a refresh token twice ends the whole session.
 *
 * @example
 * ```ts
 * await startSandbox({ generation: 'newer' });
 * ```
 */
export type Generation = 'older' | 'newer';

export const ACCESS_TOKEN_LIFETIME_NEWER_SECONDS = 15 * 60;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 7 * 24 * 60 * 60;

/**
 * The claims the live service puts in its JWT (service facts), plus `sub` and, newer
 * generation, `sid`. A signer without a user yet gets `hasSignedUp: false` and no `userId`
 * (`sub` is then the signer's address).
 */
export interface AccessTokenClaims {
  sub: string;
  userId?: string;
  signerAddress: string;
  chainId: string;
  hasSignedUp: boolean;
  iat: number;
  exp: number;
  sid?: string;
}

/** The body of a successful sign-in or refresh (the spec's AccessToken). */
export interface IssuedTokens {
  token: string;
  refreshToken?: string;
}

interface RefreshRecord {
  sessionId: string;
  userId?: string;
  signerAddress: string;
  chainId: string;
  expiresAt: number;
  used: boolean;
}

const MAX_REMEMBERED_TOKENS = 10_000;

const unauthorized = (code: string, message: string) => new ApiError(401, { code, message });

/**
 * Issues and checks the sandbox's JWTs (HS256 with a secret made at start, so tokens of one
 * sandbox run are worthless to another) and, in the newer generation, the rotating
 * refresh tokens and their sessions.
 */
export class TokenService {
  readonly #secret = new Uint8Array(randomBytes(32));
  readonly #refreshTokens = new Map<string, RefreshRecord>();
  readonly #revokedSessions = new Set<string>();
  // Tokens already verified once: a client sends the same token on every request, and the
  // HMAC check dominates the cost of the limit GET. Expiry and revocation are still checked.
  readonly #verified = new Map<string, AccessTokenClaims>();

  constructor(
    readonly generation: Generation,
    private readonly now: () => number,
  ) {}

  /** Issues the tokens of a sign-in; without `userId` the signer has not registered yet. */
  async issue(input: { userId?: string; signerAddress: string; chainId: string; ttlInSeconds: number }): Promise<IssuedTokens> {
    if (this.generation === 'older') {
      return { token: await this.#sign(input, input.ttlInSeconds) };
    }
    return this.#startSessionTokens({ ...input, sessionId: randomUUID() });
  }

  /** Checks a bearer token; throws a 401 {@link ApiError} that says what to do when it is unusable. */
  async verify(token: string): Promise<AccessTokenClaims> {
    const known = this.#verified.get(token);
    if (known) return this.#checkStillValid(known);
    let claims: AccessTokenClaims;
    try {
      const result = await jwtVerify(token, this.#secret, {
        algorithms: ['HS256'],
        issuer: 'capi-sandbox',
        currentDate: new Date(this.now()),
        clockTolerance: 0,
      });
      claims = result.payload as unknown as AccessTokenClaims;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        throw this.#expired();
      }
      throw unauthorized('InvalidToken', 'The access token is not one this sandbox issued (bad signature, malformed, or from an earlier sandbox run); sign in again.');
    }
    if (this.#verified.size >= MAX_REMEMBERED_TOKENS) this.#verified.clear();
    this.#verified.set(token, claims);
    return this.#checkStillValid(claims);
  }

  // The older generation has no refresh token (reference 5 rule 5): its only way back is a new
  // sign-in, so only the newer generation's message offers the refresh.
  #expired(): ApiError {
    const signInAgain = 'sign in again (new nonce, sign the SIWE message, POST /api/v1/auth/challenge)';
    return this.generation === 'older'
      ? unauthorized('TokenExpired', `The access token has expired; ${signInAgain}. The older generation has no refresh token.`)
      : unauthorized('TokenExpired', `The access token has expired; refresh it with the refresh token of its sign-in, or ${signInAgain}.`);
  }

  #checkStillValid(claims: AccessTokenClaims): AccessTokenClaims {
    if (claims.exp * 1000 <= this.now()) {
      throw this.#expired();
    }
    if (claims.sid !== undefined && this.#revokedSessions.has(claims.sid)) {
      throw unauthorized('SessionRevoked', 'This session was ended because one of its refresh tokens was used twice; sign in again.');
    }
    return claims;
  }

  /**
   * Newer generation: trades a refresh token for a new pair; reuse of a spent one ends the
   * session. `userIdOf` names the signer's user now, so a session begun before registration
   * gets `userId` once the user exists.
   */
  async refresh(refreshToken: string, userIdOf: (signerAddress: string) => string | undefined = () => undefined): Promise<IssuedTokens> {
    const record = this.#refreshTokens.get(refreshToken);
    if (!record) throw unauthorized('InvalidRefreshToken', 'This refresh token was not issued by this sandbox run; sign in again.');
    if (this.#revokedSessions.has(record.sessionId)) {
      throw unauthorized('SessionRevoked', 'This session was ended because one of its refresh tokens was used twice; sign in again.');
    }
    if (record.used) {
      // Reuse means the token leaked or a client kept a stale copy: end the session for everyone.
      this.#revokedSessions.add(record.sessionId);
      throw unauthorized('RefreshTokenReused', 'This refresh token was already used, so the session has been ended; sign in again and always keep the newest refresh token.');
    }
    if (record.expiresAt <= this.now()) throw unauthorized('RefreshTokenExpired', 'This refresh token has expired (7 days); sign in again.');
    record.used = true;
    const userId = record.userId ?? userIdOf(record.signerAddress);
    return this.#startSessionTokens({ ...record, ...(userId !== undefined ? { userId } : {}) });
  }

  async #startSessionTokens(input: { userId?: string; signerAddress: string; chainId: string; sessionId: string }): Promise<IssuedTokens> {
    const token = await this.#sign(input, ACCESS_TOKEN_LIFETIME_NEWER_SECONDS, input.sessionId);
    const refreshToken = randomBytes(32).toString('base64url');
    this.#refreshTokens.set(refreshToken, {
      sessionId: input.sessionId,
      ...(input.userId !== undefined ? { userId: input.userId } : {}),
      signerAddress: input.signerAddress,
      chainId: input.chainId,
      expiresAt: this.now() + REFRESH_TOKEN_LIFETIME_SECONDS * 1000,
      used: false,
    });
    return { token, refreshToken };
  }

  async #sign(input: { userId?: string; signerAddress: string; chainId: string }, lifetimeSeconds: number, sessionId?: string): Promise<string> {
    const issuedAt = Math.floor(this.now() / 1000);
    const claims: Record<string, unknown> = {
      ...(input.userId !== undefined ? { userId: input.userId } : {}),
      signerAddress: input.signerAddress,
      chainId: input.chainId,
      hasSignedUp: input.userId !== undefined,
    };
    if (sessionId !== undefined) claims.sid = sessionId;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('capi-sandbox')
      .setSubject(input.userId ?? input.signerAddress)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + lifetimeSeconds)
      .sign(this.#secret);
  }
}
