// This file is generated. Do not edit it by hand.
// Source: specs/openapi.yaml (info.version 1.0.0), read from specs/dist/openapi.json.
// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of @capi/openapi-types; pnpm build runs it too).

export interface paths {
    "/api/v1/auth/nonce": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Generate a nonce
         * @description Returns a new single-use nonce to embed in the SIWE message. Each sign-in attempt needs a new one (replay protection). The body is the bare nonce as `text/plain`; trim whitespace and quotes before use.
         */
        get: operations["getNonce"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/challenge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Verify a SIWE signature and obtain an access token
         * @description Exchanges a signed SIWE message for a JWT access token.
         *
         *     Rules (reference 5): the signer must own a registered account; the SIWE `domain` must
         *     be whitelisted in the partner dashboard (`localhost`, with or without a port, is always
         *     allowed); `127.0.0.1` in the message may be blocked by the firewall (`WAFForbidden`);
         *     the nonce must be fresh. Signatures from EOAs (EIP-191) and smart accounts (EIP-1271)
         *     are accepted.
         *
         *     Token lifetime differs by generation (reference 9):
         *     - older generation: a single token valid for the requested `ttlInSeconds` (1 to 24 hours);
         *     - newer generation: an access token valid 15 minutes plus a `refreshToken` valid 7 days
         *       with rotation (the refresh call is not part of the reference).
         *
         *     When a later request answers 401 because the token expired, the client restarts the
         *     whole flow (new nonce, new signature), which needs the user.
         *
         *     Newer generation: one owner address is fixed at account creation; no other SIWE
         *     address can be added. A migrated user signs in with a wallet that currently owns the
         *     existing smart account, and that wallet becomes the only sign-in wallet.
         */
        post: operations["verifySiweSignature"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/user-api/user/account/limit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the account's daily spending limit
         * @description Newer generation only: the older generation has no limit endpoint (there the user sets the onchain daily limit with an onchain signature, reference 9). Returns the daily spending limit of the authenticated user's account. The limit is cumulative across all cards of the account (not per card, not per transaction); the default is 1,000,000 cents (10,000 USD), or the maximum agreed with the partner at onboarding when that is lower; a limit never set reads `syncStatus` `synced`. `syncStatus` says whether the most recent update has been applied downstream. The limit is the account's: a user has none until `createAccount`, and is answered `409` `OnboardingStepNotReached` before it.
         */
        get: operations["getAccountLimit"];
        /**
         * Set the account's daily spending limit
         * @description Newer generation only: the older generation has no limit endpoint (there the user sets the onchain daily limit with an onchain signature, reference 9). Sets a new daily spending limit and returns it immediately with `syncStatus` `pending`; it becomes `synced` once applied downstream (poll `getAccountLimit`). `amount` is in USD cents, greater than 0 and at most 1,000,000 (10,000 USD) unless a higher maximum was agreed with the partner at onboarding; only `USD` is accepted. Before `createAccount` there is no account to set it on: `409` `OnboardingStepNotReached`, and nothing changes.
         */
        put: operations["setAccountLimit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/public-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the webhook public key
         * @description Returns the Ed25519 public key that verifies the `X-Webhook-Signature` of every webhook. Use the key only when `success` is true. Cache it, and refetch once when a verification fails (the key may have rotated), rate-limited.
         */
        get: operations["getWebhookPublicKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/user/onboarding": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Poll the onboarding status
         * @description Newer generation. Returns the step the user is at; poll it to drive the onboarding UI.
         *     Known steps, in the observed order (reference 3.3): `action_accept_tos`,
         *     `waiting_kyc_setup` (migrated users only), `action_complete_kyc`,
         *     `action_complete_sof`, `action_create_account`, `action_verify_phone` (only when the
         *     partner requires phone verification), `action_create_card`, then `completed`. The set
         *     is open: treat an unknown status as "keep polling or show a generic step".
         *
         *     A signer that has not registered yet (`hasSignedUp: false`) gets `401` with `code`
         *     `UserNotRegistered`, as on every authenticated route but `requestEmailVerification` and
         *     `registerUser` (reference 5 rule 1 and 7): register first, then poll.
         *
         *     Migrated users (reference 3.3 and 9): there is no bulk migration, no migration
         *     endpoint and no migrated flag. A user re-onboards through the standard flow and is
         *     recognised only at `registerUser` with a wallet that owns the existing smart account.
         *     Terms acceptance is always required; `waiting_kyc_setup` lasts while verification data
         *     is carried over (no fixed duration); KYC is then skipped when verification is carried
         *     over, and source of funds when the existing answers map onto the current
         *     questionnaire. When verification cannot be carried over, the user falls back to the
         *     full standard flow, with no error.
         */
        get: operations["getOnboardingStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/email/verification": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Request an email one-time password
         * @description Newer generation. Emails a one-time password to the address the user will register with; `registerUser` then gives the address and the password. A new request replaces the previous password. A signer that has not registered yet may call it.
         */
        post: operations["requestEmailVerification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/user": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the signed-in user
         * @description Newer generation. Returns the signed-in user, the same `User` object that every user and KYC webhook event carries as `data`, so an app can compare the two.
         */
        get: operations["getUser"];
        put?: never;
        /**
         * Register the user
         * @description Newer generation. Registers a user for the signed-in wallet, with the email address
         *     proved by the one-time password from `requestEmailVerification`. Answers the new
         *     `User` and emits `user.created`. The signed-in wallet becomes the user's only sign-in
         *     wallet and owner (reference 5 rule 8); the access token's claims still say
         *     `hasSignedUp: false` until a new token is issued (a refresh, or the next sign-in),
         *     which carries `userId`. The service keeps answering the old token until it expires;
         *     `@capi/client` refreshes it right after registration when it has a `refresh` callback.
         *
         *     Migration (reference 9): registration is the only place where an existing user is
         *     recognised, by registering with a wallet that currently owns the user's existing smart
         *     account. A user registered with an unrecognised wallet is treated as new and cannot be
         *     migrated later.
         */
        post: operations["registerUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/user/terms": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Accept the Terms of Service
         * @description Newer generation. The user accepts the Terms of Service, the step `action_accept_tos`, always required (migrated users too, reference 3.3). Answers the `User`, which has no field for it: read the next step with `getOnboardingStatus`.
         */
        post: operations["acceptTerms"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/source-of-funds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Answer the source-of-funds questionnaire
         * @description Newer generation. Records the user's answers (the step `action_complete_sof`), sets `isSourceOfFundsAnswered` and emits `kyc.source-of-funds.changed`. Answers the `User`. The questionnaire's questions are not shown in the reference.
         */
        post: operations["submitSourceOfFunds"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/phone/verification": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Request a phone one-time password
         * @description Newer generation. Sends a one-time password by SMS to a phone number; `setPhone` (or `updatePhone`) then gives the number and the password. Whether phone verification is needed depends on the partner's requirement (reference 9): either this one-time-password flow (step `action_verify_phone`), or the phone is set when the first card is created (`createCard`). The older generation always verifies by SMS one-time password (`requestLegacyPhoneVerification`).
         */
        post: operations["requestPhoneVerification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/phone": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set and validate the phone number
         * @description Newer generation. Sets the user's phone number, proved by the one-time password from `requestPhoneVerification`; `isPhoneValidated` becomes true and `kyc.phone-validation.changed` is emitted (only when the validation changes). Answers the `User`.
         */
        post: operations["setPhone"];
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change the phone number
         * @description Newer generation. Replaces the user's phone number with a new one, proved by its one-time password. The number stays validated, so no `kyc.phone-validation.changed` is emitted: that event follows the validation, not the number. Answers the `User`.
         */
        patch: operations["updatePhone"];
        trace?: never;
    };
    "/account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provision and create the account
         * @description Newer generation. A single endpoint that provisions and creates the account, including the smart account (it appears in the User's `smartWallets`); the older generation used a dedicated deployment endpoint instead (reference 9). The signed-in wallet becomes the owner, fixed here and never changed. No request body. Answers the `User`.
         */
        post: operations["createAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a card
         * @description Newer generation. Creates a card on the user's account (the step `action_create_card`). When the partner does not require phone verification, the first card also sets the phone number (`phone`, unverified, reference 9). A `phone` other than the number the user already has is refused (`409` `PhoneAlreadySet`). Answers the `User` with the new card.
         */
        post: operations["createCard"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/verification": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Request an SMS one-time password (older generation)
         * @description Older generation only. Sends an SMS one-time password to verify the user's phone; the older generation always verifies the phone this way (reference 9). Check it with `checkLegacyPhoneVerification`. Same shapes as the newer `requestPhoneVerification`.
         */
        post: operations["requestLegacyPhoneVerification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/verification/check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check an SMS one-time password (older generation)
         * @description Older generation only. Checks the SMS one-time password sent by `requestLegacyPhoneVerification`; the number becomes the user's validated phone. Answers the `User`.
         */
        post: operations["checkLegacyPhoneVerification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "user.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A user was created
         * @description POSTed to the partner's HTTPS URL. Verify `X-Webhook-Signature` over `${X-Webhook-Timestamp}.${rawBody}` with the key from `getWebhookPublicKey` before parsing; answer any 2xx within 30 seconds, or the delivery is retried after 1, 5 and 15 minutes. Duplicates are possible: process idempotently. See `asyncapi.yaml`.
         */
        post: operations["receiveUserCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "kyc.status.changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A user's KYC status changed
         * @description POSTed to the partner's HTTPS URL. Verify `X-Webhook-Signature` over `${X-Webhook-Timestamp}.${rawBody}` with the key from `getWebhookPublicKey` before parsing; answer any 2xx within 30 seconds, or the delivery is retried after 1, 5 and 15 minutes. Duplicates are possible: process idempotently. See `asyncapi.yaml`.
         */
        post: operations["receiveKycStatusChanged"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "kyc.phone-validation.changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A user's phone validation status changed
         * @description POSTed to the partner's HTTPS URL. Verify `X-Webhook-Signature` over `${X-Webhook-Timestamp}.${rawBody}` with the key from `getWebhookPublicKey` before parsing; answer any 2xx within 30 seconds, or the delivery is retried after 1, 5 and 15 minutes. Duplicates are possible: process idempotently. See `asyncapi.yaml`.
         */
        post: operations["receiveKycPhoneValidationChanged"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "kyc.source-of-funds.changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A user's source-of-funds information changed
         * @description POSTed to the partner's HTTPS URL. Verify `X-Webhook-Signature` over `${X-Webhook-Timestamp}.${rawBody}` with the key from `getWebhookPublicKey` before parsing; answer any 2xx within 30 seconds, or the delivery is retried after 1, 5 and 15 minutes. Duplicates are possible: process idempotently. See `asyncapi.yaml`.
         */
        post: operations["receiveKycSourceOfFundsChanged"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "card.transaction.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A card transaction was created (payload not shown)
         * @description POSTed to the partner's HTTPS URL. Verify `X-Webhook-Signature` over `${X-Webhook-Timestamp}.${rawBody}` with the key from `getWebhookPublicKey` before parsing; answer any 2xx within 30 seconds, or the delivery is retried after 1, 5 and 15 minutes. Duplicates are possible: process idempotently. See `asyncapi.yaml`.
         */
        post: operations["receiveCardTransactionCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * AcceptTermsRequest
         * @description The user accepts the Terms of Service (reference 3.3, `action_accept_tos`, always required).
         * @example {
         *       "accepted": true
         *     }
         */
        AcceptTermsRequest: {
            /**
             * @description Must be `true`; the user has read and accepted the Terms of Service.
             * @constant
             */
            accepted: true;
        };
        /**
         * AccessToken
         * @description The answer to a verified SIWE signature (reference 2.9, 4.2 and 5). Send `token` as `Authorization: Bearer <token>`. Lifetime: older generation, the requested `ttlInSeconds` (1 to 24 hours); newer generation, 15 minutes plus a `refreshToken` valid 7 days that rotates (reusing an old refresh token ends the session). On a `401` the client signs in again (new nonce, new signature). The JWT's claims are described by `AccessTokenClaims`; clients read them without verifying the signature, to renew a few minutes before `exp`.
         * @example {
         *       "token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3OTU3NzYwMDAsImV4cCI6MTc5NTg2MjQwMCwic2lnbmVyQWRkcmVzcyI6IjB4NWFBZWI2MDUzRjNFOTRDOWI5QTA5ZjMzNjY5NDM1RTdFZjFCZUFlZCIsImNoYWluSWQiOiIxMDAiLCJoYXNTaWduZWRVcCI6dHJ1ZSwidXNlcklkIjoidXNyXzdmM2MyYSJ9.c2lnbmF0dXJlLW5vdC12ZXJpZmllZC1ieS1jbGllbnRz"
         *     }
         */
        AccessToken: {
            /** @description The JWT access token (three base64url segments). */
            token: string;
            /** @description Newer generation only: a refresh token valid 7 days, rotated on each use. The refresh operation itself is not part of the reference. */
            refreshToken?: string;
        };
        /**
         * AccessTokenClaims
         * @description The claims in the payload of the access token (a JWT). Clients decode them without verifying the signature (only the service can), to know when to renew and who signed in.
         * @example {
         *       "iat": 1795776000,
         *       "exp": 1795862400,
         *       "signerAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
         *       "chainId": "100",
         *       "hasSignedUp": true,
         *       "userId": "usr_7f3c2a"
         *     }
         */
        AccessTokenClaims: {
            /** @description Issued-at time, Unix seconds. */
            iat: number;
            /** @description Expiry time, Unix seconds; renew a few minutes before it. */
            exp: number;
            /** @description Address of the wallet that signed the SIWE message. */
            signerAddress: components["schemas"]["WalletAddress"];
            /** @description Chain id of the signing wallet as a decimal string (`"100"` in production). */
            chainId: string;
            /** @description Whether the signer has registered a user; false before `registerUser`. */
            hasSignedUp: boolean;
            /** @description The user's id, present once the user has signed up. */
            userId?: string;
        };
        /**
         * AccountLimit
         * @description The daily spending limit of the authenticated user's account (reference 2.7). It is cumulative across all cards of the account, not per card nor per transaction; an authorization that meets or exceeds the remaining limit can still be approved, later eligible authorizations that day are declined. The default is 1,000,000 cents (10,000 USD), or the maximum agreed with the partner at onboarding when that is lower. This is not the onchain daily limit of the newer generation, which is fixed at 20,000 USD. `x-limit-rules` transcribes the rows of reference 8 about the limit's scope, authorizations near it and the onchain limit.
         * @example {
         *       "amount": 1000000,
         *       "currency": "USD",
         *       "syncStatus": "synced"
         *     }
         * @example {
         *       "amount": 250000,
         *       "currency": "USD",
         *       "syncStatus": "pending"
         *     }
         */
        AccountLimit: {
            /** @description The limit in the currency's smallest unit (USD cents); 1000000 is 10,000 USD, the default of every account, unless the partner agreed a lower maximum at onboarding: then the default is that maximum. */
            amount: number;
            /** @description ISO 4217 code of the limit's currency (only `USD` exists today). May be absent. */
            currency?: string;
            /** @description Whether the most recent update has been fully applied downstream. */
            syncStatus: components["schemas"]["SyncStatus"];
        };
        /**
         * AvailableFeatures
         * @description Feature flags of a user (reference 2.6).
         * @example {
         *       "providerIban": true
         *     }
         */
        AvailableFeatures: {
            /** @description Whether the user can get an IBAN from the banking provider. */
            providerIban: boolean;
        };
        /**
         * BankingDetails
         * @description Bank details of the user's account (reference 2.4). The object itself may be null on a user; when it is present, all four fields are present, each possibly null.
         * @example {
         *       "providerIban": "GB33BUKB20201555555555",
         *       "providerBic": "BUKBGB22",
         *       "providerIbanStatus": "active",
         *       "address": "1 Bank Street, London"
         *     }
         */
        BankingDetails: {
            /** @description IBAN of the account at the banking provider, or null when none is issued. */
            providerIban: string | null;
            /** @description BIC of the banking provider, or null when unknown. */
            providerBic: string | null;
            /** @description Status of the IBAN at the banking provider, or null when unknown; the list of values is not shown in the reference. */
            providerIbanStatus: string | null;
            /** @description Address of the bank, or null when unknown. */
            address: string | null;
        };
        /**
         * Card
         * @description A card of the user's account (reference 2.3); all six fields are always present.
         * @example {
         *       "id": "crd_91b0",
         *       "cardToken": "tok_4f9a1c",
         *       "lastFourDigits": "4242",
         *       "embossedName": "ADA LOVELACE",
         *       "activatedAt": "2026-03-01T10:15:00.000Z",
         *       "virtual": true
         *     }
         * @example {
         *       "id": "crd_22c7",
         *       "cardToken": "tok_77d01e",
         *       "lastFourDigits": "1881",
         *       "embossedName": null,
         *       "activatedAt": null,
         *       "virtual": false
         *     }
         */
        Card: {
            /** @description Card id. */
            id: string;
            /** @description Card token. */
            cardToken: string;
            /** @description Last four digits of the card number. */
            lastFourDigits: string;
            /** @description Name embossed on the card, or null when none is set. */
            embossedName: string | null;
            /** @description When the card was activated, or null while it is not activated. */
            activatedAt: string | null;
            /** @description Whether the card is virtual (no physical card). */
            virtual: boolean;
        };
        /**
         * CardTransactionCreatedEvent
         * @description The `card.transaction.created` webhook event: a card transaction was created. Partners handle it, but its payload is not shown in the reference, so `data` is an open object.
         * @example {
         *       "eventType": "card.transaction.created",
         *       "data": {}
         *     }
         */
        CardTransactionCreatedEvent: {
            /**
             * @description The event kind, always `card.transaction.created` for this event.
             * @constant
             */
            eventType: "card.transaction.created";
            /** @description The transaction; its fields are not shown in the reference. */
            data: components["schemas"]["UnspecifiedObject"];
        };
        /**
         * CreateCardRequest
         * @description A new card for the user's account. When the partner does not require phone verification, the phone number is set with the first card instead (reference 9), unverified.
         * @example {
         *       "virtual": true
         *     }
         * @example {
         *       "virtual": true,
         *       "embossedName": "ADA LOVELACE",
         *       "phone": "+15555550123"
         *     }
         */
        CreateCardRequest: {
            /** @description Whether the card is virtual; absent means virtual. */
            virtual?: boolean;
            /** @description The name to emboss; defaults to the user's name, upper-cased, when known. */
            embossedName?: string;
            /** @description The user's phone number. Required with the first card when the user has no phone number yet (partners that do not require phone verification). When the user has a number already, `phone` may be left out or be that same number; another number is refused with `409` `PhoneAlreadySet` (nothing is created): a card never changes the number. Change it with `requestPhoneVerification`, then `updatePhone` (a validated number) or `setPhone` (one not validated yet). */
            phone?: components["schemas"]["PhoneNumber"];
        };
        /**
         * EmailAddress
         * Format: email
         * @description An email address, as the user types it (the service compares it case-insensitively).
         * @example ada@example.com
         */
        EmailAddress: string;
        /**
         * EmailVerificationRequest
         * @description Asks the service to email a one-time password to the address the user will register with.
         * @example {
         *       "email": "ada@example.com"
         *     }
         */
        EmailVerificationRequest: {
            /** @description The address to verify; `registerUser` must then give the same address with the password. */
            email: components["schemas"]["EmailAddress"];
        };
        /**
         * ErrorBody
         * @description The body of an error response. The service is not uniform: it answers `{error}`, `{message}`, or (newer generation) `{code, message}`. Clients read whichever is there and fall back to the HTTP status.
         * @example {
         *       "error": "Unauthorized"
         *     }
         * @example {
         *       "message": "Invalid signature"
         *     }
         * @example {
         *       "code": "WAFForbidden",
         *       "message": "Request blocked by the firewall"
         *     }
         */
        ErrorBody: {
            /** @description Human-readable error text (older generation). */
            error?: string;
            /** @description Human-readable error text. */
            message?: string;
            /** @description Machine-readable error code, for example `WAFForbidden` or `DomainNotWhitelisted`. */
            code?: string;
        };
        /**
         * KycPhoneValidationChangedEvent
         * @description The `kyc.phone-validation.changed` webhook event: the user's phone validation status (`isPhoneValidated`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible.
         */
        KycPhoneValidationChangedEvent: {
            /**
             * @description The event kind, always `kyc.phone-validation.changed` for this event.
             * @constant
             */
            eventType: "kyc.phone-validation.changed";
            /** @description The user the event is about, in full, as it is after the change. */
            data: components["schemas"]["User"];
        };
        /**
         * KycSourceOfFundsChangedEvent
         * @description The `kyc.source-of-funds.changed` webhook event: the user's source-of-funds information (`isSourceOfFundsAnswered`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible.
         */
        KycSourceOfFundsChangedEvent: {
            /**
             * @description The event kind, always `kyc.source-of-funds.changed` for this event.
             * @constant
             */
            eventType: "kyc.source-of-funds.changed";
            /** @description The user the event is about, in full, as it is after the change. */
            data: components["schemas"]["User"];
        };
        /**
         * KycStatus
         * @description Identity verification (KYC) status of a user (reference 2.5). Every change emits the `kyc.status.changed` event. Transitions between the values are not shown in the reference.
         * @example approved
         * @enum {string}
         */
        KycStatus: "notStarted" | "documentsRequested" | "pending" | "processing" | "approved" | "resubmissionRequested" | "rejected" | "requiresAction";
        /**
         * KycStatusChangedEvent
         * @description The `kyc.status.changed` webhook event: the user's KYC status (`kycStatus`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible.
         */
        KycStatusChangedEvent: {
            /**
             * @description The event kind, always `kyc.status.changed` for this event.
             * @constant
             */
            eventType: "kyc.status.changed";
            /** @description The user the event is about, in full, as it is after the change. */
            data: components["schemas"]["User"];
        };
        /**
         * Nonce
         * @description A single-use nonce to embed in the next SIWE message (reference 4.1). Each sign-in attempt needs a new one. Sent as the bare `text/plain` body; clients trim whitespace and quotes.
         * @example a1b2c3d4e5f6
         */
        Nonce: string;
        /**
         * OnboardingStatus
         * @description A step of the newer generation's onboarding, read by polling `getOnboardingStatus` (reference 3.3). The reference names the first four of the eight values below; the other four name the later steps it describes (see `x-assumption`). The full list is not shown, so any other string is possible and a client must treat it as "keep polling or show a generic step". Observed order for a migrated user: `action_accept_tos`, then `waiting_kyc_setup`, then KYC and source of funds (usually skipped), then account creation, phone verification if the partner requires it, and card creation. The status follows the user's current state, so it can go back (see the `x-assumption` of the known values): a `completed` user whose KYC is no longer approved reads `action_complete_kyc` again.
         * @example action_accept_tos
         * @example waiting_kyc_setup
         */
        OnboardingStatus: "action_accept_tos" | "waiting_kyc_setup" | "action_complete_kyc" | "action_complete_sof" | "action_create_account" | "action_verify_phone" | "action_create_card" | "completed" | (string & {});
        /**
         * OnboardingStatusResponse
         * @description The answer of `getOnboardingStatus`: the step the user is at. The set of statuses is open (see `OnboardingStatus`); further fields may be added, so ignore the ones you do not know.
         * @example {
         *       "status": "action_accept_tos"
         *     }
         */
        OnboardingStatusResponse: {
            /** @description The current onboarding step. */
            status: components["schemas"]["OnboardingStatus"];
        };
        /**
         * OneTimePassword
         * @description The one-time password the service sent by email or SMS: six decimal digits, single use, valid for a limited time (`OneTimePasswordSent.expiresAt`).
         * @example 492817
         */
        OneTimePassword: string;
        /**
         * OneTimePasswordSent
         * @description The answer of a request for a one-time password (`requestEmailVerification`, `requestPhoneVerification`): where it was sent and until when it is valid. The password itself only reaches the user.
         * @example {
         *       "sentTo": "ada@example.com",
         *       "expiresAt": "2026-11-21T12:10:00.000Z"
         *     }
         */
        OneTimePasswordSent: {
            /** @description The email address or phone number the one-time password was sent to. */
            sentTo: string;
            /**
             * Format: date-time
             * @description When the one-time password stops being accepted (ISO 8601, UTC). Request a new one after that.
             */
            expiresAt: string;
        };
        /**
         * PhoneNumber
         * @description A phone number in E.164 form (`+`, country code, subscriber number, digits only).
         * @example +15555550123
         */
        PhoneNumber: string;
        /**
         * PhoneVerificationRequest
         * @description Asks the service to send a one-time password by SMS to a phone number.
         * @example {
         *       "phone": "+15555550123"
         *     }
         */
        PhoneVerificationRequest: {
            /** @description The number to verify; `setPhone` or `updatePhone` must then give the same number with the password. */
            phone: components["schemas"]["PhoneNumber"];
        };
        /**
         * RegisterUserRequest
         * @description Registers the signed-in wallet's user with an email address proved by the one-time password that `requestEmailVerification` sent to it.
         * @example {
         *       "email": "ada@example.com",
         *       "otp": "492817"
         *     }
         */
        RegisterUserRequest: {
            /** @description The address the one-time password was sent to. */
            email: components["schemas"]["EmailAddress"];
            /** @description The one-time password from the email; single use. */
            otp: components["schemas"]["OneTimePassword"];
        };
        /**
         * SetAccountLimitRequest
         * @description A new daily spending limit for the authenticated user's account (reference 4.4 and 8). Users may lower the limit of their own account.
         * @example {
         *       "amount": 250000,
         *       "currency": "USD"
         *     }
         */
        SetAccountLimitRequest: {
            /** @description The new limit in USD cents: greater than 0 and at most 1,000,000 (10,000 USD) unless a higher maximum was agreed with the partner at onboarding. */
            amount: number;
            /**
             * @description ISO 4217 currency code; only `USD` is accepted.
             * @enum {string}
             */
            currency: "USD";
        };
        /**
         * SetPhoneRequest
         * @description A phone number proved by the one-time password that `requestPhoneVerification` sent to it. Used to set the number (`setPhone`) and to change it (`updatePhone`).
         * @example {
         *       "phone": "+15555550123",
         *       "otp": "731904"
         *     }
         */
        SetPhoneRequest: {
            /** @description The number the one-time password was sent to. */
            phone: components["schemas"]["PhoneNumber"];
            /** @description The one-time password from the SMS; single use. */
            otp: components["schemas"]["OneTimePassword"];
        };
        /**
         * SignInWallet
         * @description A wallet the user signs in with (reference 2.2).
         * @example {
         *       "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
         *     }
         */
        SignInWallet: {
            /** @description Address of the sign-in wallet. */
            address: components["schemas"]["WalletAddress"];
        };
        /**
         * SiweChallengeRequest
         * @description A signed Sign-In with Ethereum message, exchanged for an access token (reference 4.2 and 5).
         * @example {
         *       "message": "localhost:3000 wants you to sign in with your Ethereum account:\n0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n\nSign in with Ethereum to the app.\n\nURI: http://localhost:3000\nVersion: 1\nChain ID: 100\nNonce: a1b2c3d4e5f6\nIssued At: 2026-11-21T12:00:00.000Z",
         *       "signature": "0x6e3f1c2b8a0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d71b",
         *       "ttlInSeconds": 86400
         *     }
         */
        SiweChallengeRequest: {
            /** @description The EIP-4361 (SIWE) message that was signed. It embeds a fresh nonce from `getNonce` and a whitelisted domain (`localhost` is always allowed; avoid `127.0.0.1`). */
            message: string;
            /** @description The wallet's signature of `message`, hex with `0x` (EIP-191 `personal_sign` from an EOA, or EIP-1271 from a smart account). */
            signature: string;
            /** @description Requested token validity in seconds, 1 hour to 24 hours. Honoured by the older generation; the newer generation issues a 15-minute access token plus a 7-day refresh token whatever is requested. */
            ttlInSeconds: number;
        };
        /**
         * SmartWallet
         * @description A smart-account wallet of the user (reference 2.3).
         * @example {
         *       "address": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
         *       "chainId": "100"
         *     }
         */
        SmartWallet: {
            /** @description Address of the smart account. */
            address: components["schemas"]["WalletAddress"];
            /** @description Id of the blockchain the smart account lives on, as a decimal string (`"100"` is Gnosis chain, the production chain). */
            chainId: string;
        };
        /**
         * SourceOfFundsAnswer
         * @description One answer of the source-of-funds questionnaire.
         * @example {
         *       "question": "What is your main source of income?",
         *       "answer": "Employment"
         *     }
         */
        SourceOfFundsAnswer: {
            /** @description The question, as the questionnaire words it. */
            question: string;
            /** @description The user's answer. */
            answer: string;
        };
        /**
         * SourceOfFundsRequest
         * @description The user's answers to the source-of-funds questionnaire (reference 3.3, `action_complete_sof`).
         * @example {
         *       "answers": [
         *         {
         *           "question": "What is your main source of income?",
         *           "answer": "Employment"
         *         }
         *       ]
         *     }
         */
        SourceOfFundsRequest: {
            /** @description One entry per question answered. */
            answers: components["schemas"]["SourceOfFundsAnswer"][];
        };
        /**
         * SyncStatus
         * @description Whether the most recently requested limit update has been fully applied downstream (reference 3.1). A successful `PUT` answers `pending`; the service moves it to `synced` once the change is applied. No other transition is stated.
         * @example pending
         * @enum {string}
         */
        SyncStatus: "pending" | "synced";
        /**
         * UnspecifiedObject
         * @description A JSON object whose fields the reference does not show. Any object is accepted; do not depend on particular fields.
         * @example {}
         */
        UnspecifiedObject: Record<string, unknown>;
        /**
         * User
         * @description A user of the platform, sent in full as the `data` of every user and KYC webhook event (reference 2.1). Every field is always present; nullable fields carry JSON `null` when no value exists.
         * @example {
         *       "id": "usr_7f3c2a",
         *       "email": "ada@example.com",
         *       "phone": "+15555550123",
         *       "firstName": "Ada",
         *       "lastName": "Lovelace",
         *       "address1": "12 Analytical Way",
         *       "address2": null,
         *       "city": "London",
         *       "postalCode": "N1 9GU",
         *       "state": null,
         *       "country": "GB",
         *       "nationalityCountry": "GB",
         *       "signInWallets": [
         *         {
         *           "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
         *         }
         *       ],
         *       "smartWallets": [
         *         {
         *           "address": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
         *           "chainId": "100"
         *         }
         *       ],
         *       "kycStatus": "approved",
         *       "availableFeatures": {
         *         "providerIban": true
         *       },
         *       "cards": [
         *         {
         *           "id": "crd_91b0",
         *           "cardToken": "tok_4f9a1c",
         *           "lastFourDigits": "4242",
         *           "embossedName": "ADA LOVELACE",
         *           "activatedAt": "2026-03-01T10:15:00.000Z",
         *           "virtual": true
         *         }
         *       ],
         *       "bankingDetails": {
         *         "providerIban": "GB33BUKB20201555555555",
         *         "providerBic": "BUKBGB22",
         *         "providerIbanStatus": "active",
         *         "address": "1 Bank Street, London"
         *       },
         *       "isSourceOfFundsAnswered": true,
         *       "isPhoneValidated": true
         *     }
         */
        User: {
            /** @description Unique user identifier. */
            id: string;
            /** @description User email address, or null when none is known. */
            email: string | null;
            /** @description User phone number, or null when none is known. */
            phone: string | null;
            /** @description First name, or null when none is known. */
            firstName: string | null;
            /** @description Last name, or null when none is known. */
            lastName: string | null;
            /** @description Primary address line, or null when none is known. */
            address1: string | null;
            /** @description Secondary address line, or null when none is known. */
            address2: string | null;
            /** @description City, or null when none is known. */
            city: string | null;
            /** @description Postal or ZIP code, or null when none is known. */
            postalCode: string | null;
            /** @description State or province, or null when none is known. */
            state: string | null;
            /** @description Country, or null when none is known. */
            country: string | null;
            /** @description Nationality country, or null when none is known. */
            nationalityCountry: string | null;
            /** @description Wallets the user signs in with (SIWE). */
            signInWallets: components["schemas"]["SignInWallet"][];
            /** @description The user's smart-account wallets. */
            smartWallets: components["schemas"]["SmartWallet"][];
            /** @description Identity verification (KYC) status; every change emits `kyc.status.changed`. */
            kycStatus: components["schemas"]["KycStatus"];
            /** @description Features available to the user. */
            availableFeatures: components["schemas"]["AvailableFeatures"];
            /** @description The user's cards. */
            cards: components["schemas"]["Card"][];
            /** @description Bank details of the account, or null when the user has none. */
            bankingDetails: components["schemas"]["BankingDetails"] | null;
            /** @description Whether the source-of-funds question was answered. */
            isSourceOfFundsAnswered: boolean;
            /** @description Whether the phone number is validated. */
            isPhoneValidated: boolean;
        };
        /**
         * UserCreatedEvent
         * @description The `user.created` webhook event: a new user account was created. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible.
         */
        UserCreatedEvent: {
            /**
             * @description The event kind, always `user.created` for this event.
             * @constant
             */
            eventType: "user.created";
            /** @description The user the event is about, in full, as it is after the change. */
            data: components["schemas"]["User"];
        };
        /**
         * WalletAddress
         * @description An EVM wallet address, `0x` followed by 40 hexadecimal digits (checksummed or not).
         * @example 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed
         */
        WalletAddress: string;
        /**
         * WebhookPublicKey
         * @description The answer of the webhook key service (reference 2.8 and 4.5).
         * @example {
         *       "success": true,
         *       "publicKey": "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAeBZbNKJ2eiK+TY34oxEAAfjbtVozGhk8MoPKDp4aqQ=\n-----END PUBLIC KEY-----\n"
         *     }
         */
        WebhookPublicKey: {
            /** @description Must be true for the key to be usable; a receiver treats false as "no key". */
            success: boolean;
            /** @description The Ed25519 public key that verifies `X-Webhook-Signature`, as a PEM-encoded SPKI key. Clients also accept the raw 32-byte key in base64 or hex. */
            publicKey: string;
        };
    };
    responses: {
        /** @description The body is not valid JSON. */
        BodyNotJson: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The request carries a body whose `Content-Type` is not `application/json` (for example `text/plain`, `application/x-www-form-urlencoded`, or no `Content-Type` at all). Send the JSON body with `Content-Type: application/json`; parameters such as `; charset=utf-8` are fine. The body is not read further, and nothing changes. */
        UnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The body is JSON but not what the operation takes (a missing or malformed field; `code` `ValidationError`), or a one-time password is wrong, expired or was never requested (`code` `InvalidOneTimePassword`). The message names the field and what to send instead. */
        ValidationFailed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The operation does not fit the user's onboarding state: `code` `OnboardingStepNotReached` (an earlier step is still open; read `getOnboardingStatus`), `AlreadyDone` (the step was completed before), `PhoneNotValidated` (changing a number needs a validated one), or `PhoneAlreadySet` (`createCard` with a `phone` other than the number the user has: a card never changes it). Registration's own conflicts are `RegistrationConflict`. */
        OnboardingConflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The wallet or the email is taken: `code` `AlreadyRegistered` (the signed-in wallet already has a user, e.g. a second, concurrent registration: read it with `getUser` and go on with `getOnboardingStatus`; the token held keeps working, and its next renewal carries the `userId`), or `EmailTaken` (another user registered the address; a user has one sign-in wallet, fixed, reference 5 rule 8: sign in with that user's wallet, or register another email). An older-generation user's email is not kept for its migration: once another wallet has registered it, the user's own wallet gets `EmailTaken` for it, and that user can no longer be migrated. */
        RegistrationConflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The user has no account yet, so there is no daily limit to read or set (the limit is "configured on the authenticated user's account", reference 4.3): a registered user of the newer generation whose onboarding has not created the account (`createAccount`; the User's `smartWallets` is still empty). `code` is `OnboardingStepNotReached`; the message names the step the user is at and what to do. Finish onboarding up to `createAccount` (read `getOnboardingStatus`), then call again. A refused `PUT` changes nothing and sets no limit for later. */
        AccountNotCreated: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The access token is missing, invalid or expired (drop the cached token and sign in again: new nonce, new signature), or the signer has not registered yet (token claim `hasSignedUp: false`). On the newer generation: register with `registerUser` and follow `getOnboardingStatus`, then sign in again to get a token with `userId`; every authenticated route answers this to a not-yet-registered signer (`code` `UserNotRegistered`), except `requestEmailVerification` and `registerUser`. The older generation has no registration operation: sign in with a wallet that owns a registered account. */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getNonce: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The nonce, as the bare response body. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": components["schemas"]["Nonce"];
                };
            };
        };
    };
    verifySiweSignature: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SiweChallengeRequest"];
            };
        };
        responses: {
            /** @description The signature is valid; here is the access token. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccessToken"];
                };
            };
            /** @description The sign-in attempt is not valid, for one of these reasons: the signature does not match the message and its address (another wallet signed, the message was changed after signing, or a smart-account signature that the EIP-1271 check does not accept); the nonce is unknown (never issued by `getNonce`), already used by an earlier attempt, or expired; or the SIWE message is outside its validity window (its `expirationTime` has passed, or its `notBefore` is still ahead). Get a new nonce and sign a new message. A valid signature from a wallet that has not registered yet is NOT refused here: it gets a token whose claims say `hasSignedUp: false` and carry no `userId`, so that it can call `requestEmailVerification` and `registerUser`. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The sign-in is refused because of the SIWE domain: `WAFForbidden` when the message uses `127.0.0.1` (use `localhost` instead), `DomainNotWhitelisted` when the domain is not whitelisted in the partner dashboard. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /** @description The body is invalid (for example a missing field or `ttlInSeconds` outside 3600..86400). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getAccountLimit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The current limit. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountLimit"];
                };
            };
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["AccountNotCreated"];
        };
    };
    setAccountLimit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SetAccountLimitRequest"];
            };
        };
        responses: {
            /** @description The new limit, accepted and not yet applied downstream. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountLimit"] & {
                        /**
                         * @description Always `pending` right after an update.
                         * @constant
                         */
                        syncStatus?: "pending";
                    };
                };
            };
            /** @description The body is not valid JSON. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["AccountNotCreated"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description `amount` is not an integer in 1..1,000,000, or `currency` is not `USD`. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getWebhookPublicKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookPublicKey"];
                };
            };
        };
    };
    getOnboardingStatus: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The current onboarding step. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OnboardingStatusResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
        };
    };
    requestEmailVerification: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmailVerificationRequest"];
            };
        };
        responses: {
            /** @description The one-time password was sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OneTimePasswordSent"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["RegistrationConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    getUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            401: components["responses"]["Unauthorized"];
        };
    };
    registerUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RegisterUserRequest"];
            };
        };
        responses: {
            /** @description The user was registered; here it is. `user.created` is emitted with it as `data`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["RegistrationConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    acceptTerms: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AcceptTermsRequest"];
            };
        };
        responses: {
            /** @description The user as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    submitSourceOfFunds: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SourceOfFundsRequest"];
            };
        };
        responses: {
            /** @description The user as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    requestPhoneVerification: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PhoneVerificationRequest"];
            };
        };
        responses: {
            /** @description The one-time password was sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OneTimePasswordSent"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    setPhone: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SetPhoneRequest"];
            };
        };
        responses: {
            /** @description The user as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    updatePhone: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SetPhoneRequest"];
            };
        };
        responses: {
            /** @description The user with the new number. No event is emitted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    createAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user with its new account's smart wallet in `smartWallets`. No event is emitted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
        };
    };
    createCard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateCardRequest"];
            };
        };
        responses: {
            /** @description The user with the new card (and, for the first card without phone verification, its `phone`). No event is emitted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["OnboardingConflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    requestLegacyPhoneVerification: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PhoneVerificationRequest"];
            };
        };
        responses: {
            /** @description The one-time password was sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OneTimePasswordSent"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    checkLegacyPhoneVerification: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SetPhoneRequest"];
            };
        };
        responses: {
            /** @description The user with its validated phone. `kyc.phone-validation.changed` is emitted only when the phone was not validated before. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BodyNotJson"];
            401: components["responses"]["Unauthorized"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["ValidationFailed"];
        };
    };
    receiveUserCreated: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Unix time of sending, in seconds, as decimal digits.
                 * @example 1795776000
                 */
                "X-Webhook-Timestamp": string;
                /**
                 * @description Base64 of the 64-byte Ed25519 signature of `${timestamp}.${rawBody}`. The example is the real signature of the `user.created` example body (compact JSON), made with the key of the `getWebhookPublicKey` example.
                 * @example +EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg==
                 */
                "X-Webhook-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UserCreatedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx within 30 seconds acknowledges the delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The signature or a header is missing or invalid; the event is rejected. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveKycStatusChanged: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Unix time of sending, in seconds, as decimal digits.
                 * @example 1795776000
                 */
                "X-Webhook-Timestamp": string;
                /**
                 * @description Base64 of the 64-byte Ed25519 signature of `${timestamp}.${rawBody}`. The example is the real signature of the `user.created` example body (compact JSON), made with the key of the `getWebhookPublicKey` example.
                 * @example +EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg==
                 */
                "X-Webhook-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KycStatusChangedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx within 30 seconds acknowledges the delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The signature or a header is missing or invalid; the event is rejected. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveKycPhoneValidationChanged: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Unix time of sending, in seconds, as decimal digits.
                 * @example 1795776000
                 */
                "X-Webhook-Timestamp": string;
                /**
                 * @description Base64 of the 64-byte Ed25519 signature of `${timestamp}.${rawBody}`. The example is the real signature of the `user.created` example body (compact JSON), made with the key of the `getWebhookPublicKey` example.
                 * @example +EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg==
                 */
                "X-Webhook-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KycPhoneValidationChangedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx within 30 seconds acknowledges the delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The signature or a header is missing or invalid; the event is rejected. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveKycSourceOfFundsChanged: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Unix time of sending, in seconds, as decimal digits.
                 * @example 1795776000
                 */
                "X-Webhook-Timestamp": string;
                /**
                 * @description Base64 of the 64-byte Ed25519 signature of `${timestamp}.${rawBody}`. The example is the real signature of the `user.created` example body (compact JSON), made with the key of the `getWebhookPublicKey` example.
                 * @example +EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg==
                 */
                "X-Webhook-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KycSourceOfFundsChangedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx within 30 seconds acknowledges the delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The signature or a header is missing or invalid; the event is rejected. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveCardTransactionCreated: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Unix time of sending, in seconds, as decimal digits.
                 * @example 1795776000
                 */
                "X-Webhook-Timestamp": string;
                /**
                 * @description Base64 of the 64-byte Ed25519 signature of `${timestamp}.${rawBody}`. The example is the real signature of the `user.created` example body (compact JSON), made with the key of the `getWebhookPublicKey` example.
                 * @example +EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg==
                 */
                "X-Webhook-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CardTransactionCreatedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx within 30 seconds acknowledges the delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The signature or a header is missing or invalid; the event is rejected. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
