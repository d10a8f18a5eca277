/**
 * `@capi/client`: typed client of the Card Account Partner Interface. SIWE sign-in, token
 * renewal, the daily spending limit, the webhook key, typed errors, retries and timeouts.
 *
 * @example
 * import { createPartnerClient, signerFromViemAccount } from '@capi/client';
 * const client = createPartnerClient({ baseUrl: 'https://api.example.com' });
 * await client.signInWithEthereum({ ...signerFromViemAccount(account), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 });
 * await client.setDailyLimit({ amount: 50_000 });
 *
 * @packageDocumentation
 */
export { createPartnerClient, type PartnerClient, type PartnerClientOptions } from './partner-client.js';
export { createTokenManager, receivedTokensExpiry, TokenManager, TokenRenewalError, type TokenGeneration, type TokenRenewalErrorCode, type TokenManagerOptions, type TokenSet, type TokenWaitOptions } from './token-manager.js';
export { signerFromViemAccount, signerFromWalletClient, type MessageSigningAccount, type MessageSigningWalletClient, type SignMessage, type SiweSigner } from './signers.js';
export type { SignInResult, SignInWithEthereumParams } from './sign-in.js';
export type { DailyLimit, PendingDailyLimit, SetDailyLimitParams, WaitForLimitSyncOptions } from './daily-limit.js';
export type { FetchFunction, RequestOptions, RetryEvent } from './transport.js';
export type { RawPaths, WidenOpenEnums } from './raw-paths.js';
export type { RetriesOption, RetryPolicy } from './retry-policy.js';
export {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  errorFromResponse,
  ForbiddenError,
  InvalidArgumentError,
  LimitSupersededError,
  NotFoundError,
  ConflictError,
  PartnerClientError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  ValidationError,
  WafForbiddenError,
  type AbortErrorCode,
  type ApiErrorInit,
  type ConnectionErrorCode,
  type ErrorFromResponseOptions,
  type InvalidArgumentErrorCode,
  type LimitSupersededErrorCode,
  type PartnerClientErrorOptions,
  type PartnerClientErrorOwnCode,
  type TimeoutErrorCode,
  type UnexpectedResponseErrorCode,
} from './errors.js';
export { readJwtExpiry } from './jwt-expiry.js';
export type { AccountLimit, WebhookPublicKey } from '@capi/openapi-types';
