// Base64 through atob/btoa, which every supported runtime has (no Buffer in the web build).

/** Standard base64 with `=` padding (for small inputs: keys and signatures). */
export function encodeBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Decodes base64 or base64url, padded or not; undefined for anything else. Like atob, it
 * ignores unused trailing bits: callers that need one spelling per value check for it.
 */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
