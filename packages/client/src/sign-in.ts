import type { SiweChallengeRequest } from '@capi/openapi-types';
import { readAnswerBody, readAnswerText } from './answer-body.js';
import { AbortError, InvalidArgumentError, UnexpectedResponseError } from './errors.js';
import { readJwtExpiry } from './jwt-expiry.js';
import { readNonce } from './nonce.js';
import { assertSignInInput, TTL_IN_SECONDS_RANGE } from './sign-in-input.js';
import { assertSignalOption } from './signal-option.js';
import { sendServiceRequest, type ServiceContext } from './service-request.js';
import { buildSiweMessage } from './siwe-message.js';
import type { SignMessage } from './signers.js';
import { isBearerTokenText, type TokenManager, type TokenSet } from './token-manager.js';
import type { RequestOptions } from './transport.js';
import { untilAborted } from './until-aborted.js';

/**
 * Parameters of `signInWithEthereum`.
 *
 * @example
 * const params: SignInWithEthereumParams = { ...signerFromViemAccount(account), domain: 'app.example.com', uri: 'https://app.example.com', chainId: 100 };
 */
export interface SignInWithEthereumParams extends Pick<RequestOptions, 'signal' | 'timeoutMs'> {
  /** The signer's address: the owner of a registered account. */
  address: string;
  /** Signs the SIWE message; see `signerFromViemAccount` and `signerFromWalletClient`. */
  signMessage: SignMessage;
  /** Host (and port) of the page asking for the signature: a whitelisted domain or `localhost`. Never `127.0.0.1`. */
  domain: string;
  /** The URI the sign-in is for, usually the page's URL. */
  uri: string;
  /** EIP-155 chain id of the wallet (100, Gnosis chain, in production). */
  chainId: number;
  /** The line the wallet shows. Default "Sign in with Ethereum to the app.". */
  statement?: string;
  /** Requested token lifetime, 3600..86400 (older generation). Default 86400. */
  ttlInSeconds?: number;
}

/**
 * The outcome of a sign-in: the tokens and when the access token expires.
 *
 * @example
 * const { token, expiresAt, refreshToken }: SignInResult = await client.signInWithEthereum(params);
 */
export interface SignInResult extends TokenSet {
  /** When the access token expires (its `exp`, read without verification). */
  expiresAt: Date;
}

/**
 * The client parts sign-in works with.
 *
 * @example
 * const context: SignInContext = { transport, baseUrl, tokenManager };
 */
export interface SignInContext extends ServiceContext {
  tokenManager: TokenManager;
}

const DEFAULT_STATEMENT = 'Sign in with Ethereum to the app.';

// One sign-in in flight per token store, as clients of the service are advised to do: a second
// call for the same sign-in (a double click) joins the first, so the user sees one wallet prompt
// and one nonce is spent; a call for another sign-in is refused until the first has settled.
const signInsInFlight = new WeakMap<TokenManager, { fields: string; result: Promise<SignInResult> }>();

/**
 * Signs in with a wallet: nonce (4.1), EIP-4361 message, signature, challenge (4.2). Stores the
 * tokens in the client's TokenManager and returns them. While a sign-in is in flight, the same
 * call joins it and a different one is refused with `sign_in_in_progress`.
 *
 * @example
 * const { expiresAt } = await signInWithEthereum({ transport, baseUrl, tokenManager }, { ...signerFromViemAccount(account), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 });
 */
export async function signInWithEthereum(context: SignInContext, params: SignInWithEthereumParams): Promise<SignInResult> {
  assertSignInInput(params);
  assertSignalOption(params.signal, 'signal');
  const fields = JSON.stringify([params.address.toLowerCase(), params.domain, params.uri, params.chainId, params.statement, params.ttlInSeconds]);
  const inFlight = signInsInFlight.get(context.tokenManager);
  if (inFlight !== undefined) {
    if (inFlight.fields === fields) return inFlight.result;
    throw new InvalidArgumentError('signInWithEthereum',
      'Another sign-in (other address, domain, uri, chain, statement or ttl) is still in flight: only one runs at a time. Wait for it to settle, or cancel it with its signal.',
      'sign_in_in_progress');
  }
  const result = signInOnce(context, params);
  signInsInFlight.set(context.tokenManager, { fields, result });
  try {
    return await result;
  } finally {
    signInsInFlight.delete(context.tokenManager);
  }
}

async function signInOnce(context: SignInContext, params: SignInWithEthereumParams): Promise<SignInResult> {
  const ttlInSeconds = params.ttlInSeconds ?? TTL_IN_SECONDS_RANGE.max;
  const signal = params.signal ?? undefined;
  const call = { auth: false, signal, timeoutMs: params.timeoutMs };
  const fields = {
    address: params.address,
    chainId: params.chainId,
    domain: params.domain,
    uri: params.uri,
    statement: params.statement ?? DEFAULT_STATEMENT,
  };
  // Build once with a placeholder nonce so that a field viem refuses fails before any request.
  buildSiweMessage({ ...fields, nonce: 'placeholder0' });

  const nonceAnswer = await sendServiceRequest(context, { method: 'GET', path: '/api/v1/auth/nonce', accept: 'text/plain' }, call);
  const nonce = readNonce(readAnswerText(nonceAnswer));
  const message = buildSiweMessage({ ...fields, nonce });

  // The wallet prompt may never settle (a closed popup): the signal still ends the sign-in, and
  // with it the sign-in in flight that would refuse every other one.
  const signature = await untilAborted(
    () => params.signMessage(message),
    signal,
    () => new AbortError('signInWithEthereum was cancelled by the caller\'s AbortSignal while waiting for signMessage (the wallet); nothing was stored.', { code: 'aborted' }),
  );
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(signature)) {
    throw new InvalidArgumentError('signMessage', 'signMessage must resolve to a 0x-prefixed hex signature.', 'invalid_signature');
  }

  const json: SiweChallengeRequest = { message, signature, ttlInSeconds };
  const challenge = await sendServiceRequest(
    context,
    {
      method: 'POST',
      path: '/api/v1/auth/challenge',
      json,
      advice: (status) =>
        status === 401 ? 'The signature was refused: signMessage must sign the exact message with the key of `address`, and that wallet must own a registered account' : undefined,
    },
    call,
  );
  const data = readAnswerBody(challenge) as { token?: unknown; refreshToken?: unknown } | undefined;
  const token = data?.token;
  if (typeof token !== 'string' || token === '') {
    throw new UnexpectedResponseError('The challenge answer holds no access token (expected {"token": "<JWT>"}). Check baseUrl.', { code: 'missing_token' });
  }
  // It goes into the Authorization header of every request: a token with spaces, line breaks or
  // other characters a header cannot carry would make each of them fail as a network error.
  if (!isBearerTokenText(token)) {
    throw new UnexpectedResponseError(
      'The challenge answer\'s token cannot be sent in the Authorization header (it holds spaces, line breaks or non-ASCII characters); nothing was stored. Check baseUrl; if it persists, report it to the platform.',
      { code: 'invalid_token' },
    );
  }
  const refreshToken = data?.refreshToken;
  const result: SignInResult = {
    token,
    expiresAt: readJwtExpiry(token) ?? new Date(Date.now() + ttlInSeconds * 1000),
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
  };
  context.tokenManager.setTokens(result);
  return result;
}
