// This file is generated. Do not edit it by hand.
// Source: specs/asyncapi.yaml (info.version 1.0.0), read from specs/dist/asyncapi.json.
// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of @capi/event-types; pnpm build runs it too).

/** The `user.created` webhook event: a new user account was created. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export interface UserCreatedEvent {
  /** The event kind, always `user.created` for this event. */
  eventType: "user.created";
  data: User;
}

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
export interface User {
  /** Unique user identifier. */
  id: string;
  /** User email address, or null when none is known. */
  email: string | null;
  /** User phone number, or null when none is known. */
  phone: string | null;
  /** First name, or null when none is known. */
  firstName: string | null;
  /** Last name, or null when none is known. */
  lastName: string | null;
  /** Primary address line, or null when none is known. */
  address1: string | null;
  /** Secondary address line, or null when none is known. */
  address2: string | null;
  /** City, or null when none is known. */
  city: string | null;
  /** Postal or ZIP code, or null when none is known. */
  postalCode: string | null;
  /** State or province, or null when none is known. */
  state: string | null;
  /** Country, or null when none is known. */
  country: string | null;
  /** Nationality country, or null when none is known. */
  nationalityCountry: string | null;
  /** Wallets the user signs in with (SIWE). */
  signInWallets: SignInWallet[];
  /** The user's smart-account wallets. */
  smartWallets: SmartWallet[];
  kycStatus: KycStatus;
  availableFeatures: AvailableFeatures;
  /** The user's cards. */
  cards: Card[];
  /** Bank details of the account, or null when the user has none. */
  bankingDetails: BankingDetails | null;
  /** Whether the source-of-funds question was answered. */
  isSourceOfFundsAnswered: boolean;
  /** Whether the phone number is validated. */
  isPhoneValidated: boolean;
}

/**
 * A wallet the user signs in with (reference 2.2).
 *
 * @example
 * {
 *   "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 * }
 */
export interface SignInWallet {
  /** An EVM wallet address, `0x` followed by 40 hexadecimal digits (checksummed or not). */
  address: string;
}

/**
 * A smart-account wallet of the user (reference 2.3).
 *
 * @example
 * {
 *   "address": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
 *   "chainId": "100"
 * }
 */
export interface SmartWallet {
  /** An EVM wallet address, `0x` followed by 40 hexadecimal digits (checksummed or not). */
  address: string;
  /** Id of the blockchain the smart account lives on, as a decimal string (`"100"` is Gnosis chain, the production chain). */
  chainId: string;
}

/**
 * Identity verification (KYC) status of a user (reference 2.5). Every change emits the `kyc.status.changed` event. Transitions between the values are not shown in the reference.
 *
 * @example
 * "approved"
 */
export type KycStatus = "notStarted" | "documentsRequested" | "pending" | "processing" | "approved" | "resubmissionRequested" | "rejected" | "requiresAction";

/**
 * Feature flags of a user (reference 2.6).
 *
 * @example
 * {
 *   "providerIban": true
 * }
 */
export interface AvailableFeatures {
  /** Whether the user can get an IBAN from the banking provider. */
  providerIban: boolean;
}

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
export interface Card {
  /** Card id. */
  id: string;
  /** Card token. */
  cardToken: string;
  /** Last four digits of the card number. */
  lastFourDigits: string;
  /** Name embossed on the card, or null when none is set. */
  embossedName: string | null;
  /** When the card was activated, or null while it is not activated. */
  activatedAt: string | null;
  /** Whether the card is virtual (no physical card). */
  virtual: boolean;
}

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
export interface BankingDetails {
  /** IBAN of the account at the banking provider, or null when none is issued. */
  providerIban: string | null;
  /** BIC of the banking provider, or null when unknown. */
  providerBic: string | null;
  /** Status of the IBAN at the banking provider, or null when unknown; the list of values is not shown in the reference. */
  providerIbanStatus: string | null;
  /** Address of the bank, or null when unknown. */
  address: string | null;
}

/** The `kyc.status.changed` webhook event: the user's KYC status (`kycStatus`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export interface KycStatusChangedEvent {
  /** The event kind, always `kyc.status.changed` for this event. */
  eventType: "kyc.status.changed";
  data: User;
}

/** The `kyc.phone-validation.changed` webhook event: the user's phone validation status (`isPhoneValidated`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export interface KycPhoneValidationChangedEvent {
  /** The event kind, always `kyc.phone-validation.changed` for this event. */
  eventType: "kyc.phone-validation.changed";
  data: User;
}

/** The `kyc.source-of-funds.changed` webhook event: the user's source-of-funds information (`isSourceOfFundsAnswered`) changed. The body is exactly `{eventType, data}` with the user in full, so a receiver normally needs no further call. There is no event id in the body: process idempotently, since duplicates are possible. */
export interface KycSourceOfFundsChangedEvent {
  /** The event kind, always `kyc.source-of-funds.changed` for this event. */
  eventType: "kyc.source-of-funds.changed";
  data: User;
}

/**
 * The `card.transaction.created` webhook event: a card transaction was created. Partners handle it, but its payload is not shown in the reference, so `data` is an open object.
 *
 * @example
 * {
 *   "eventType": "card.transaction.created",
 *   "data": {}
 * }
 */
export interface CardTransactionCreatedEvent {
  /** The event kind, always `card.transaction.created` for this event. */
  eventType: "card.transaction.created";
  /** A JSON object whose fields the reference does not show. Any object is accepted; do not depend on particular fields. */
  data: Record<string, unknown>;
}

/** A JSON object whose fields the reference does not show. Any object is accepted; do not depend on particular fields. */
export type UnspecifiedObject = Record<string, unknown>;

/**
 * An EVM wallet address, `0x` followed by 40 hexadecimal digits (checksummed or not).
 *
 * @example
 * "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 */
export type WalletAddress = string;

/**
 * The headers that authenticate a webhook delivery (reference 6.2). The signature is the Ed25519 signature of the UTF-8 bytes of `${X-Webhook-Timestamp}.${rawBody}`, verified with the key from `getWebhookPublicKey` on the raw body before it is parsed. A missing header or a failed verification rejects the delivery (answer 401).
 *
 * @example
 * {
 *   "X-Webhook-Timestamp": "1795776000",
 *   "X-Webhook-Signature": "+EcTImotG9UTT5puMMZV/ABxaQVuO7wvY2s07Fn73B4Fv5C78qs1NPw9qtHoBiwULmL4bGNWQwLz2a12sDtDCg=="
 * }
 */
export interface WebhookHeaders {
  /** Unix time of sending, in seconds, as decimal digits. Receivers reject a timestamp more than 300 seconds away from their clock, in either direction. */
  "X-Webhook-Timestamp": string;
  /** Base64 (standard alphabet, padded) of the 64-byte Ed25519 signature. */
  "X-Webhook-Signature": string;
}
