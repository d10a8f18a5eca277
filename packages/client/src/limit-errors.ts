// The messages of the daily limit operations' failures: an amount or currency refused before
// sending, the advice on a refusal, an answer that is no limit. A chunk of its own, loaded only
// when one of them is thrown, so that their texts stay out of the main entry (as the sign-in
// code and the renewal errors do). The checks themselves stay in daily-limit.ts.
import { DEFAULT_MAX_DAILY_LIMIT_CENTS } from './daily-limit-input.js';
import { describeValue, previewBody } from './describe-value.js';
import { readErrorBody } from './error-body.js';
import { ConnectionError, InvalidArgumentError, TimeoutError, UnexpectedResponseError } from './errors.js';
import { describeCause, offlineOrCheck } from './request-errors.js';
import { unauthorizedAdvice, type TokenState } from './unauthorized-advice.js';

/**
 * The error of a `setDailyLimit` input that `isDailyLimitInput` refused: an amount that is not a
 * whole number of cents in 1..`maxCents`, or a currency other than `USD`. `params` is what
 * `setDailyLimit` was given (a bare number instead of `{ amount }` is named as such).
 *
 * @example
 * throw dailyLimitInputError({ amount: 0, currency: 'USD' }, 1_000_000); // code 'amount_out_of_range'
 */
export function dailyLimitInputError(input: { amount: unknown; currency: unknown }, maxCents: number, params?: unknown): InvalidArgumentError {
  const { amount, currency } = input;
  if (params === null || typeof params !== 'object') {
    return new InvalidArgumentError(
      'amount',
      `setDailyLimit takes an object { amount } with the amount in cents (500 USD is { amount: 50000 }), got ${describeAmount(params)}${typeof params === 'number' ? `: pass { amount: ${params} }` : ''}.`,
      'amount_not_integer',
    );
  }
  if (typeof amount !== 'number' || !Number.isInteger(amount)) {
    return new InvalidArgumentError('amount', `amount must be a whole number of cents (500 USD is 50000), got ${describeAmount(amount)}.`, 'amount_not_integer');
  }
  if (amount <= 0 || amount > maxCents) {
    return new InvalidArgumentError(
      'amount',
      `amount must be more than 0 and at most ${maxCents} cents (${formatUsd(maxCents)}), got ${amount}.${
        amount > 0
          ? ` That maximum is the client's maxDailyLimitCents option (default ${DEFAULT_MAX_DAILY_LIMIT_CENTS}, the service's unless another was agreed at onboarding): when the platform agreed another maximum with you, higher or lower, set maxDailyLimitCents to it.`
          : ''
      }`,
      'amount_out_of_range',
    );
  }
  return new InvalidArgumentError('currency', `currency must be "USD", the only currency the daily limit accepts (or left out), got ${describeAmount(currency)}.`, 'currency_not_supported');
}

// A value as a refusal shows it; a boxed number or string (new Number(5)) and a bigint say what they are.
function describeAmount(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n, a bigint: pass a number, e.g. Number(value)`;
  if (value instanceof Number || value instanceof String) {
    const kind = value instanceof Number ? 'Number' : 'String';
    return `a ${kind} object (new ${kind}(${JSON.stringify(value.valueOf())})): pass the ${kind === 'Number' ? 'number' : 'value'} itself, e.g. Number(value)`;
  }
  return describeValue(value);
}

function formatUsd(cents: number): string {
  return `${(cents / 100).toLocaleString('en-US')} USD`;
}

// The limit operations are the newer generation's (the spec's x-generation, from service
// facts): the older generation has no limit endpoint, its users set the limit onchain
// (reference 9), and answers 404 `NotFound`. The limit is the account's: a wallet that never
// registered gets 401 `UserNotRegistered` (reference 5 rule 1), a user whose onboarding has not
// created the account 409 `OnboardingStepNotReached` (the spec's AccountNotCreated). Each advice
// is given for its code only (or a body without one, as the older generation's `{error}` and
// `{message}` bodies are), and stands in the message in place of the service's words (kept as
// the error's serviceMessage), which say the same in raw HTTP terms: a refusal with another code
// keeps the service's words and the status's own advice, never one that would send the caller
// the wrong way.
const FINISH_ONBOARDING = 'finish onboarding up to createAccount()';

/**
 * The advice of a limit operation's refusal (404 `NotFound`, 409 `OnboardingStepNotReached`, or
 * one of these statuses without a code; a 401, see `unauthorizedAdvice`), said in the error's
 * message instead of the service's words; or `undefined` when the status and the service's
 * words say enough. `state` is the TokenManager's when the refusal came.
 *
 * @example
 * limitAdvice(404, { code: 'NotFound' }, undefined) // 'The daily limit is a newer-generation operation; ...'
 * limitAdvice(409, { code: 'Something' }, { hasSignedUp: true }) // undefined
 */
export function limitAdvice(status: number, body: unknown, state: TokenState | undefined): string | undefined {
  const code = readErrorBody(body).code;
  const is = (documented: string) => (code ?? documented) === documented;
  return status === 404 && is('NotFound')
    ? "The daily limit is a newer-generation operation; on the older generation the user sets it onchain (no limit endpoint). Check baseUrl: it must be a newer-generation deployment (sandbox: generation 'newer')"
    : status === 409 && is('OnboardingStepNotReached')
      ? `The limit is on the account, not created yet: ${FINISH_ONBOARDING}`
      : status === 401
        ? unauthorizedAdvice(body, state, `, then ${FINISH_ONBOARDING}`)
        : undefined;
}

/**
 * The error of a limit answer `readAccountLimit` refused: no `{amount, syncStatus}`, or a
 * `syncStatus` other than `expected` (a PUT's `pending`), else other than `pending` and `synced`.
 *
 * @example
 * throw unexpectedLimitBody({ amount: 100, syncStatus: 'failed' }); // code 'unexpected_limit_body'
 */
export function unexpectedLimitBody(data: unknown, expected?: 'pending'): UnexpectedResponseError {
  const limit = data as { amount?: unknown; syncStatus?: unknown } | undefined;
  if (typeof limit?.amount !== 'number' || typeof limit.syncStatus !== 'string') {
    return new UnexpectedResponseError(
      `The limit answer is not an AccountLimit (expected {amount, syncStatus}), got ${previewBody(data)}. Check baseUrl.`,
      { code: 'unexpected_limit_body' },
    );
  }
  return new UnexpectedResponseError(
    `The limit answer's syncStatus is ${previewBody(limit.syncStatus, 64)}, not ${expected ? `"${expected}" as a PUT answers (the new limit may have been set: read it with getDailyLimit())` : '"pending" or "synced" (the only ones the spec has)'}. Check baseUrl; if it persists, report it to the platform.`,
    { code: 'unexpected_limit_body' },
  );
}

/**
 * The error of a `setDailyLimit` whose PUT got no complete answer: within `timeoutMs` (the
 * transport's `request_timeout`), or because the connection failed (`connection_failed`), each
 * kept as `cause`. The new limit may have been set, and a write is not retried by default, so it
 * says to read the limit (`getDailyLimit()`) to see whether it applied. Same class and code.
 *
 * @example
 * throw limitSetUnanswered(timeoutError, `${baseUrl}/user-api/user/account/limit`); // code 'request_timeout'
 */
export function limitSetUnanswered(error: TimeoutError | ConnectionError, url: string): TimeoutError | ConnectionError {
  const readIt = 'read the limit with getDailyLimit() to see whether it applied before setting it again.';
  if (error instanceof TimeoutError) {
    return new TimeoutError(
      `No complete response to PUT ${url} within ${error.timeoutMs} ms. The new limit may have been set (the service may have received it), and a write is not retried by default: ${readIt} Raise timeoutMs (per client or per call) if the service is slow.`,
      { code: error.code, timeoutMs: error.timeoutMs, cause: error },
    );
  }
  const cause = error.cause;
  return new ConnectionError(
    `Could not get a response to PUT ${url}${cause instanceof Error ? `: ${describeCause(cause)}` : '.'} If the request was sent, the new limit may have been set, and a write is not retried by default: ${readIt} ${offlineOrCheck('Check baseUrl and the network (in a browser, also CORS).')}`,
    { code: error.code, cause: error },
  );
}
