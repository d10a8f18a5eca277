/** Decodes hex (either case). Returns undefined for odd lengths or any other character. */
export function decodeHex(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^([\da-f]{2})*$/i.test(text)) return undefined;
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** Lower-case hex of `bytes`. */
export function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
