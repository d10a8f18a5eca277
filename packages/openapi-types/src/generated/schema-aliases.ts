// This file is generated. Do not edit it by hand.
// Source: specs/openapi.yaml (info.version 1.0.0), read from specs/dist/openapi.json.
// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of @capi/openapi-types; pnpm build runs it too).

import type { components } from './openapi.js';

/**
 * The user accepts the Terms of Service (reference 3.3, `action_accept_tos`, always required).
 *
 * @example
 * {
 *   "accepted": true
 * }
 */
export type AcceptTermsRequest = components["schemas"]["AcceptTermsRequest"];

/**
 * The answer to a verified SIWE signature (reference 2.9, 4.2 and 5). Send `token` as `Authorization: Bearer <token>`. Lifetime: older generation, the requested `ttlInSeconds` (1 to 24 hours); newer generation, 15 minutes plus a `refreshToken` valid 7 days that rotates (reusing an old refresh token ends the session). On a `401` the client signs in again (new nonce, new signature). The JWT's claims are described by `AccessTokenClaims`; clients read them without verifying the signature, to renew a few minutes before `exp`.
 *
 * @example
 * {
 *   "token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3OTU3NzYwMDAsImV4cCI6MTc5NTg2MjQwMCwic2lnbmVyQWRkcmVzcyI6IjB4NWFBZWI2MDUzRjNFOTRDOWI5QTA5ZjMzNjY5NDM1RTdFZjFCZUFlZCIsImNoYWluSWQiOiIxMDAiLCJoYXNTaWduZWRVcCI6dHJ1ZSwidXNlcklkIjoidXNyXzdmM2MyYSJ9.c2lnbmF0dXJlLW5vdC12ZXJpZmllZC1ieS1jbGllbnRz"
 * }
 */
export type AccessToken = components["schemas"]["AccessToken"];

/**
 * The claims in the payload of the access token (a JWT). Clients decode them without verifying the signature (only the service can), to know when to renew and who signed in.
 *
 * @example
 * {
 *   "iat": 1795776000,
 *   "exp": 1795862400,
 *   "signerAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
 *   "chainId": "100",
 *   "hasSignedUp": true,
 *   "userId": "usr_7f3c2a"
 * }
 */
export type AccessTokenClaims = components["schemas"]["AccessTokenClaims"];

/**
 * The daily spending limit of the authenticated user's account (reference 2.7). It is cumulative across all cards of the account, not per card nor per transaction; an authorization that meets or exceeds the remaining limit can still be approved, later eligible authorizations that day are declined. The default is 1,000,000 cents (10,000 USD), or the maximum agreed with the partner at onboarding when that is lower. This is not the onchain daily limit of the newer generation, which is fixed at 20,000 USD. `x-limit-rules` transcribes the rows of reference 8 about the limit's scope, authorizations near it and the onchain limit.
 *
 * @example
 * {
 *   "amount": 1000000,
 *   "currency": "USD",
 *   "syncStatus": "synced"
 * }
 */
export type AccountLimit = components["schemas"]["AccountLimit"];

/**
 * Feature flags of a user (reference 2.6).
 *
 * @example
 * {
 *   "providerIban": true
 * }
 */
export type AvailableFeatures = components["schemas"]["AvailableFeatures"];

/**
 * Bank details of the user's account (reference 2.4). The object itself may be null on a user; when it is present, all four fields are present, each possibly null.
 *
 * @example
 * {
 *   "providerIban": "GB33BUKB20201555555555",
 *   "providerBic": "BUKBGB22",
 *   "providerIbanStatus": "active",
 *   "address": "1 Bank Street, London"
 * }
 */
export type BankingDetails = components["schemas"]["BankingDetails"];

/**
 * A card of the user's account (reference 2.3); all six fields are always present.
 *
 * @example
 * {
 *   "id": "crd_91b0",
 *   "cardToken": "tok_4f9a1c",
 *   "lastFourDigits": "4242",
 *   "embossedName": "ADA LOVELACE",
 *   "activatedAt": "2026-03-01T10:15:00.000Z",
 *   "virtual": true
 * }
 */
export type Card = components["schemas"]["Card"];

/**
 * The `card.transaction.created` webhook event: a card transaction was created. Partners handle it, but its payload is not shown in the reference, so `data` is an open object.
 *
 * @example
 * {
 *   "eventType": "card.transaction.created",
 *   "data": {}
 * }
 */
export type CardTransactionCreatedEvent = components["schemas"]["CardTransactionCreatedEvent"];

/**
 * A new card for the user's account. When the partner does not require phone verification, the phone number is set with the first card instead (reference 9), unverified.
 *
 * @example
 * {
 *   "virtual": true
 * }
 */
export type CreateCardRequest = components["schemas"]["CreateCardRequest"];

/**
 * An email address, as the user types it (the service compares it case-insensitively).
 *
 * @example
 * "ada@example.com"
 */
export type EmailAddress = components["schemas"]["EmailAddress"];

/**
 * Asks the service to email a one-time password to the address the user will register with.
 *
 * @example
 * {
 *   "email": "ada@example.com"
 * }
 */
export type EmailVerificationRequest = components["schemas"]["EmailVerificationRequest"];

/**
 * The body of an error response. The service is not uniform: it answers `{error}`, `{message}`, or (newer generation) `{code, message}`. Clients read whichever is there and fall back to the HTTP status.
 *
 * @example
 * {
 *   "error": "Unauthorized"
 * }
 */
export type ErrorBody = components["schemas"]["ErrorBody"];

/** The `kyc.phone-validation.changed` webhook event: the user's phone validation status (`isPhoneValidated`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export type KycPhoneValidationChangedEvent = components["schemas"]["KycPhoneValidationChangedEvent"];

/** The `kyc.source-of-funds.changed` webhook event: the user's source-of-funds information (`isSourceOfFundsAnswered`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export type KycSourceOfFundsChangedEvent = components["schemas"]["KycSourceOfFundsChangedEvent"];

/**
 * Identity verification (KYC) status of a user (reference 2.5). Every change emits the `kyc.status.changed` event. Transitions between the values are not shown in the reference.
 *
 * @example
 * "approved"
 */
export type KycStatus = components["schemas"]["KycStatus"];

/** The `kyc.status.changed` webhook event: the user's KYC status (`kycStatus`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export type KycStatusChangedEvent = components["schemas"]["KycStatusChangedEvent"];

/**
 * A single-use nonce to embed in the next SIWE message (reference 4.1). Each sign-in attempt needs a new one. Sent as the bare `text/plain` body; clients trim whitespace and quotes.
 *
 * @example
 * "a1b2c3d4e5f6"
 */
export type Nonce = components["schemas"]["Nonce"];

/**
 * A step of the newer generation's onboarding, read by polling `getOnboardingStatus` (reference 3.3). The reference names the first four of the eight values below; the other four name the later steps it describes (see `x-assumption`). The full list is not shown, so any other string is possible and a client must treat it as "keep polling or show a generic step". Observed order for a migrated user: `action_accept_tos`, then `waiting_kyc_setup`, then KYC and source of funds (usually skipped), then account creation, phone verification if the partner requires it, and card creation. The status follows the user's current state, so it can go back (see the `x-assumption` of the known values): a `completed` user whose KYC is no longer approved reads `action_complete_kyc` again.
 *
 * @example
 * "action_accept_tos"
 */
export type OnboardingStatus = components["schemas"]["OnboardingStatus"];

/**
 * The answer of `getOnboardingStatus`: the step the user is at. The set of statuses is open (see `OnboardingStatus`); further fields may be added, so ignore the ones you do not know.
 *
 * @example
 * {
 *   "status": "action_accept_tos"
 * }
 */
export type OnboardingStatusResponse = components["schemas"]["OnboardingStatusResponse"];

/**
 * The one-time password the service sent by email or SMS: six decimal digits, single use, valid for a limited time (`OneTimePasswordSent.expiresAt`).
 *
 * @example
 * "492817"
 */
export type OneTimePassword = components["schemas"]["OneTimePassword"];

/**
 * The answer of a request for a one-time password (`requestEmailVerification`, `requestPhoneVerification`): where it was sent and until when it is valid. The password itself only reaches the user.
 *
 * @example
 * {
 *   "sentTo": "ada@example.com",
 *   "expiresAt": "2026-11-21T12:10:00.000Z"
 * }
 */
export type OneTimePasswordSent = components["schemas"]["OneTimePasswordSent"];

/**
 * A phone number in E.164 form (`+`, country code, subscriber number, digits only).
 *
 * @example
 * "+15555550123"
 */
export type PhoneNumber = components["schemas"]["PhoneNumber"];

/**
 * Asks the service to send a one-time password by SMS to a phone number.
 *
 * @example
 * {
 *   "phone": "+15555550123"
 * }
 */
export type PhoneVerificationRequest = components["schemas"]["PhoneVerificationRequest"];

/**
 * Registers the signed-in wallet's user with an email address proved by the one-time password that `requestEmailVerification` sent to it.
 *
 * @example
 * {
 *   "email": "ada@example.com",
 *   "otp": "492817"
 * }
 */
export type RegisterUserRequest = components["schemas"]["RegisterUserRequest"];

/**
 * A new daily spending limit for the authenticated user's account (reference 4.4 and 8). Users may lower the limit of their own account.
 *
 * @example
 * {
 *   "amount": 250000,
 *   "currency": "USD"
 * }
 */
export type SetAccountLimitRequest = components["schemas"]["SetAccountLimitRequest"];

/**
 * A phone number proved by the one-time password that `requestPhoneVerification` sent to it. Used to set the number (`setPhone`) and to change it (`updatePhone`).
 *
 * @example
 * {
 *   "phone": "+15555550123",
 *   "otp": "731904"
 * }
 */
export type SetPhoneRequest = components["schemas"]["SetPhoneRequest"];

/**
 * A wallet the user signs in with (reference 2.2).
 *
 * @example
 * {
 *   "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 * }
 */
export type SignInWallet = components["schemas"]["SignInWallet"];

/**
 * A signed Sign-In with Ethereum message, exchanged for an access token (reference 4.2 and 5).
 *
 * @example
 * {
 *   "message": "localhost:3000 wants you to sign in with your Ethereum account:\n0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n\nSign in with Ethereum to the app.\n\nURI: http://localhost:3000\nVersion: 1\nChain ID: 100\nNonce: a1b2c3d4e5f6\nIssued At: 2026-11-21T12:00:00.000Z",
 *   "signature": "0x6e3f1c2b8a0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d71b",
 *   "ttlInSeconds": 86400
 * }
 */
export type SiweChallengeRequest = components["schemas"]["SiweChallengeRequest"];

/**
 * A smart-account wallet of the user (reference 2.3).
 *
 * @example
 * {
 *   "address": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
 *   "chainId": "100"
 * }
 */
export type SmartWallet = components["schemas"]["SmartWallet"];

/**
 * One answer of the source-of-funds questionnaire.
 *
 * @example
 * {
 *   "question": "What is your main source of income?",
 *   "answer": "Employment"
 * }
 */
export type SourceOfFundsAnswer = components["schemas"]["SourceOfFundsAnswer"];

/**
 * The user's answers to the source-of-funds questionnaire (reference 3.3, `action_complete_sof`).
 *
 * @example
 * {
 *   "answers": [
 *     {
 *       "question": "What is your main source of income?",
 *       "answer": "Employment"
 *     }
 *   ]
 * }
 */
export type SourceOfFundsRequest = components["schemas"]["SourceOfFundsRequest"];

/**
 * Whether the most recently requested limit update has been fully applied downstream (reference 3.1). A successful `PUT` answers `pending`; the service moves it to `synced` once the change is applied. No other transition is stated.
 *
 * @example
 * "pending"
 */
export type SyncStatus = components["schemas"]["SyncStatus"];

/**
 * A JSON object whose fields the reference does not show. Any object is accepted; do not depend on particular fields.
 *
 * @example
 * {}
 */
export type UnspecifiedObject = components["schemas"]["UnspecifiedObject"];

/**
 * A user of the platform, sent in full as the `data` of every user and KYC webhook event (reference 2.1). Every field is always present; nullable fields carry JSON `null` when no value exists.
 *
 * @example
 * {
 *   "id": "usr_7f3c2a",
 *   "email": "ada@example.com",
 *   "phone": "+15555550123",
 *   "firstName": "Ada",
 *   "lastName": "Lovelace",
 *   "address1": "12 Analytical Way",
 *   "address2": null,
 *   "city": "London",
 *   "postalCode": "N1 9GU",
 *   "state": null,
 *   "country": "GB",
 *   "nationalityCountry": "GB",
 *   "signInWallets": [
 *     {
 *       "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 *     }
 *   ],
 *   "smartWallets": [
 *     {
 *       "address": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
 *       "chainId": "100"
 *     }
 *   ],
 *   "kycStatus": "approved",
 *   "availableFeatures": {
 *     "providerIban": true
 *   },
 *   "cards": [
 *     {
 *       "id": "crd_91b0",
 *       "cardToken": "tok_4f9a1c",
 *       "lastFourDigits": "4242",
 *       "embossedName": "ADA LOVELACE",
 *       "activatedAt": "2026-03-01T10:15:00.000Z",
 *       "virtual": true
 *     }
 *   ],
 *   "bankingDetails": {
 *     "providerIban": "GB33BUKB20201555555555",
 *     "providerBic": "BUKBGB22",
 *     "providerIbanStatus": "active",
 *     "address": "1 Bank Street, London"
 *   },
 *   "isSourceOfFundsAnswered": true,
 *   "isPhoneValidated": true
 * }
 */
export type User = components["schemas"]["User"];

/** The `user.created` webhook event: a new user account was created. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export type UserCreatedEvent = components["schemas"]["UserCreatedEvent"];

/**
 * An EVM wallet address, `0x` followed by 40 hexadecimal digits (checksummed or not).
 *
 * @example
 * "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 */
export type WalletAddress = components["schemas"]["WalletAddress"];

/**
 * The answer of the webhook key service (reference 2.8 and 4.5).
 *
 * @example
 * {
 *   "success": true,
 *   "publicKey": "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAeBZbNKJ2eiK+TY34oxEAAfjbtVozGhk8MoPKDp4aqQ=\n-----END PUBLIC KEY-----\n"
 * }
 */
export type WebhookPublicKey = components["schemas"]["WebhookPublicKey"];
