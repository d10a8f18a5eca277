// The client reads `exp` only to know when to renew; it never trusts the token's content
// for anything else, so no signature check is needed (the service checks every request).

/**
 * Reads the `exp` claim of a JWT without verifying it. Returns `undefined` when the token is
 * not a JWT or has no numeric `exp` a Date can hold.
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
