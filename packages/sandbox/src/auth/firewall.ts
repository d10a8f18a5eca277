import { parseSiweMessage } from 'viem/siwe';
import { ApiError } from '../http/api-error.js';
import { hostOf } from './domain-whitelist.js';
import { MAX_SIWE_MESSAGE_LENGTH } from './siwe-challenge.js';

/**
 * The live service's web application firewall blocks SIWE messages on `127.0.0.1`
 * (reference 5, rule 4) before the service sees them, so this check runs before any
 * validation of the body.
 */
export function assertFirewallAllows(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const message = (body as { message?: unknown }).message;
  // Longer messages are refused by the challenge before any parsing (see MAX_SIWE_MESSAGE_LENGTH).
  if (typeof message !== 'string' || message.length > MAX_SIWE_MESSAGE_LENGTH) return;
  const parsed = parseSiweMessage(message);
  const uriHost = parsed.uri ? safeUrlHost(parsed.uri) : undefined;
  if ((parsed.domain && hostOf(parsed.domain) === '127.0.0.1') || uriHost === '127.0.0.1') {
    throw new ApiError(403, {
      code: 'WAFForbidden',
      message: 'The firewall blocks SIWE messages on 127.0.0.1; use localhost (with any port) as the domain and URI instead.',
    });
  }
}

function safeUrlHost(uri: string): string | undefined {
  try {
    return new URL(uri).hostname;
  } catch {
    return undefined;
  }
}
