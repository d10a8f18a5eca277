// `@capi/client/onboarding`: the newer generation's onboarding, an entry of its own so that the
// main entry stays within its size budget for partners who only read and set the limit.
import type { AccessTokenClaims, OnboardingStatus, OnboardingStatusResponse } from '@capi/openapi-types';
import { abortableSleep } from './abortable-sleep.js';
import { AbortError, errorFromResponse, InvalidArgumentError, TimeoutError, UnexpectedResponseError } from './errors.js';
import { readJwtClaims } from './jwt-expiry.js';
import type { PartnerClient } from './partner-client.js';
import type { RawPaths } from './raw-paths.js';
import { readPollOptions } from './poll-options.js';
import type { RequestOptions } from './transport.js';

export type { AccessTokenClaims, OnboardingStatus, OnboardingStatusResponse } from '@capi/openapi-types';

/**
 * Reads the claims of an access token WITHOUT verifying it (the service verifies every
 * request): enough to know whether the wallet has registered a user (`hasSignedUp`) and its
 * `userId`, never to grant anything.
 *
 * @throws InvalidArgumentError (`invalid_token`) when `token` is not a JWT with a JSON payload.
 * @example
 * const { token } = await client.signInWithEthereum(params);
 * if (!readTokenClaims(token).hasSignedUp) await registerNewUser();
 */
export function readTokenClaims(token: string): Partial<AccessTokenClaims> {
  const claims = readJwtClaims(String(token));
  if (claims === undefined) {
    throw new InvalidArgumentError('token', 'readTokenClaims needs the access token as the service issued it (a JWT: three base64url parts with a JSON payload).', 'invalid_token');
  }
  return claims as Partial<AccessTokenClaims>;
}

/**
 * Reads the user's current onboarding step (`GET /user/onboarding`, newer generation). The
 * set of statuses is open: treat one you do not know as "keep polling or show a generic step".
 *
 * @throws AuthenticationError (401) before sign-in; UnexpectedResponseError (`unexpected_onboarding_body`) when the answer has no string `status`.
 * @example
 * const { status } = await getOnboardingStatus(client); // 'action_accept_tos'
 */
export async function getOnboardingStatus(client: PartnerClient, options: RequestOptions = {}): Promise<OnboardingStatusResponse & { status: OnboardingStatus }> {
  const { data, error, response } = await client.raw.GET('/user/onboarding', options);
  if (error !== undefined) throw errorFromResponse(response, error);
  if (typeof data?.status !== 'string') {
    throw new UnexpectedResponseError('The onboarding answer has no status (expected {"status": "..."}). Check baseUrl: it must be a newer-generation deployment.', { code: 'unexpected_onboarding_body' });
  }
  return data as OnboardingStatusResponse & { status: OnboardingStatus };
}

/**
 * Options of {@link waitForOnboardingStatus}.
 *
 * @example
 * const options: WaitForOnboardingStatusOptions = { timeoutMs: 600_000, signal };
 */
export interface WaitForOnboardingStatusOptions {
  /** Give up after this long with `TimeoutError` (code `onboarding_wait_timeout`). Default 120 000 ms. */
  timeoutMs?: number;
  /** Stops polling; the call rejects with `AbortError`. */
  signal?: AbortSignal;
  /** First wait between polls; it grows by half each time. Default 1 000 ms. */
  pollIntervalMs?: number;
  /** Longest wait between polls. Default 10 000 ms. */
  maxPollIntervalMs?: number;
}

/**
 * Polls the onboarding status until it is `target` (one status, any of a list, or a predicate
 * returning true), e.g. through `waiting_kyc_setup` after a migrated user registered.
 *
 * @throws TimeoutError (`onboarding_wait_timeout`, the last status in the message); AbortError (`aborted`); InvalidArgumentError for a bad target or option.
 * @example
 * await waitForOnboardingStatus(client, (status) => status !== 'waiting_kyc_setup', { timeoutMs: 600_000 });
 */
export async function waitForOnboardingStatus(
  client: PartnerClient,
  target: OnboardingStatus | readonly OnboardingStatus[] | ((status: OnboardingStatus) => boolean),
  options: WaitForOnboardingStatusOptions = {},
): Promise<OnboardingStatusResponse & { status: OnboardingStatus }> {
  const { timeoutMs, pollIntervalMs, maxPollIntervalMs, signal } = readPollOptions(options, { timeoutMs: 120_000, pollIntervalMs: 1_000, maxPollIntervalMs: 10_000 });
  const wanted = typeof target === 'function' ? target : Array.isArray(target) ? (status: string) => target.includes(status) : typeof target === 'string' ? (status: string) => status === target : undefined;
  if (wanted === undefined || (Array.isArray(target) && !target.every((status) => typeof status === 'string'))) {
    throw new InvalidArgumentError('target', 'waitForOnboardingStatus needs a status, a list of statuses or a function (status) => boolean.', 'invalid_target');
  }
  const deadline = Date.now() + timeoutMs;
  const abort = () => new AbortError('waitForOnboardingStatus was cancelled by the caller\'s AbortSignal.', { code: 'aborted' });
  let interval = pollIntervalMs;
  for (;;) {
    if (signal?.aborted) throw abort();
    const answer = await getOnboardingStatus(client, { signal });
    if (wanted(answer.status)) return answer;
    if (Date.now() + interval >= deadline) {
      throw new TimeoutError(`The onboarding status was still ${JSON.stringify(answer.status)} after ${timeoutMs} ms. Wait longer (timeoutMs) or check what the user must do at this step.`, { code: 'onboarding_wait_timeout', timeoutMs });
    }
    await abortableSleep(interval, signal, abort);
    interval = Math.min(maxPollIntervalMs, Math.round(interval * 1.5));
  }
}

type Body<P extends '/user' | '/phone/verification' | '/phone' | '/account'> = RawPaths[P]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** The JSON body of `registerUser` (`POST /user`), as the spec gives it. @example const body: RegisterUserBody = {}; */
export type RegisterUserBody = Body<'/user'>;
/** The JSON body of `requestPhoneVerification` (`POST /phone/verification`). @example const body: RequestPhoneVerificationBody = {}; */
export type RequestPhoneVerificationBody = Body<'/phone/verification'>;
/** The JSON body of `setPhone` (`POST /phone`). @example const body: SetPhoneBody = {}; */
export type SetPhoneBody = Body<'/phone'>;
/** The JSON body of `createAccount` (`POST /account`). @example const body: CreateAccountBody = {}; */
export type CreateAccountBody = Body<'/account'>;

async function post<P extends '/user' | '/phone/verification' | '/phone' | '/account'>(client: PartnerClient, path: P, body: Body<P>, options: RequestOptions): Promise<unknown> {
  // Bodies and answers follow the generated types; a write is never retried unless options.retries says so.
  const { data, error, response } = await (client.raw.POST as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, { ...options, body });
  if (error !== undefined) throw errorFromResponse(response, error);
  return data;
}

/**
 * Registers a user for the signed-in wallet (`POST /user`, newer generation); the token's
 * `hasSignedUp` is false until then. Sign in again afterwards for a token with `userId`.
 *
 * @throws AuthenticationError (401), ValidationError (422), and the usual request errors.
 * @example
 * await registerUser(client, body);
 */
export function registerUser(client: PartnerClient, body: RegisterUserBody, options: RequestOptions = {}): Promise<unknown> {
  return post(client, '/user', body, options);
}

/**
 * Asks the service to send a verification code to the user's phone (`POST /phone/verification`).
 *
 * @example
 * await requestPhoneVerification(client, body);
 */
export function requestPhoneVerification(client: PartnerClient, body: RequestPhoneVerificationBody, options: RequestOptions = {}): Promise<unknown> {
  return post(client, '/phone/verification', body, options);
}

/**
 * Sets the user's phone (`POST /phone`).
 *
 * @example
 * await setPhone(client, body);
 */
export function setPhone(client: PartnerClient, body: SetPhoneBody, options: RequestOptions = {}): Promise<unknown> {
  return post(client, '/phone', body, options);
}

/**
 * Creates the user's account (`POST /account`).
 *
 * @example
 * await createAccount(client, body);
 */
export function createAccount(client: PartnerClient, body: CreateAccountBody, options: RequestOptions = {}): Promise<unknown> {
  return post(client, '/account', body, options);
}
