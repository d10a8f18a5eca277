/** Decodes hex (either case). Returns undefined for odd lengths or any other character. */
export function decodeHex(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}
