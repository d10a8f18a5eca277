// The `code` of each error class the client words itself is the union of the codes it can
// carry: a known code narrows, a misspelt one (or one of another class) does not compile, and
// each class's constructor takes only its own codes, so that every construction site in src/
// proves its union complete. `ApiError` and its subclasses carry the service's own code (an
// open set) and keep `string`, as does `PartnerClientError` itself.
import { describe, expectTypeOf, test } from 'vitest';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  InvalidArgumentError,
  LimitSupersededError,
  NotFoundError,
  PartnerClientError,
  RateLimitError,
  ServerError,
  TimeoutError,
  TokenRenewalError,
  UnexpectedResponseError,
  ValidationError,
  WafForbiddenError,
  type AbortErrorCode,
  type ConnectionErrorCode,
  type InvalidArgumentErrorCode,
  type LimitSupersededErrorCode,
  type PartnerClientErrorOptions,
  type PartnerClientErrorOwnCode,
  type TimeoutErrorCode,
  type TokenRenewalErrorCode,
  type UnexpectedResponseErrorCode,
} from '../src/index.js';

declare const error: unknown;

describe("each class's code is the union of the codes it carries", () => {
  test('InvalidArgumentError', () => {
    expectTypeOf<InvalidArgumentError['code']>().toEqualTypeOf<InvalidArgumentErrorCode>();
    expectTypeOf<InvalidArgumentErrorCode>().toEqualTypeOf<
      | 'invalid_option'
      | 'invalid_base_url'
      | 'missing_webhooks_url'
      | 'invalid_address'
      | 'invalid_signer'
      | 'invalid_domain'
      | 'invalid_uri'
      | 'invalid_chain_id'
      | 'invalid_statement'
      | 'invalid_siwe_field'
      | 'domain_blocked_by_waf'
      | 'ttl_out_of_range'
      | 'invalid_signature'
      | 'sign_in_in_progress'
      | 'invalid_tokens'
      | 'amount_not_integer'
      | 'amount_out_of_range'
      | 'currency_not_supported'
      | 'invalid_client'
      | 'invalid_body'
      | 'invalid_email'
      | 'invalid_phone'
      | 'invalid_otp'
      | 'invalid_answers'
      | 'invalid_target'
      | 'invalid_token'
    >();
  });

  test('UnexpectedResponseError', () => {
    expectTypeOf<UnexpectedResponseError['code']>().toEqualTypeOf<UnexpectedResponseErrorCode>();
    expectTypeOf<UnexpectedResponseErrorCode>().toEqualTypeOf<
      'invalid_nonce' | 'missing_token' | 'invalid_token' | 'unexpected_limit_body' | 'unexpected_onboarding_body' | 'public_key_unavailable'
    >();
  });

  test('ConnectionError', () => {
    expectTypeOf<ConnectionError['code']>().toEqualTypeOf<ConnectionErrorCode>();
    expectTypeOf<ConnectionErrorCode>().toEqualTypeOf<'connection_failed' | 'network_permission_denied'>();
  });

  test('TimeoutError', () => {
    expectTypeOf<TimeoutError['code']>().toEqualTypeOf<TimeoutErrorCode>();
    expectTypeOf<TimeoutErrorCode>().toEqualTypeOf<'request_timeout' | 'limit_sync_timeout' | 'onboarding_wait_timeout'>();
  });

  test('AbortError', () => {
    expectTypeOf<AbortError['code']>().toEqualTypeOf<AbortErrorCode>();
    expectTypeOf<AbortErrorCode>().toEqualTypeOf<'aborted'>();
  });

  test('LimitSupersededError', () => {
    expectTypeOf<LimitSupersededError['code']>().toEqualTypeOf<LimitSupersededErrorCode>();
    expectTypeOf<LimitSupersededErrorCode>().toEqualTypeOf<'limit_superseded'>();
  });

  test('TokenRenewalError', () => {
    expectTypeOf<TokenRenewalError['code']>().toEqualTypeOf<TokenRenewalErrorCode>();
    expectTypeOf<TokenRenewalErrorCode>().toEqualTypeOf<'token_renewal_failed' | 'token_refresh_unreachable' | 'token_renewal_timeout' | 'session_changed'>();
  });

  test('a PartnerClientError thrown as such: client_code_unavailable; the class keeps string', () => {
    expectTypeOf<PartnerClientErrorOwnCode>().toEqualTypeOf<'client_code_unavailable'>();
    expectTypeOf<PartnerClientError['code']>().toEqualTypeOf<string>();
  });

  test('ApiError and its subclasses keep string: the service names its own codes', () => {
    expectTypeOf<ApiError['code']>().toEqualTypeOf<string>();
    for (const code of [
      ({} as AuthenticationError).code,
      ({} as ForbiddenError).code,
      ({} as WafForbiddenError).code,
      ({} as ValidationError).code,
      ({} as NotFoundError).code,
      ({} as ConflictError).code,
      ({} as RateLimitError).code,
      ({} as ServerError).code,
    ]) {
      expectTypeOf(code).toEqualTypeOf<string>();
    }
  });
});

describe('a known code narrows; a misspelt one does not compile', () => {
  test('TimeoutError', () => {
    if (error instanceof TimeoutError) {
      expectTypeOf(error.code).toEqualTypeOf<TimeoutErrorCode>();
      if (error.code === 'limit_sync_timeout') expectTypeOf(error.code).toEqualTypeOf<'limit_sync_timeout'>();
      else expectTypeOf(error.code).toEqualTypeOf<'request_timeout' | 'onboarding_wait_timeout'>();
      // @ts-expect-error: a typo of request_timeout
      if (error.code === 'request_timout') throw error;
      // @ts-expect-error: a ConnectionError's code, never a TimeoutError's
      if (error.code === 'connection_failed') throw error;
    }
  });

  test('TokenRenewalError', () => {
    if (error instanceof TokenRenewalError) {
      if (error.code === 'session_changed') expectTypeOf(error.code).toEqualTypeOf<'session_changed'>();
      // @ts-expect-error: the code is token_renewal_timeout
      if (error.code === 'renewal_timeout') throw error;
    }
  });

  test('InvalidArgumentError, UnexpectedResponseError, ConnectionError, AbortError, LimitSupersededError', () => {
    if (error instanceof InvalidArgumentError) {
      if (error.code === 'amount_out_of_range') expectTypeOf(error.code).toEqualTypeOf<'amount_out_of_range'>();
      // @ts-expect-error: the code is amount_out_of_range
      if (error.code === 'amount_too_large') throw error;
    }
    if (error instanceof UnexpectedResponseError) {
      // @ts-expect-error: the code is unexpected_limit_body
      if (error.code === 'unexpected_body') throw error;
    }
    if (error instanceof ConnectionError) {
      // @ts-expect-error: the code is connection_failed
      if (error.code === 'connection_failure') throw error;
    }
    if (error instanceof AbortError) {
      // @ts-expect-error: the code is aborted
      if (error.code === 'abort') throw error;
    }
    if (error instanceof LimitSupersededError) {
      // @ts-expect-error: the code is limit_superseded
      if (error.code === 'limit_supersede') throw error;
    }
  });

  test('a switch over a class code is checked for exhaustiveness', () => {
    if (error instanceof ConnectionError) {
      switch (error.code) {
        case 'connection_failed':
        case 'network_permission_denied':
          break;
        default:
          expectTypeOf(error.code).toBeNever();
      }
    }
  });

  test('PartnerClientError narrows to code string, never any; an ApiError compares with any service code', () => {
    if (error instanceof PartnerClientError) {
      expectTypeOf(error.code).toEqualTypeOf<string>();
      expectTypeOf(error.code).not.toBeAny();
    }
    // Compiles, and stays string: the service's codes are an open set.
    if (error instanceof ForbiddenError && error.code === 'DomainNotWhitelisted') expectTypeOf(error.code).toEqualTypeOf<string>();
    if (error instanceof ConflictError && error.code === 'OnboardingStepNotReached') expectTypeOf(error).toExtend<ApiError>();
  });
});

describe("each constructor takes only its class's codes", () => {
  test('a code of the class compiles; another does not', () => {
    expectTypeOf(new TimeoutError('m', { code: 'request_timeout', timeoutMs: 1 })).toExtend<PartnerClientError>();
    // @ts-expect-error: a typo of request_timeout
    new TimeoutError('m', { code: 'request_timout', timeoutMs: 1 });
    // @ts-expect-error: a TimeoutError's code
    new ConnectionError('m', { code: 'request_timeout' });
    // @ts-expect-error: not one of InvalidArgumentErrorCode
    new InvalidArgumentError('amount', 'm', 'amount_too_large');
    // @ts-expect-error: not one of TokenRenewalErrorCode
    new TokenRenewalError('m', { code: 'token_renewal_failure' });
    // @ts-expect-error: not one of UnexpectedResponseErrorCode
    new UnexpectedResponseError('m', { code: 'unexpected_body' });
    // @ts-expect-error: not one of AbortErrorCode
    new AbortError('m', { code: 'cancelled' });
    // @ts-expect-error: not one of LimitSupersededErrorCode
    new LimitSupersededError('m', { code: 'superseded' });
  });

  test('PartnerClientError and ApiError take any code (subclasses narrow theirs)', () => {
    expectTypeOf(new PartnerClientError('m', { code: 'client_code_unavailable' }).code).toEqualTypeOf<'client_code_unavailable'>();
    expectTypeOf(new ApiError({ status: 409, body: undefined, code: 'AlreadyDone', message: 'm' }).code).toEqualTypeOf<string>();
    expectTypeOf<PartnerClientErrorOptions['code']>().toEqualTypeOf<string>();
    expectTypeOf<PartnerClientErrorOptions<TimeoutErrorCode>['code']>().toEqualTypeOf<TimeoutErrorCode>();
  });

  test('every error is still a PartnerClientError', () => {
    expectTypeOf<TimeoutError>().toExtend<PartnerClientError>();
    expectTypeOf<TokenRenewalError>().toExtend<PartnerClientError>();
    expectTypeOf<InvalidArgumentError>().toExtend<PartnerClientError>();
    expectTypeOf<ConflictError>().toExtend<PartnerClientError>();
  });
});
