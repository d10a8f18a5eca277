// The client reads `exp` (and `iat`) only to know when to renew; it never trusts the token's
// content for anything else, so no signature check is needed (the service checks every request).

/**
 * Reads the `exp` claim of a JWT without verifying it. Returns `undefined` when the token is
 * not a JWT or has no numeric `exp` a Date can hold. That instant is on the service's clock:
 * compared with this device's, it is off by as much as the two clocks are. The TokenManager
 * counts a token's expiry on this device's clock instead (see `TokenManager.expiresAt`).
 *
 * @example
 * readJwtExpiry(token)?.toISOString() // '2026-11-22T11:00:00.000Z'
 */
export function readJwtExpiry(token: string): Date | undefined {
  const exp = readJwtClaims(token)?.exp;
  if (typeof exp !== 'number') return undefined;
  // An `exp` beyond what a Date can hold (year 275760) is as good as none.
  const expiresAt = new Date(exp * 1000);
  return Number.isNaN(expiresAt.getTime()) ? undefined : expiresAt;
}

/**
 * How long a JWT was issued for, `exp` - `iat` in milliseconds, read without verifying it: the
 * same on any clock. `undefined` without a numeric `exp` a Date can hold, or without an `iat`
 * that is a number from 0 up to (not including) `exp`.
 *
 * @example
 * readJwtLifetimeMs(token) // 900000 for a newer-generation access token
 */
export function readJwtLifetimeMs(token: string): number | undefined {
  const iat = readJwtClaims(token)?.iat;
  const exp = readJwtExpiry(token)?.getTime();
  return typeof iat === 'number' && iat >= 0 && exp !== undefined && iat * 1000 < exp ? exp - iat * 1000 : undefined;
}

/**
 * Reads the payload of a JWT without verifying it; `undefined` when it is not a JWT whose
 * payload is a JSON object.
 *
 * @example
 * readJwtClaims(token)?.hasSignedUp // false before registration
 */
export function readJwtClaims(token: string): Record<string, unknown> | undefined {
  try {
    const claims: unknown = JSON.parse(decodeBase64Url(token.split('.')[1] ?? ''));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Decodes a base64url JWT segment to text (UTF-8). @example decodeBase64Url("eyJ9") */
export function decodeBase64Url(segment: string): string {
  // No padding needed: atob decodes unpadded base64 (the forgiving-base64 of the HTML spec, in
  // every runtime of the matrix and in browsers).
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64);
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
