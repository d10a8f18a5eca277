import type { AccountLimit, SetAccountLimitRequest } from '@capi/openapi-types';
import { readAnswerBody } from './answer-body.js';
import { DAILY_LIMIT_CURRENCY, isDailyLimitInput } from './daily-limit-input.js';
import { ConnectionError, InvalidArgumentError, loadChunk, TimeoutError, UnexpectedResponseError } from './errors.js';
import { sendServiceRequest, type ServiceContext } from './service-request.js';
import type { TokenManager } from './token-manager.js';
import type { RequestOptions } from './transport.js';

const LIMIT_PATH = '/user-api/user/account/limit';

/**
 * The new limit for `setDailyLimit`.
 *
 * @example
 * const params: SetDailyLimitParams = { amount: 50_000, currency: 'USD' }; // 500 USD
 */
export interface SetDailyLimitParams {
  /** Whole cents, more than 0 and at most 1,000,000 (or the `maxDailyLimitCents` agreed at onboarding). */
  amount: number;
  /** Only `USD`. Default `USD`. */
  currency?: 'USD' | undefined;
}

/**
 * The account's daily spending limit as the client returns it: the service's `AccountLimit`
 * with `currency` always present. The service may omit `currency` (reference 4.3 does not
 * show it); the spec says clients then assume `USD`, so the client fills it in. `syncStatus`
 * is `pending` or `synced` (the spec's closed `SyncStatus`): an answer with another one is an
 * `UnexpectedResponseError`, never a value outside the type.
 *
 * @example
 * const limit: DailyLimit = await client.getDailyLimit(); // limit.currency is 'USD' even when the service left it out
 */
export type DailyLimit = AccountLimit & { currency: string };

/**
 * What `setDailyLimit` answers: the new limit, not yet applied downstream, so its
 * `syncStatus` is `pending` (reference 3.1; a const in the spec's answer, which
 * `setDailyLimit` checks).
 *
 * @example
 * const limit: PendingDailyLimit = await client.setDailyLimit({ amount: 50_000 }); // limit.syncStatus === 'pending'
 */
export type PendingDailyLimit = DailyLimit & { syncStatus: 'pending' };

/**
 * Options of `waitForLimitSync`.
 *
 * @example
 * const options: WaitForLimitSyncOptions = { timeoutMs: 60_000, signal: AbortSignal.timeout(90_000) };
 */
export interface WaitForLimitSyncOptions {
  /**
   * The amount this caller set (what `setDailyLimit` answered): the wait returns only once that
   * amount is the one synced, and ends with `LimitSupersededError` (`limit_superseded`) when
   * another amount is synced instead (another tab, process or device of the user changed the
   * limit after this caller). Left out, any synced limit ends the wait.
   */
  amount?: number | undefined;
  /** Give up after this long with a `TimeoutError` (code `limit_sync_timeout`). Default 30 000 ms. Polls that fail with 5xx, 408, 429, no connection or a request timeout are polled through until then (the last one is the error's `cause`). */
  timeoutMs?: number | undefined;
  /** Stops polling; the call rejects with `AbortError`. */
  signal?: AbortSignal | undefined;
  /** First wait between polls; it grows by half each time. Default 500 ms. */
  pollIntervalMs?: number | undefined;
  /** Longest wait between polls. Default 5 000 ms. */
  maxPollIntervalMs?: number | undefined;
}

/**
 * The client parts the limit operations work with.
 *
 * @example
 * const context: DailyLimitContext = { transport, baseUrl, maxDailyLimitCents: 1_000_000 };
 */
export interface DailyLimitContext extends ServiceContext {
  maxDailyLimitCents: number;
  /** Says whether the wallet has registered (hasSignedUp) and whether a 401 can be renewed by a wallet prompt, for the advice on a 401. */
  tokenManager?: Pick<TokenManager, 'hasSignedUp' | 'canReauthenticate'>;
}

// The limit operations are the newer generation's (the spec's x-generation): an older-generation
// deployment answers 404. The messages of their failures (the advice on a 404, 409 or 401, an
// input refused before sending, an answer that is no limit) are built in a chunk of their own,
// loaded only when one is thrown, so that their texts stay out of the main entry. When it cannot
// load (a deploy replaced it, or the network is down), each is built here instead: the same
// class, argument and code, a short message, no advice.
const limitErrors = () => loadChunk(() => import('./limit-errors.js'), withoutChunk);

const withoutChunk: Pick<typeof import('./limit-errors.js'), 'limitAdvice' | 'dailyLimitInputError' | 'limitSetUnanswered' | 'unexpectedLimitBody'> = {
  limitAdvice: () => undefined,
  dailyLimitInputError: ({ amount }, maxCents) => {
    // dailyLimitInputError's checks, in its order: the amount, then the currency (its argument is the code's first word).
    const code = !Number.isInteger(amount) ? 'amount_not_integer' : (amount as number) > 0 && (amount as number) <= maxCents ? 'currency_not_supported' : 'amount_out_of_range';
    const argument = code.split('_')[0]!;
    return new InvalidArgumentError(argument, `setDailyLimit refused its ${argument} (${code}).`, code);
  },
  limitSetUnanswered: (error) => error,
  unexpectedLimitBody: () => new UnexpectedResponseError('The limit answer is not an AccountLimit. Check baseUrl.', { code: 'unexpected_limit_body' }),
};

function adviseOnboarding(context: DailyLimitContext) {
  return async (status: number, body: unknown) => {
    // Read when the refusal came, not after the chunk has loaded.
    const { hasSignedUp, canReauthenticate } = context.tokenManager ?? {};
    return status === 401 || status === 404 || status === 409 ? (await limitErrors()).limitAdvice(status, body, { hasSignedUp, canReauthenticate }) : undefined;
  };
}

/**
 * Reads the account's daily spending limit (4.3). Newer generation only.
 *
 * @throws NotFoundError (404, from an older-generation deployment: the advice says the limit is set onchain there); AuthenticationError (401); ConflictError (409 `OnboardingStepNotReached`, before `createAccount`); UnexpectedResponseError (`unexpected_limit_body`: no `{amount, syncStatus}`, or a `syncStatus` other than `pending` and `synced`).
 * @example
 * const { amount, syncStatus } = await getDailyLimit(context);
 */
export async function getDailyLimit(context: DailyLimitContext, options: RequestOptions = {}): Promise<DailyLimit> {
  const answer = await sendServiceRequest(context, { method: 'GET', path: LIMIT_PATH, advice: adviseOnboarding(context) }, options);
  return readAccountLimit(readAnswerBody(answer));
}

/**
 * Sets the account's daily spending limit (4.4), after checking the amount and currency
 * locally. The answer has `syncStatus: 'pending'`; see `waitForLimitSync`. Newer generation only.
 *
 * @throws InvalidArgumentError before sending; NotFoundError (404, from an older-generation deployment: the advice says the limit is set onchain there); AuthenticationError (401); ConflictError (409 `OnboardingStepNotReached`, before `createAccount`); ValidationError (400, 422); UnexpectedResponseError (`unexpected_limit_body`: no `{amount, syncStatus}`, or a `syncStatus` other than `pending`); TimeoutError (`request_timeout`) or ConnectionError (`connection_failed`): not retried unless `options.retries` says so, as a write; the new limit may have been set, so the message says to read it with `getDailyLimit()` to see whether it applied before setting it again.
 * @example
 * await setDailyLimit(context, { amount: 50_000 });
 */
export async function setDailyLimit(context: DailyLimitContext, params: SetDailyLimitParams, options: RequestOptions = {}): Promise<PendingDailyLimit> {
  // Only a currency left out (undefined) means USD: null is refused, as any other.
  const currency = params?.currency;
  const input = { amount: params?.amount, currency: currency === undefined ? DAILY_LIMIT_CURRENCY : currency };
  if (!isDailyLimitInput(input, context.maxDailyLimitCents)) throw (await limitErrors()).dailyLimitInputError(input, context.maxDailyLimitCents, params);
  const json: SetAccountLimitRequest = { amount: params.amount, currency: DAILY_LIMIT_CURRENCY };
  const answer = await sendServiceRequest(context, { method: 'PUT', path: LIMIT_PATH, json, advice: adviseOnboarding(context) }, options).catch(async (error: unknown) => {
    // Timed out, or the connection failed: the new limit may have been set. Its message says how to find out.
    const unanswered = (error instanceof TimeoutError && error.code === 'request_timeout') || (error instanceof ConnectionError && error.code === 'connection_failed');
    throw unanswered ? (await limitErrors()).limitSetUnanswered(error, `${context.baseUrl}${LIMIT_PATH}`) : error;
  });
  return (await readAccountLimit(readAnswerBody(answer), 'pending')) as PendingDailyLimit;
}

// `syncStatus` is the spec's closed SyncStatus (reference 2.7: pending or synced), and a PUT
// answers pending (3.1): the types say so, and so does this check. Any other status would
// leave waitForLimitSync polling for a `synced` it cannot tell will come.
async function readAccountLimit(data: unknown, expected?: 'pending'): Promise<DailyLimit> {
  const limit = data as Partial<AccountLimit> | undefined;
  const syncStatus = limit?.syncStatus;
  if (typeof limit?.amount !== 'number' || typeof syncStatus !== 'string' || (expected ? syncStatus !== expected : syncStatus !== 'pending' && syncStatus !== 'synced')) {
    throw (await limitErrors()).unexpectedLimitBody(data, expected);
  }
  // The spec: "clients assume USD when it is absent".
  return { ...(limit as AccountLimit), currency: limit.currency ?? DAILY_LIMIT_CURRENCY };
}
