import { ParsedMessage } from '@spruceid/siwe-parser';
import { getAddress, isAddress, type Address } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { ApiError } from '../http/api-error.js';
import type { UserRegistry } from '../users/user-registry.js';
import type { DomainWhitelist } from './domain-whitelist.js';
import type { NonceStore } from './nonce-store.js';
import { verifySiweSignature, type SmartAccountSignatureVerifier } from './signature-verifier.js';
import type { IssuedTokens, TokenService } from './token-service.js';

/** The body of `POST /api/v1/auth/challenge`, already checked against the spec's schema. */
export interface ChallengeRequest {
  message: string;
  signature: string;
  ttlInSeconds: number;
}

export interface SiweChallengeDependencies {
  nonces: NonceStore;
  whitelist: DomainWhitelist;
  users: UserRegistry;
  tokens: TokenService;
  now: () => number;
  /** How far `advanceClock` has moved the sandbox clock ahead of real time, to say so when a message is refused for its times. */
  clockAheadMs?: () => number;
  verifySmartAccountSignature?: SmartAccountSignatureVerifier;
}

/**
 * The longest SIWE message the sandbox parses. Real messages are a few hundred characters;
 * viem's parser takes time quadratic in the length of a line that repeats a field label
 * (1 MB of "URI: " held the event loop for minutes), so longer ones are refused unparsed.
 */
export const MAX_SIWE_MESSAGE_LENGTH = 8192;

const REQUIRED_FIELDS = ['domain', 'address', 'uri', 'version', 'chainId', 'nonce', 'issuedAt'] as const;

/**
 * viem's parser is lenient: it reads `Version: 2`, `Issued At: yesterday` or `URI: not a uri`
 * without complaint, and an unreadable `Expiration Time` would never expire. EIP-4361 (and
 * the live service's parser) refuse them, so the sandbox does too.
 */
function malformedFields(parsed: ReturnType<typeof parseSiweMessage>): string[] {
  const problems: string[] = [];
  if (parsed.version !== '1') problems.push(`Version must be 1, got ${JSON.stringify(parsed.version)}`);
  if (!Number.isSafeInteger(parsed.chainId) || parsed.chainId! < 1) problems.push('Chain ID must be a positive EIP-155 chain id such as 100');
  if (!URL.canParse(parsed.uri!)) problems.push(`URI must be an absolute URI such as https://app.example.com, got ${JSON.stringify(parsed.uri)}`);
  for (const resource of parsed.resources ?? []) {
    if (!URL.canParse(resource)) problems.push(`every Resources entry must be an absolute URI, got ${JSON.stringify(resource)}`);
  }
  for (const [label, value] of [['Issued At', parsed.issuedAt], ['Expiration Time', parsed.expirationTime], ['Not Before', parsed.notBefore]] as const) {
    if (value !== undefined && Number.isNaN(value.getTime())) problems.push(`${label} must be an ISO 8601 date-time`);
  }
  return problems;
}

/**
 * viem's parser reads each field wherever its label is, so it passes a message with a line
 * slipped in between the statement and the fields ("I approve the transfer of all my funds."),
 * text after the last field, a statement over two lines or one with characters EIP-4361 does
 * not allow (`"`, `%`, non-ASCII). The siwe package's ABNF parser, which backends verifying
 * SIWE commonly use, refuses each of them, and so does the sandbox: a client that builds them
 * fails here, not first in production.
 */
function grammarProblem(message: string): string | undefined {
  try {
    new ParsedMessage(message);
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // The parser's report ends with apg's state, whose maxMatched is how far it read: the
    // first character it could not take.
    const offset = Number(/"maxMatched":(\d+)/.exec(reason)?.[1]);
    let where = '';
    if (Number.isInteger(offset) && offset <= message.length) {
      const line = message.slice(0, offset).split('\n').length;
      const at = offset < message.length ? `at ${JSON.stringify(message[offset])}` : 'at its end';
      where = ` at line ${line} (${JSON.stringify((message.split('\n')[line - 1] ?? '').slice(0, 120))}), ${at}`;
    }
    return `message does not follow the EIP-4361 grammar${where}: the statement is one line of letters, digits, spaces and - . _ ~ : / ? # [ ] @ ! $ & ' ( ) * + , ; = only (no double quotes, %, or non-ASCII), and only the EIP-4361 fields follow it, in order, with nothing after them. Build it with viem's createSiweMessage or the siwe package.`;
  }
}

/**
 * After `advanceClock`, a message built from the real clock with a short `expirationTime` has
 * expired on the sandbox clock, and signing a fresh one fails the same way: say why.
 */
function clockAheadNote(aheadMs: number): string {
  if (aheadMs <= 0) return '';
  const minutes = aheadMs / 60_000;
  const shown = minutes >= 1 ? `${Number(minutes.toFixed(1))} minute${minutes === 1 ? '' : 's'}` : `${Math.round(aheadMs / 1000)} seconds`;
  return ` The sandbox clock is ${shown} ahead of real time (advanceClock, or POST /__sandbox/clock), and the message's times are checked against it: build issuedAt and expirationTime from the sandbox clock (the real time plus ${shown}), or give the message an expirationTime more than ${shown} away.`;
}

// Older-generation authentication answers its refusals as `{ error }` (see http/error-body.ts).
const rejected = (error: string) => new ApiError(401, { error });

/**
 * Verifies a SIWE challenge the way the live service does (reference 4.2 and 5) and issues
 * the tokens. The nonce is consumed before the first `await`, so concurrent challenges with
 * one nonce cannot both pass, and by every attempt that names it, refused or not.
 */
export async function answerSiweChallenge(request: ChallengeRequest, deps: SiweChallengeDependencies): Promise<IssuedTokens> {
  if (request.message.length > MAX_SIWE_MESSAGE_LENGTH) {
    throw new ApiError(422, {
      message: `message is ${request.message.length} characters long; a SIWE message is a few hundred, and the sandbox reads at most ${MAX_SIWE_MESSAGE_LENGTH}. Send the EIP-4361 message the wallet signed.`,
    });
  }
  const parsed = parseSiweMessage(request.message);
  // Reference 5 rule 2: every attempt needs a new nonce. An attempt spends the nonce its message
  // names however it ends (a 422 for the message's form and a 403 for its domain too), so that
  // a client signing again over the nonce of a refused attempt is refused here, not only live.
  const nonce = parsed.nonce === undefined ? undefined : deps.nonces.consume(parsed.nonce);
  const missing = REQUIRED_FIELDS.filter((field) => parsed[field] === undefined);
  if (missing.length > 0) {
    throw new ApiError(422, {
      message: `message is not a complete EIP-4361 SIWE message (missing ${missing.join(', ')}); build it with viem's createSiweMessage or the siwe package.`,
    });
  }
  const malformed = malformedFields(parsed);
  if (malformed.length > 0) {
    throw new ApiError(422, {
      message: `message is not a valid EIP-4361 SIWE message: ${malformed.join('; ')}; build it with viem's createSiweMessage or the siwe package.`,
    });
  }
  // viem's strict check lets an all-lowercase address through (it has no checksum to fail);
  // EIP-4361 and the siwe package require the EIP-55 form, so only that exact form passes.
  if (!isAddress(parsed.address!, { strict: false }) || parsed.address !== getAddress(parsed.address!)) {
    throw new ApiError(422, { message: `message address ${parsed.address} is not an EIP-55 checksummed address; pass it through getAddress() before building the message.` });
  }
  const grammar = grammarProblem(request.message);
  if (grammar !== undefined) throw new ApiError(422, { message: grammar });
  if (!deps.whitelist.allows(parsed.domain!)) {
    const allowed = ['localhost (any port)', ...deps.whitelist.domains].join(', ');
    throw new ApiError(403, {
      code: 'DomainNotWhitelisted',
      message: `The SIWE domain "${parsed.domain}" is not whitelisted for this partner; use one of: ${allowed} (sandbox: --whitelist DOMAIN).`,
    });
  }
  if (nonce?.ok !== true) {
    throw rejected(
      nonce?.reason === 'expired'
        ? 'The nonce has expired (nonces live 5 minutes); get a new one from GET /api/v1/auth/nonce and sign again.'
        : 'The nonce is unknown or was already used; every sign-in needs a new nonce from GET /api/v1/auth/nonce.',
    );
  }
  if (!validateSiweMessage({ message: parsed, time: new Date(deps.now()) })) {
    throw rejected(`The SIWE message is not valid at this time (check expirationTime and notBefore); sign a fresh message.${clockAheadNote(deps.clockAheadMs?.() ?? 0)}`);
  }
  const address = parsed.address as Address;
  const kind = await verifySiweSignature(
    { address, message: request.message, signature: request.signature, chainId: parsed.chainId! },
    deps.verifySmartAccountSignature,
  );
  if (!kind) {
    throw rejected(
      deps.verifySmartAccountSignature
        ? `The signature does not match the message and address ${address} (neither an EOA signature nor accepted by the EIP-1271 verifier).`
        : `The signature does not match the message and address ${address}. Smart-account (EIP-1271) signatures need the sandbox's verifySmartAccountSignature option.`,
    );
  }
  // Any wallet that signs a valid message gets a token (reference 5 rule 1: a non-registered
  // user is refused on most authenticated routes, not here); `hasSignedUp` says which it is.
  const user = deps.users.findByWallet(address);
  return deps.tokens.issue({ ...(user ? { userId: user.id } : {}), signerAddress: address, chainId: String(parsed.chainId), ttlInSeconds: request.ttlInSeconds });
}
