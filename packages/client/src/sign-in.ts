import type { SiweChallengeRequest } from '@capi/openapi-types';
import { readAnswerBody, readAnswerText } from './answer-body.js';
import { readErrorBody } from './error-body.js';
import { AbortError, InvalidArgumentError, UnexpectedResponseError } from './errors.js';
import { readNonce } from './nonce.js';
import { assertSignInInput, TTL_IN_SECONDS_RANGE } from './sign-in-input.js';
import { assertSignalOption } from './signal-option.js';
import { sendServiceRequest, type ServiceContext } from './service-request.js';
import { buildSiweMessage } from './siwe-message.js';
import type { SignMessage } from './signers.js';
import { sessionChanged } from './renewal-errors.js';
import { accessTokenExpiry, isBearerTokenText, sessionOf, storeSignIn, type TokenManager, type TokenSet } from './token-manager.js';
import type { RequestOptions } from './transport.js';
import { untilAborted } from './until-aborted.js';

/**
 * Parameters of `signInWithEthereum`.
 *
 * @example
 * const params: SignInWithEthereumParams = { ...signerFromViemAccount(account), domain: 'app.example.com', uri: 'https://app.example.com', chainId: 100 };
 */
export interface SignInWithEthereumParams extends Pick<RequestOptions, 'signal' | 'timeoutMs'> {
  /**
   * The signer's address. Any wallet that signs gets a token; its `hasSignedUp` claim says
   * whether the wallet has registered a user yet (newer generation: `registerUser`).
   */
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
  statement?: string | undefined;
  /** Requested token lifetime, 3600..86400 (older generation). Default 86400. */
  ttlInSeconds?: number | undefined;
}

/**
 * The outcome of a sign-in: the tokens and when the access token expires.
 *
 * @example
 * const { token, expiresAt, refreshToken }: SignInResult = await client.signInWithEthereum(params);
 */
export interface SignInResult extends TokenSet {
  /**
   * When the access token expires, on this device's clock: the time the token arrived plus its
   * lifetime (the JWT's `exp` - `iat`, read without verification), so that a device clock that
   * is off from the service's does not make a new token look due (or valid for longer). Without
   * `iat`, the JWT's `exp` as it is; without `exp`, 15 minutes (newer generation, a refresh
   * token came with it), else `ttlInSeconds`. Save it with the tokens, and restore them with it.
   */
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
// A sign-in begun before clear() or setTokens() (another session) cannot store anything any
// more, so it holds up no later one. Each call waits under its own signal (`timeoutMs` is for
// the sign-in's requests, not for a person at a wallet); the sign-in itself is cancelled (`controller`) only once every call
// waiting for it has given up (`waiting` counts them).
interface SignInInFlight {
  fields: string;
  session: number | undefined;
  result: Promise<SignInResult>;
  controller: AbortController;
  waiting: number;
  /** Whether the wallet prompt is open, for the message of a call that gives up. */
  atWallet: boolean;
  /** Frees the slot: another sign-in may start. */
  drop: () => void;
}
const signInsInFlight = new WeakMap<TokenManager, SignInInFlight>();

/**
 * Signs in with a wallet: nonce (4.1), EIP-4361 message, signature, challenge (4.2). Stores the
 * tokens in the client's TokenManager and returns them. While a sign-in is in flight, the same
 * call joins it and a different one is refused with `sign_in_in_progress`. Each call's `signal`
 * ends its own wait (`AbortError`); the sign-in is cancelled, storing nothing, only once every
 * call waiting for it has given up. When `clear()` (a
 * sign-out) or `setTokens()` changes the TokenManager's session while it runs, it stores
 * nothing and rejects with `TokenRenewalError` `session_changed` (before the wallet prompt when
 * it can), and a new sign-in may start at once.
 *
 * @example
 * const { expiresAt } = await signInWithEthereum({ transport, baseUrl, tokenManager }, { ...signerFromViemAccount(account), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 });
 */
export async function signInWithEthereum(context: SignInContext, params: SignInWithEthereumParams): Promise<SignInResult> {
  assertSignInInput(params);
  assertSignalOption(params.signal, 'signal');
  // Given up before it began: no nonce is spent, and no sign-in in flight is joined or started.
  if (params.signal?.aborted) throw new AbortError('signInWithEthereum was cancelled by the caller\'s AbortSignal before it began; nothing was sent or stored.', { code: 'aborted' });
  const fields = JSON.stringify([params.address.toLowerCase(), params.domain, params.uri, params.chainId, params.statement, params.ttlInSeconds]);
  const session = sessionOf(context.tokenManager);
  const inFlight = signInsInFlight.get(context.tokenManager);
  if (inFlight !== undefined && inFlight.session === session) {
    if (inFlight.fields === fields) return waitFor(inFlight, params);
    throw new InvalidArgumentError('signInWithEthereum',
      'Another sign-in (other address, domain, uri, chain, statement or ttl) is still in flight: only one runs at a time. Wait for it to settle, or cancel it with its signal.',
      'sign_in_in_progress');
  }
  const controller = new AbortController();
  const drop = () => {
    if (signInsInFlight.get(context.tokenManager) === entry) signInsInFlight.delete(context.tokenManager);
  };
  const entry: SignInInFlight = { fields, session, controller, waiting: 0, atWallet: false, drop, result: undefined as unknown as Promise<SignInResult> };
  signInsInFlight.set(context.tokenManager, entry);
  entry.result = signInOnce(context, { ...params, signal: controller.signal }, session, entry);
  // Settled for nobody once every call has given up (then already dropped).
  entry.result.then(drop, drop);
  return waitFor(entry, params);
}

// One call's wait for the sign-in in flight, ended by its own signal.
async function waitFor(entry: SignInInFlight, params: SignInWithEthereumParams): Promise<SignInResult> {
  entry.waiting += 1;
  let waiting = true;
  const giveUp = () => {
    waiting = false;
    entry.waiting -= 1;
    const last = entry.waiting === 0;
    if (last) {
      entry.controller.abort();
      entry.drop();
    }
    return new AbortError(`signInWithEthereum was cancelled by the caller's AbortSignal${entry.atWallet ? ' while waiting for signMessage (the wallet)' : ''}; ${last ? 'nothing was stored' : 'the sign-in continues for the other calls waiting for it'}.`, { code: 'aborted' });
  };
  try {
    return await untilAborted(() => entry.result, params.signal ?? undefined, giveUp);
  } finally {
    if (waiting) entry.waiting -= 1;
  }
}

async function signInOnce(context: SignInContext, params: SignInWithEthereumParams, session: number | undefined, entry: SignInInFlight): Promise<SignInResult> {
  // Signed out (clear()) or other tokens stored since this sign-in began: it must not store its own.
  const checkSession = () => {
    if (sessionOf(context.tokenManager) !== session) throw sessionChanged('signInWithEthereum', 'it stored nothing');
  };
  const ttlInSeconds = params.ttlInSeconds ?? TTL_IN_SECONDS_RANGE.max;
  const signal = params.signal!;
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
  // No wallet prompt for a sign-in the user has already left.
  checkSession();

  // The wallet prompt may never settle (a closed popup): the signal still ends the sign-in, and
  // with it the sign-in in flight that would refuse every other one.
  entry.atWallet = true;
  const signature = await untilAborted(
    () => params.signMessage(message),
    signal,
    () => new AbortError('signInWithEthereum was cancelled while waiting for signMessage (the wallet); nothing was stored.', { code: 'aborted' }),
  ).finally(() => (entry.atWallet = false));
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
      advice: (status, body) => (status === 401 ? signInRefusalAdvice(body) : status === 403 ? forbiddenAdvice(body) : undefined),
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
  const hasRefreshToken = typeof refreshToken === 'string' && refreshToken !== '';
  const result: SignInResult = {
    token,
    // Counted on this device's clock from now, the token's arrival: its lifetime (exp - iat).
    // Without `exp`: the newer generation's access tokens (those with a refresh token) live 15 minutes, whatever ttlInSeconds asked.
    expiresAt: accessTokenExpiry(token, hasRefreshToken, true) ?? new Date(Date.now() + ttlInSeconds * 1000),
    ...(hasRefreshToken ? { refreshToken } : {}),
  };
  checkSession();
  // Every call waiting for it gave up meanwhile: it stores nothing (they were told so).
  if (signal.aborted) throw new AbortError('signInWithEthereum was cancelled; nothing was stored.', { code: 'aborted' });
  // Through the session it began in: the tokens of the sign-in a reauthenticate callback calls
  // are that renewal's, while setTokens() (of the app) always starts a new session. A TokenManager
  // of another copy of the package (no session here) only has setTokens().
  if (session === undefined) context.tokenManager.setTokens(result);
  else storeSignIn(context.tokenManager, result, session);
  return result;
}

// A 401 at the challenge is about this sign-in attempt, never about registration: any wallet
// that signs correctly gets a token (hasSignedUp says whether it has registered). Either the
// nonce was refused (it expired while the wallet prompt was open, or was already used), or the
// signature does not match. The advice stands in the message in place of the service's words
// (the error's serviceMessage); the body carries no code for either, so the nonce case is told
// by those words when it has them.
// A 403 with a code (DomainNotWhitelisted, WAFForbidden) says what it is; one without (a
// firewall's or proxy's HTML page) is one of the two refusals reference 5 names.
const FORBIDDEN_WITHOUT_CODE =
  'the sign-in was refused with no error code (serviceMessage holds the answer\'s text). Either the SIWE domain is not whitelisted for this partner (register it in the partner dashboard; localhost is always allowed), or a firewall blocked the message (it must not mention 127.0.0.1)';

function forbiddenAdvice(body: unknown): string | undefined {
  const said = readErrorBody(body);
  return said.code === undefined && !/WAFForbidden/i.test(said.message ?? '') ? FORBIDDEN_WITHOUT_CODE : undefined;
}

function signInRefusalAdvice(body: unknown): string {
  const said = readErrorBody(body).message ?? '';
  if (/nonce/i.test(said)) {
    return `The nonce was refused${/expired/i.test(said) ? ' (it expired before the signature came back: nonces live a few minutes)' : ''}: call signInWithEthereum again, which gets a new nonce, and have the user sign promptly`;
  }
  return 'The sign-in was refused: call signInWithEthereum again, which gets a new nonce (the last one may have expired while the wallet prompt was open). If it persists, check that signMessage signs `message` exactly as given, with the key of `address` (EIP-191; a smart account: EIP-1271)';
}
