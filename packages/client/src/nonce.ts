import { UnexpectedResponseError } from './errors.js';

/**
 * Reads the nonce from the body of `GET /api/v1/auth/nonce`: the service answers a bare
 * `text/plain` string; a JSON string or `{"nonce": "..."}` is accepted too.
 *
 * @example
 * readNonce('a1b2c3d4e5f6\n') // 'a1b2c3d4e5f6'
 * readNonce('{"nonce":"a1b2c3d4e5f6"}') // 'a1b2c3d4e5f6'
 */
export function readNonce(body: string): string {
  let text = body.trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      const nonce = typeof parsed === 'object' && parsed !== null ? (parsed as { nonce?: unknown }).nonce : undefined;
      text = typeof nonce === 'string' ? nonce.trim() : '';
    } catch {
      text = '';
    }
  }
  text = text.replace(/^["']|["']$/g, '').trim();
  // EIP-4361: at least 8 alphanumeric characters.
  if (!/^[A-Za-z0-9]{8,}$/.test(text)) {
    throw new UnexpectedResponseError(
      `The nonce endpoint answered ${JSON.stringify(body.slice(0, 80))}, which is not a SIWE nonce (8 or more letters and digits). Check baseUrl.`,
      { code: 'invalid_nonce' },
    );
  }
  return text;
}
