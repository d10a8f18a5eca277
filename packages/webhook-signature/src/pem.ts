import { decodeBase64, encodeBase64 } from './base64.js';

// The body holds no '-' (base64, line breaks): matching it as [^-]* keeps the search linear. A
// lazy [\s\S]*? rescans the rest of the text from every BEGIN line, quadratic on hostile text.
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \1-----/;
// Keys pasted into environment variables often carry literal "\n" instead of line breaks.
const PEM_FILLER = /\s+|\\[nr]/g;

/** The label and DER bytes of the first PEM block, or undefined if there is none readable. */
export function parsePem(text: string): { label: string; der: Uint8Array<ArrayBuffer> } | undefined {
  const block = PEM_BLOCK.exec(text);
  const der = block && decodeBase64(block[2]!.replace(PEM_FILLER, ''));
  return der ? { label: block[1]!, der } : undefined;
}

/** Removes whitespace and literal "\n" escapes from key text. */
export function compactKeyText(text: string): string {
  return text.replace(PEM_FILLER, '');
}

/** PEM in the layout OpenSSL and node:crypto write: 64-character lines, trailing newline. */
export function encodePem(label: string, der: Uint8Array): string {
  const body = encodeBase64(der).replace(/.{64}(?=.)/g, '$&\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
