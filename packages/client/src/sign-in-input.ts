import { describeValue as describe } from './describe-value.js';
import { InvalidArgumentError, type InvalidArgumentErrorCode } from './errors.js';

/**
 * The bounds of `ttlInSeconds` (reference section 8: 1 hour to 24 hours).
 *
 * @example
 * TTL_IN_SECONDS_RANGE.max // 86400
 */
export const TTL_IN_SECONDS_RANGE = { min: 3_600, max: 86_400 } as const;

/**
 * The part of sign-in input that is checked before any request.
 *
 * @example
 * assertSignInInput(params satisfies SignInInput);
 */
export interface SignInInput {
  address: unknown;
  signMessage: unknown;
  domain: unknown;
  uri: unknown;
  chainId: unknown;
  statement?: unknown;
  ttlInSeconds?: unknown;
}

// The service's firewall blocks SIWE messages that mention 127.0.0.1 (reference 5, rule 4);
// any 127/8 address is loopback and fails the same way, wherever the message has it.
const LOOPBACK_IPV4 = /(^|[^\d.])127(\.\d{1,3}){3}(?![\d.]*\d)/;

/**
 * Throws an {@link InvalidArgumentError} for the first sign-in argument the service would
 * refuse, so that no nonce is spent and no wallet prompt is shown for a doomed attempt.
 *
 * @example
 * assertSignInInput({ address, signMessage, domain: '127.0.0.1:3000', uri, chainId: 100 }); // throws, code 'domain_blocked_by_waf'
 */
export function assertSignInInput(input: SignInInput): void {
  if (typeof input !== 'object' || input === null) {
    fail('params', 'signInWithEthereum needs { address, signMessage, domain, uri, chainId }, e.g. { ...signerFromViemAccount(account), domain: "localhost:3000", uri: "http://localhost:3000", chainId: 100 }', 'invalid_option');
  }
  const { address, signMessage, domain, uri, chainId, statement, ttlInSeconds } = input;
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) {
    fail('address', `address must be the signer's 0x-prefixed 20-byte hex address, got ${describe(address)}`, 'invalid_address');
  }
  if (typeof signMessage !== 'function') {
    fail('signMessage', 'signMessage must be a function (message) => Promise<hex signature>; signerFromViemAccount(account) makes one from a viem account', 'invalid_signer');
  }
  if (typeof domain !== 'string' || domain.trim() === '') {
    fail('domain', `domain must be the host (and port) of the page asking for the signature, e.g. "app.example.com" or "localhost:3000", got ${describe(domain)}`, 'invalid_domain');
  }
  if (domain.includes('/')) {
    fail('domain', `domain must be a host and optional port without scheme or path, e.g. "app.example.com", got ${describe(domain)}`, 'invalid_domain');
  }
  if (LOOPBACK_IPV4.test(domain)) {
    fail('domain', `domain ${describe(domain)} would be blocked by the service's firewall (WAFForbidden): SIWE messages must not use 127.0.0.1. Use "localhost" (any port), which is always allowed`, 'domain_blocked_by_waf');
  }
  if (typeof uri !== 'string' || !URL.canParse(uri)) {
    fail('uri', `uri must be an absolute URI such as "https://app.example.com/login", got ${describe(uri)}`, 'invalid_uri');
  }
  if (LOOPBACK_IPV4.test(uri)) {
    fail('uri', `uri ${describe(uri)} would be blocked by the service's firewall (WAFForbidden): SIWE messages must not use 127.0.0.1. Use "localhost" instead`, 'domain_blocked_by_waf');
  }
  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId <= 0) {
    fail('chainId', `chainId must be the EIP-155 chain id of the wallet as a positive integer (100 for Gnosis chain), got ${describe(chainId)}`, 'invalid_chain_id');
  }
  if (statement !== undefined && (typeof statement !== 'string' || statement.includes('\n'))) {
    fail('statement', 'statement must be a single line of text', 'invalid_statement');
  }
  if (statement !== undefined && LOOPBACK_IPV4.test(statement)) {
    fail('statement', `statement ${describe(statement)} would be blocked by the service's firewall (WAFForbidden): SIWE messages must not mention 127.0.0.1`, 'domain_blocked_by_waf');
  }
  if (ttlInSeconds !== undefined && (typeof ttlInSeconds !== 'number' || !Number.isInteger(ttlInSeconds) || ttlInSeconds < TTL_IN_SECONDS_RANGE.min || ttlInSeconds > TTL_IN_SECONDS_RANGE.max)) {
    fail('ttlInSeconds', `ttlInSeconds must be a whole number of seconds from ${TTL_IN_SECONDS_RANGE.min} (1 hour) to ${TTL_IN_SECONDS_RANGE.max} (24 hours), got ${describe(ttlInSeconds)}`, 'ttl_out_of_range');
  }
}

function fail(argument: string, message: string, code: InvalidArgumentErrorCode): never {
  throw new InvalidArgumentError(argument, `${message}.`, code);
}
