// `@capi/client/onboarding`: the newer generation's onboarding, an entry of its own so that the
// main entry stays within its size budget for partners who only read and set the limit.
import type * as Spec from '@capi/openapi-types';
import { describeValue } from './describe-value.js';
import { AbortError, errorFromResponse, InvalidArgumentError, TimeoutError, UnexpectedResponseError } from './errors.js';
import { readJwtClaims } from './jwt-expiry.js';
import type { PartnerClient } from './partner-client.js';
import { describePollFailure, pollUntil, sessionWatch } from './poll-options.js';
import { assertSignalOption } from './signal-option.js';
import type { RequestOptions } from './transport.js';
import { unauthorizedAdvice } from './unauthorized-advice.js';

export type {
  AccessTokenClaims,
  CreateCardRequest,
  EmailVerificationRequest,
  OnboardingStatus,
  OnboardingStatusResponse,
  OneTimePasswordSent,
  PhoneVerificationRequest,
  RegisterUserRequest,
  SetPhoneRequest,
  SourceOfFundsRequest,
  User,
} from '@capi/openapi-types';

/**
 * Reads the claims of an access token WITHOUT verifying it (the service verifies every
 * request): enough to know whether the wallet has registered a user (`hasSignedUp`) and its
 * `userId`, never to grant anything. Each claim the spec names has its type or is left out
 * (`"false"` is read as `false`, a numeric `chainId` or `userId` as its decimal string).
 *
 * @throws InvalidArgumentError (`invalid_token`) when `token` is not a JWT with a JSON payload.
 * @example
 * const { token } = await client.signInWithEthereum(params);
 * if (!readTokenClaims(token).hasSignedUp) await registerNewUser();
 */
export function readTokenClaims(token: string): Partial<Spec.AccessTokenClaims> {
  const claims = readJwtClaims(String(token));
  if (claims === undefined) {
    throw new InvalidArgumentError('token', 'readTokenClaims needs the access token as the service issued it (a JWT: three base64url parts with a JSON payload).', 'invalid_token');
  }
  // Each known claim has its spec type or is left out: a `hasSignedUp: "false"` taken as it is
  // would be truthy. The forms a service is known to vary in are read too (a numeric chain id
  // or user id, a boolean as text); any other claim is kept as it is.
  const read: Record<string, unknown> = { ...claims };
  for (const [name, value] of Object.entries(claims)) {
    let typed: unknown;
    if (name === 'iat' || name === 'exp') typed = Number.isFinite(value) ? value : undefined;
    else if (name === 'hasSignedUp') typed = value === true || value === 'true' ? true : value === false || value === 'false' ? false : undefined;
    else if (name === 'signerAddress' || name === 'chainId' || name === 'userId') typed = typeof value === 'string' ? value : name !== 'signerAddress' && Number.isSafeInteger(value) ? String(value) : undefined;
    else continue;
    if (typed === undefined) delete read[name];
    else read[name] = typed;
  }
  return read as Partial<Spec.AccessTokenClaims>;
}

/**
 * Reads the user's current onboarding step (`GET /user/onboarding`, newer generation). The
 * set of statuses is open: treat one you do not know as "keep polling or show a generic step".
 *
 * @throws AuthenticationError (401) before sign-in, and for a wallet without a user (`UserNotRegistered`, with the advice to register: `requestEmailVerification()`, then `registerUser()`); UnexpectedResponseError (`unexpected_onboarding_body`) when the answer has no string `status`.
 * @example
 * const { status } = await getOnboardingStatus(client); // 'action_accept_tos'
 */
export async function getOnboardingStatus(client: PartnerClient, options: RequestOptions = {}): Promise<Spec.OnboardingStatusResponse & { status: Spec.OnboardingStatus }> {
  const data = (await send('getOnboardingStatus', client, 'GET', '/user/onboarding', undefined, options)) as Partial<Spec.OnboardingStatusResponse> | undefined;
  if (typeof data?.status !== 'string') {
    throw new UnexpectedResponseError('The onboarding answer has no status (expected {"status": "..."}). Check baseUrl: it must be a newer-generation deployment.', { code: 'unexpected_onboarding_body' });
  }
  return data as Spec.OnboardingStatusResponse & { status: Spec.OnboardingStatus };
}

/**
 * Options of {@link waitForOnboardingStatus}.
 *
 * @example
 * const options: WaitForOnboardingStatusOptions = { timeoutMs: 600_000, signal };
 */
export interface WaitForOnboardingStatusOptions {
  /** Give up after this long with `TimeoutError` (code `onboarding_wait_timeout`). Default 120 000 ms. Polls that fail with 5xx, 408, 429, no connection or a request timeout are polled through until then (the last one is the error's `cause`). */
  timeoutMs?: number | undefined;
  /** Stops polling; the call rejects with `AbortError`. */
  signal?: AbortSignal | undefined;
  /** First wait between polls; it grows by half each time. Default 1 000 ms. */
  pollIntervalMs?: number | undefined;
  /** Longest wait between polls. Default 10 000 ms. */
  maxPollIntervalMs?: number | undefined;
}

/**
 * Polls the onboarding status until it is `target` (one status, any of a list, or a predicate
 * returning true), e.g. through `waiting_kyc_setup`, which follows `acceptTerms` for a migrated
 * user while the service carries the verification over. The wait, polls included, is bounded
 * by `timeoutMs`: a poll in flight (or being retried) then is stopped, and when the next poll
 * would come later it waits until `timeoutMs` and polls one last time (one attempt, within the
 * client's request timeout), so it never gives up before it. A poll that fails for a while
 * (5xx, 408, 429, no connection, a request's own timeout), its retries used up, does not end the
 * wait: it polls on until `timeoutMs` (no sooner than a 429's or 503's `Retry-After`); any other
 * error (a 401, such as `UserNotRegistered` before registration, a 404, ...) ends it at once.
 *
 * @throws TimeoutError (`onboarding_wait_timeout`, the last status in the message, or the last poll's failure, which is its `cause`; at `action_complete_kyc`, the advice to check the user's `kycStatus`); AbortError (`aborted`); InvalidArgumentError for a bad target, client or option.
 * @example
 * await acceptTerms(client);
 * await waitForOnboardingStatus(client, (status) => status !== 'waiting_kyc_setup', { timeoutMs: 600_000 });
 */
export async function waitForOnboardingStatus(
  client: PartnerClient,
  target: Spec.OnboardingStatus | readonly Spec.OnboardingStatus[] | ((status: Spec.OnboardingStatus) => boolean),
  options: WaitForOnboardingStatusOptions = {},
): Promise<Spec.OnboardingStatusResponse & { status: Spec.OnboardingStatus }> {
  const wanted = typeof target === 'function' ? target : Array.isArray(target) ? (status: string) => target.includes(status) : typeof target === 'string' ? (status: string) => status === target : undefined;
  if (wanted === undefined || (Array.isArray(target) && !target.every((status) => typeof status === 'string'))) {
    throw new InvalidArgumentError('target', 'waitForOnboardingStatus needs a status, a list of statuses or a function (status) => boolean.', 'invalid_target');
  }
  return pollUntil(options, { timeoutMs: 120_000, pollIntervalMs: 1_000, maxPollIntervalMs: 10_000 }, {
    // client?.: a call without a client is refused by the first poll, saying what to pass.
    session: sessionWatch((client as PartnerClient | undefined)?.tokenManager, 'waitForOnboardingStatus'),
    poll: (callOptions) => getOnboardingStatus(client, callOptions),
    done: (answer) => wanted(answer.status),
    aborted: () => new AbortError('waitForOnboardingStatus was cancelled by the caller\'s AbortSignal.', { code: 'aborted' }),
    timedOut: (answer, timeoutMs, failure) =>
      new TimeoutError(
        answer === undefined
          ? `The onboarding status could not be read (${describePollFailure(failure)}) within ${timeoutMs} ms. Wait longer (timeoutMs), or check that the service is reachable.`
          : `The onboarding status was still ${JSON.stringify(answer.status)} after ${timeoutMs} ms. ${
              answer.status === 'action_complete_kyc'
                ? "It moves on from action_complete_kyc only once the user's KYC is approved: check the user's kycStatus (getUser(), or the kyc.status.changed webhook). Waiting longer (timeoutMs) helps while it is pending or processing; with rejected or resubmissionRequested the status stays at action_complete_kyc, and the user (or your KYC flow) has to act first."
                : 'Wait longer (timeoutMs) or check what the user must do at this step.'
            }`,
        { code: 'onboarding_wait_timeout', timeoutMs, cause: failure },
      ),
  });
}

// What to do about each refusal the onboarding operations document (the spec's `code`s), so
// that the error says it instead of a generic word about the status, and instead of the
// service's own sentence (which says the same in raw HTTP terms; kept as serviceMessage): the newer generation's
// operations, whose advice names newer-generation operations. `InvalidOneTimePassword` names the
// operation that sends the password the refused call needed (see onboardingAdvice), and a 401
// depends on the TokenManager (see unauthorizedAdvice).
const ADVICE: Record<string, string> = {
  OnboardingStepNotReached: 'An earlier step is still open: read getOnboardingStatus() and complete the step it names first',
  AlreadyRegistered:
    "This wallet already has a user (registerUser sent twice, e.g. a double click or another tab), so there is nothing to register again: read getOnboardingStatus() and go on from the step it names. The token you hold keeps working for that, even one that still says hasSignedUp: false; a refresh (the TokenManager's refresh callback) renews it into one with the userId",
  EmailTaken: "Another user registered this email, and a user has one sign-in wallet: sign in with that user's wallet (registering another email makes a new user, and an older-generation user's verification is then not carried over)",
  AlreadyDone: 'This step is already complete: read getOnboardingStatus() for the next one',
  PhoneAlreadySet:
    "The user already has a phone number, and a card does not change it, so no card was created: call createCard() without phone (or with the user's number), or change the number first with requestPhoneVerification(), then updatePhone() for a validated number or setPhone() for one not validated yet (getUser() says which)",
  PhoneNotValidated:
    'The user has no validated phone number yet, so updatePhone() has none to change. The first one is set with requestPhoneVerification(), then setPhone(), at the step action_verify_phone, after createAccount(), when your partnership requires phone verification (without it, the number comes with the first card: createCard({ phone })). Read getOnboardingStatus() for the step the user is at, and complete the steps before it first',
};

// The older generation's operations (the SMS phone verification, under /api/v1) are answered
// by an older-generation deployment only (a newer one answers them 404 before reading the
// token), so their refusals are the older generation's, whatever the TokenManager infers. It has
// none of the operations named above (it answers them 404): no registration at all, since its
// signer must own a registered account (reference 5 rule 1; a user could add several sign-in
// wallets, reference 9); the sandbox registers one with --user or POST /__sandbox/users. Any
// other code keeps the service's words and the status's own advice.
const OLDER_GENERATION_ADVICE: Record<string, string> = {
  UserNotRegistered:
    'This wallet owns no registered account (hasSignedUp: false), and the older generation has no registration operation: sign in with a wallet that owns a registered account, or have this one registered with the service out-of-band (sandbox: --user ADDRESS or POST /__sandbox/users), then sign in again',
  InvalidOneTimePassword: 'Ask for a new one-time password (requestLegacyPhoneVerification()) and send the newest one the user received',
};

function onboardingAdvice(client: PartnerClient, status: number, body: unknown, path: OnboardingPath): string | undefined {
  const older = path.startsWith('/api/v1/');
  const advice = older ? OLDER_GENERATION_ADVICE : ADVICE;
  const code = (body as { code?: unknown } | null)?.code;
  // Read when the refusal came: whether the token says the wallet registered, and whether a
  // wallet prompt can renew it.
  const { hasSignedUp, canReauthenticate } = client.tokenManager ?? {};
  if (status === 401) return unauthorizedAdvice(body, { hasSignedUp, canReauthenticate }, '', older ? advice.UserNotRegistered : undefined);
  if (code === 'InvalidOneTimePassword' && !older) {
    return `Ask for a new one-time password with ${path === '/user' ? 'requestEmailVerification()' : 'requestPhoneVerification()'} and send the newest one the user received`;
  }
  return typeof code === 'string' && Object.hasOwn(advice, code) ? advice[code] : undefined;
}

type OnboardingPath = '/user/onboarding' | '/email/verification' | '/user' | '/user/terms' | '/source-of-funds' | '/account' | '/phone/verification' | '/phone' | '/cards' | '/api/v1/verification' | '/api/v1/verification/check';

// What a caller can get wrong about the call itself, checked before anything is sent: no
// PartnerClient (acceptTerms() without its client), options that are not an object, a signal
// that is not an AbortSignal (openapi-fetch's new Request would throw a bare TypeError). The
// transport checks the other options (timeoutMs, retries, auth).
function assertCall(operation: string, client: unknown, options: unknown): void {
  if (typeof (client as Partial<PartnerClient> | null)?.raw?.GET !== 'function') {
    throw new InvalidArgumentError(
      'client',
      `${operation} needs the PartnerClient as its first argument: const client = createPartnerClient({ baseUrl }), then ${operation}(client, ...); got ${client === undefined ? 'nothing' : client !== null && typeof client === 'object' ? 'an object that is not a PartnerClient (no raw client)' : describeValue(client)}.`,
      'invalid_client',
    );
  }
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', `${operation} takes its options as an object such as { signal, timeoutMs }, got ${describeValue(options)}.`, 'invalid_option');
  }
  assertSignalOption((options as RequestOptions).signal, 'signal');
}

async function send(operation: string, client: PartnerClient, method: 'GET' | 'POST' | 'PATCH', path: OnboardingPath, body: object | undefined, options: RequestOptions): Promise<unknown> {
  assertCall(operation, client, options);
  // The bodies are the spec's request bodies (typed by the callers); a write is never retried
  // unless options.retries says so.
  const call = client.raw[method] as (path: string, init: object) => Promise<{ data?: string; error?: unknown; response: Response }>;
  // The body as text, parsed here: openapi-fetch's own parse of a 2xx body that is not JSON (an
  // HTML page from a proxy, a body cut off) threw a bare SyntaxError.
  const { data, error, response } = await call(path, { ...options, parseAs: 'text', ...(body === undefined ? {} : { body }) });
  // Status first: openapi-fetch gives an error answer with an empty body (Content-Length: 0) as
  // `error: undefined`, which must not pass for a success.
  if (!response.ok) throw errorFromResponse(response, error, { advice: onboardingAdvice(client, response.status, error, path) });
  if (data === undefined) return undefined; // no body (204, Content-Length: 0): the caller's check names what is missing
  try {
    return JSON.parse(data) as unknown;
  } catch (parseError) {
    // The parser's message quotes the body: the error's constructor redacts any token in it.
    throw new UnexpectedResponseError(
      `${operation} answered 2xx with a body that is not JSON (${(parseError as Error).message}). ${checkBaseUrl(operation)}${method === 'GET' ? '' : ` The ${operation} may have been applied: read the user's state (getUser, getOnboardingStatus) before sending it again.`}`,
      { code: 'unexpected_onboarding_body' },
    );
  }
}

// An answer of the wrong shape most often comes from a deployment of the other generation.
function checkBaseUrl(operation: string): string {
  return `Check baseUrl: it must be ${operation.includes('Legacy') ? 'an older' : 'a newer'}-generation deployment.`;
}

function readUser(data: unknown, operation: string): Spec.User {
  if (typeof (data as Partial<Spec.User> | null)?.id !== 'string') {
    throw new UnexpectedResponseError(`${operation} answered without a User (expected a JSON object with an "id"). ${checkBaseUrl(operation)}`, { code: 'unexpected_onboarding_body' });
  }
  return data as Spec.User;
}

function readOneTimePasswordSent(data: unknown, operation: string): Spec.OneTimePasswordSent {
  const sent = data as Partial<Spec.OneTimePasswordSent> | null;
  if (typeof sent?.sentTo !== 'string' || typeof sent.expiresAt !== 'string') {
    throw new UnexpectedResponseError(`${operation} answered without {sentTo, expiresAt}. ${checkBaseUrl(operation)}`, { code: 'unexpected_onboarding_body' });
  }
  return sent as Spec.OneTimePasswordSent;
}

// Local checks catch the mistakes of a caller (a missing field, a number where the spec has a
// string); the formats themselves (an email address, E.164) are the service's to judge.
function bodyObject(operation: string, body: unknown, example: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidArgumentError('body', `${operation} takes an object such as ${example}; got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}.`, 'invalid_body');
  }
  return body as Record<string, unknown>;
}

function requireText(operation: string, body: Record<string, unknown>, field: 'email' | 'phone', example: string): void {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError(field, `${operation} needs ${field} as a non-empty string, e.g. ${example}; got ${value === undefined ? 'none' : JSON.stringify(value)}.`, `invalid_${field}`);
  }
}

function requireOneTimePassword(operation: string, body: Record<string, unknown>): void {
  const { otp } = body;
  if (typeof otp === 'number') {
    throw new InvalidArgumentError('otp', `${operation} needs otp as the string the user received, e.g. "049281": as a number it loses its leading zeros; got ${otp}.`, 'invalid_otp');
  }
  if (typeof otp !== 'string' || !/^\d+$/.test(otp)) {
    throw new InvalidArgumentError('otp', `${operation} needs otp, the one-time password the user received, as a string of digits, e.g. "049281"; got ${otp === undefined ? 'none' : JSON.stringify(otp)}.`, 'invalid_otp');
  }
}

/**
 * Emails a one-time password to the address the user will register with
 * (`POST /email/verification`, newer generation; callable before registration). A new request
 * replaces the previous password.
 *
 * @throws InvalidArgumentError (`invalid_email`) before sending; ValidationError (422), ConflictError (409 `AlreadyRegistered`), and the usual request errors.
 * @example
 * const { sentTo, expiresAt } = await requestEmailVerification(client, { email: 'ada@example.com' });
 */
export async function requestEmailVerification(client: PartnerClient, body: Spec.EmailVerificationRequest, options: RequestOptions = {}): Promise<Spec.OneTimePasswordSent> {
  const fields = bodyObject('requestEmailVerification', body, "{ email: 'ada@example.com' }");
  requireText('requestEmailVerification', fields, 'email', "'ada@example.com'");
  return readOneTimePasswordSent(await send('requestEmailVerification', client, 'POST', '/email/verification', body, options), 'requestEmailVerification');
}

/**
 * Registers a user for the signed-in wallet (`POST /user`, newer generation) with the email
 * and the one-time password {@link requestEmailVerification} sent to it; answers the new User
 * (the service emits `user.created`). The wallet becomes the user's only sign-in wallet and
 * owner. The token still says `hasSignedUp: false`; when the client's TokenManager has
 * `refresh` (newer generation) it is refreshed at once, without a wallet prompt, into one that
 * carries `userId`; otherwise the next sign-in brings that. When the call's `signal` ends the
 * wait for that refresh (or it fails, or outlasts `refreshTimeoutMs`), the user is returned all
 * the same (the registration stands; the token is then refreshed later, or kept).
 *
 * @throws InvalidArgumentError (`invalid_email`, `invalid_otp`) before sending; ValidationError (422, `InvalidOneTimePassword`), ConflictError (409: `AlreadyRegistered`, `EmailTaken`), and the usual request errors.
 * @example
 * const user = await registerUser(client, { email: 'ada@example.com', otp: '492817' });
 */
export async function registerUser(client: PartnerClient, body: Spec.RegisterUserRequest, options: RequestOptions = {}): Promise<Spec.User> {
  const fields = bodyObject('registerUser', body, "{ email: 'ada@example.com', otp: '492817' }");
  requireText('registerUser', fields, 'email', "'ada@example.com'");
  requireOneTimePassword('registerUser', fields);
  const user = readUser(await send('registerUser', client, 'POST', '/user', body, options), 'registerUser');
  // The token still says hasSignedUp: false; a refresh (newer generation, no wallet prompt)
  // brings one with the userId. A custom token manager may not offer it. The call's signal ends
  // the wait for it: the registration stands, so the user is returned all the same.
  await client.tokenManager.refreshAfterRegistration?.({ signal: options?.signal });
  return user;
}

/**
 * Reads the signed-in user (`GET /user`, newer generation): the same User that user and KYC
 * webhook events carry as `data`.
 *
 * @throws AuthenticationError (401), also before registration, and the usual request errors.
 * @example
 * const { kycStatus, isSourceOfFundsAnswered } = await getUser(client);
 */
export async function getUser(client: PartnerClient, options: RequestOptions = {}): Promise<Spec.User> {
  return readUser(await send('getUser', client, 'GET', '/user', undefined, options), 'getUser');
}

/**
 * Accepts the Terms of Service for the user (`POST /user/terms` with `{accepted: true}`), the
 * step `action_accept_tos`, required of every user, migrated ones too. Call it only once the
 * user has accepted them in your app.
 *
 * @throws ConflictError (409: `OnboardingStepNotReached`, `AlreadyDone`), and the usual request errors.
 * @example
 * if ((await getOnboardingStatus(client)).status === 'action_accept_tos') await acceptTerms(client);
 */
export async function acceptTerms(client: PartnerClient, options: RequestOptions = {}): Promise<Spec.User> {
  return readUser(await send('acceptTerms', client, 'POST', '/user/terms', { accepted: true }, options), 'acceptTerms');
}

/**
 * Records the user's source-of-funds answers (`POST /source-of-funds`), the step
 * `action_complete_sof`; `isSourceOfFundsAnswered` becomes true and the service emits
 * `kyc.source-of-funds.changed`.
 *
 * @throws InvalidArgumentError (`invalid_answers`) before sending; ValidationError (422), ConflictError (409: `OnboardingStepNotReached`, `AlreadyDone`), and the usual request errors.
 * @example
 * await submitSourceOfFunds(client, { answers: [{ question: 'What is your main source of income?', answer: 'Employment' }] });
 */
export async function submitSourceOfFunds(client: PartnerClient, body: Spec.SourceOfFundsRequest, options: RequestOptions = {}): Promise<Spec.User> {
  const { answers } = bodyObject('submitSourceOfFunds', body, "{ answers: [{ question: '...', answer: '...' }] }");
  const usable = Array.isArray(answers) && answers.length > 0 && answers.every((item) => typeof item?.question === 'string' && typeof item?.answer === 'string');
  if (!usable) {
    throw new InvalidArgumentError('answers', `submitSourceOfFunds needs answers, a non-empty list of { question, answer } strings; got ${JSON.stringify(answers) ?? 'none'}.`, 'invalid_answers');
  }
  return readUser(await send('submitSourceOfFunds', client, 'POST', '/source-of-funds', body, options), 'submitSourceOfFunds');
}

/**
 * Creates the user's account (`POST /account`, no body), smart account included: it appears
 * in the User's `smartWallets`, owned by the signed-in wallet, fixed for good. The step
 * `action_create_account`.
 *
 * @throws ConflictError (409: `OnboardingStepNotReached`, `AlreadyDone`), and the usual request errors.
 * @example
 * const { smartWallets } = await createAccount(client);
 */
export async function createAccount(client: PartnerClient, options: RequestOptions = {}): Promise<Spec.User> {
  return readUser(await send('createAccount', client, 'POST', '/account', undefined, options), 'createAccount');
}

/**
 * Sends a one-time password by SMS to a phone number (`POST /phone/verification`); then
 * {@link setPhone} (or {@link updatePhone}) with the number and the password. Needed when the
 * partner requires phone verification (the step `action_verify_phone`); otherwise the phone
 * is given with the first card ({@link createCard}).
 *
 * @throws InvalidArgumentError (`invalid_phone`) before sending; ValidationError (422), ConflictError (409), and the usual request errors.
 * @example
 * await requestPhoneVerification(client, { phone: '+15555550123' });
 */
export const requestPhoneVerification: (client: PartnerClient, body: Spec.PhoneVerificationRequest, options?: RequestOptions) => Promise<Spec.OneTimePasswordSent> = phoneVerificationRequest(
  'requestPhoneVerification',
  '/phone/verification',
);

function phoneWrite(operation: 'setPhone' | 'updatePhone' | 'checkLegacyPhoneVerification', method: 'POST' | 'PATCH', path: '/phone' | '/api/v1/verification/check') {
  return async (client: PartnerClient, body: Spec.SetPhoneRequest, options: RequestOptions = {}): Promise<Spec.User> => {
    const fields = bodyObject(operation, body, "{ phone: '+15555550123', otp: '731904' }");
    requireText(operation, fields, 'phone', "'+15555550123'");
    requireOneTimePassword(operation, fields);
    return readUser(await send(operation, client, method, path, body, options), operation);
  };
}

function phoneVerificationRequest(operation: 'requestPhoneVerification' | 'requestLegacyPhoneVerification', path: '/phone/verification' | '/api/v1/verification') {
  return async (client: PartnerClient, body: Spec.PhoneVerificationRequest, options: RequestOptions = {}): Promise<Spec.OneTimePasswordSent> => {
    const fields = bodyObject(operation, body, "{ phone: '+15555550123' }");
    requireText(operation, fields, 'phone', "'+15555550123'");
    return readOneTimePasswordSent(await send(operation, client, 'POST', path, body, options), operation);
  };
}

/**
 * Sets the user's phone number, proved by the one-time password from
 * {@link requestPhoneVerification} (`POST /phone`); `isPhoneValidated` becomes true and the
 * service emits `kyc.phone-validation.changed`.
 *
 * @throws InvalidArgumentError (`invalid_phone`, `invalid_otp`) before sending; ValidationError (422, `InvalidOneTimePassword`), ConflictError (409), and the usual request errors.
 * @example
 * await setPhone(client, { phone: '+15555550123', otp: '731904' });
 */
export const setPhone: (client: PartnerClient, body: Spec.SetPhoneRequest, options?: RequestOptions) => Promise<Spec.User> = phoneWrite('setPhone', 'POST', '/phone');

/**
 * Changes a validated phone number to a new one, proved by its one-time password
 * (`PATCH /phone`). The number stays validated, so no `kyc.phone-validation.changed` follows.
 *
 * @throws the errors of {@link setPhone}, and ConflictError (409 `PhoneNotValidated`) without a validated number.
 * @example
 * await updatePhone(client, { phone: '+15555550199', otp: '118273' });
 */
export const updatePhone: (client: PartnerClient, body: Spec.SetPhoneRequest, options?: RequestOptions) => Promise<Spec.User> = phoneWrite('updatePhone', 'PATCH', '/phone');

/**
 * Creates a card on the user's account (`POST /cards`), the step `action_create_card`;
 * answers the User with the new card in `cards`. When the partner does not require phone
 * verification, give the user's `phone` with the first card. A card never changes the number:
 * once the user has one, a `phone` other than it is refused.
 *
 * @throws InvalidArgumentError (`invalid_body`) before sending; ValidationError (422), ConflictError (409 `OnboardingStepNotReached`; `PhoneAlreadySet` for a `phone` other than the user's number, nothing created), and the usual request errors.
 * @example
 * const { cards } = await createCard(client, { virtual: true });
 */
export async function createCard(client: PartnerClient, body: Spec.CreateCardRequest = {}, options: RequestOptions = {}): Promise<Spec.User> {
  bodyObject('createCard', body, "{ virtual: true }");
  return readUser(await send('createCard', client, 'POST', '/cards', body, options), 'createCard');
}

/**
 * Older generation only: sends an SMS one-time password to verify the user's phone
 * (`POST /api/v1/verification`); the older generation always verifies the phone this way
 * (reference 9). Then {@link checkLegacyPhoneVerification} with the number and the password.
 * On the newer generation use {@link requestPhoneVerification}.
 *
 * @throws InvalidArgumentError (`invalid_phone`) before sending; ValidationError (422), AuthenticationError (401, also `UserNotRegistered` for a wallet without a registered account: the older generation has no registration operation, so the advice is to sign in with a wallet that owns one, or to have this one registered with the service out-of-band), NotFoundError (404 from a newer-generation deployment), and the usual request errors.
 * @example
 * await requestLegacyPhoneVerification(client, { phone: '+15555550123' });
 */
export const requestLegacyPhoneVerification: (client: PartnerClient, body: Spec.PhoneVerificationRequest, options?: RequestOptions) => Promise<Spec.OneTimePasswordSent> = phoneVerificationRequest(
  'requestLegacyPhoneVerification',
  '/api/v1/verification',
);

/**
 * Older generation only: checks the SMS one-time password from
 * {@link requestLegacyPhoneVerification} (`POST /api/v1/verification/check`); the number
 * becomes the user's validated phone, and the service emits `kyc.phone-validation.changed`
 * when the validation changes. Answers the User.
 *
 * @throws InvalidArgumentError (`invalid_phone`, `invalid_otp`) before sending; ValidationError (422, `InvalidOneTimePassword`: ask for a new one with {@link requestLegacyPhoneVerification}), AuthenticationError (401, as {@link requestLegacyPhoneVerification}), NotFoundError (404 from a newer-generation deployment), and the usual request errors.
 * @example
 * const { isPhoneValidated } = await checkLegacyPhoneVerification(client, { phone: '+15555550123', otp: '731904' });
 */
export const checkLegacyPhoneVerification: (client: PartnerClient, body: Spec.SetPhoneRequest, options?: RequestOptions) => Promise<Spec.User> = phoneWrite('checkLegacyPhoneVerification', 'POST', '/api/v1/verification/check');
