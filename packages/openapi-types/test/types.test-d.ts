// The generated types checked against reference section 2 and the operations of the
// naming contract. Each expected shape is written out by hand from the reference (the
// section 2 schemas once for both generated packages, in @capi/codegen-kit/reference-shapes).
import createClient from 'openapi-fetch';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  AccessToken, AccessTokenClaims, Nonce, OnboardingStatus, OnboardingStatusResponse, UnspecifiedObject, WalletAddress,
  AcceptTermsRequest, CreateCardRequest, EmailAddress, EmailVerificationRequest, OneTimePassword, OneTimePasswordSent,
  PhoneNumber, PhoneVerificationRequest, RegisterUserRequest, SetPhoneRequest, SourceOfFundsAnswer, SourceOfFundsRequest,
  AccountLimit, AvailableFeatures, BankingDetails, Card, CardTransactionCreatedEvent, ErrorBody,
  KycPhoneValidationChangedEvent, KycSourceOfFundsChangedEvent, KycStatus, KycStatusChangedEvent,
  SetAccountLimitRequest, SignInWallet, SiweChallengeRequest, SmartWallet, SyncStatus, User, UserCreatedEvent,
  WebhookPublicKey, WidenOpenEnums, components, operations, paths,
} from '../src/index.js';
import type { ReferenceBankingDetails, ReferenceCard, ReferenceKycStatus, ReferenceUser } from '@capi/codegen-kit/reference-shapes';

describe('every component schema has a named alias', () => {
  it('aliases are the component schemas themselves', () => {
    expectTypeOf<User>().toEqualTypeOf<components['schemas']['User']>();
    expectTypeOf<AccountLimit>().toEqualTypeOf<components['schemas']['AccountLimit']>();
    expectTypeOf<ErrorBody>().toEqualTypeOf<components['schemas']['ErrorBody']>();
  });
});

describe('User (2.1): every field present, nullable fields T | null', () => {
  it('is exactly the reference shape, nothing optional', () => {
    expectTypeOf<User>().toEqualTypeOf<ReferenceUser>();
  });
  it('has email as string | null and bankingDetails as a nullable object', () => {
    expectTypeOf<User['email']>().toEqualTypeOf<string | null>();
    expectTypeOf<User['bankingDetails']>().toEqualTypeOf<BankingDetails | null>();
  });
});

describe('SignInWallet (2.2), SmartWallet and Card (2.3)', () => {
  it('SignInWallet and SmartWallet have their required fields', () => {
    expectTypeOf<SignInWallet>().toEqualTypeOf<{ address: string }>();
    expectTypeOf<SmartWallet>().toEqualTypeOf<{ address: string; chainId: string }>();
  });
  it('Card has its six required fields, embossedName and activatedAt nullable', () => {
    expectTypeOf<Card>().toEqualTypeOf<ReferenceCard>();
  });
});

describe('BankingDetails (2.4), kycStatus (2.5), availableFeatures (2.6)', () => {
  it('BankingDetails has four required nullable fields', () => {
    expectTypeOf<BankingDetails>().toEqualTypeOf<ReferenceBankingDetails>();
  });
  it('KycStatus is exactly the eight values', () => {
    expectTypeOf<KycStatus>().toEqualTypeOf<ReferenceKycStatus>();
  });
  it('AvailableFeatures has providerIban', () => {
    expectTypeOf<AvailableFeatures>().toEqualTypeOf<{ providerIban: boolean }>();
  });
});

describe('account daily spending limit (2.7)', () => {
  it('AccountLimit: amount and syncStatus required, currency may be absent', () => {
    expectTypeOf<AccountLimit>().toEqualTypeOf<{ amount: number; currency?: string; syncStatus: 'pending' | 'synced' }>();
  });
  it('SyncStatus is pending | synced', () => {
    expectTypeOf<SyncStatus>().toEqualTypeOf<'pending' | 'synced'>();
  });
  it('SetAccountLimitRequest: amount and currency USD, both required', () => {
    expectTypeOf<SetAccountLimitRequest>().toEqualTypeOf<{ amount: number; currency: 'USD' }>();
  });
});

describe('webhook public key (2.8), access token (2.9), error body', () => {
  it('WebhookPublicKey has success and publicKey', () => {
    expectTypeOf<WebhookPublicKey>().toEqualTypeOf<{ success: boolean; publicKey: string }>();
  });
  it('AccessToken has token and an optional refreshToken', () => {
    expectTypeOf<AccessToken>().toEqualTypeOf<{ token: string; refreshToken?: string }>();
  });
  it('SiweChallengeRequest has message, signature and ttlInSeconds', () => {
    expectTypeOf<SiweChallengeRequest>().toEqualTypeOf<{ message: string; signature: string; ttlInSeconds: number }>();
  });
  it('ErrorBody has optional error, message and code', () => {
    expectTypeOf<ErrorBody>().toEqualTypeOf<{ error?: string; message?: string; code?: string }>();
  });
});

describe('sign-in details the reference leaves open (service facts), marked x-assumption in the spec', () => {
  it('Nonce and WalletAddress are strings', () => {
    expectTypeOf<Nonce>().toEqualTypeOf<string>();
    expectTypeOf<WalletAddress>().toEqualTypeOf<string>();
  });
  it('AccessTokenClaims: iat, exp, signerAddress, chainId, hasSignedUp required; userId once signed up', () => {
    expectTypeOf<AccessTokenClaims>().toEqualTypeOf<{
      iat: number; exp: number; signerAddress: string; chainId: string; hasSignedUp: boolean; userId?: string;
    }>();
  });
});

describe('onboarding status (3.3): the four known values, any other string still accepted', () => {
  type KnownStep = 'action_accept_tos' | 'waiting_kyc_setup' | 'action_complete_kyc' | 'action_complete_sof'
    | 'action_create_account' | 'action_verify_phone' | 'action_create_card' | 'completed';
  it('keeps the four known values for completion and narrowing', () => {
    expectTypeOf<KnownStep>().toExtend<OnboardingStatus>();
    expectTypeOf<Extract<OnboardingStatus, 'action_accept_tos'>>().toEqualTypeOf<'action_accept_tos'>();
    expectTypeOf<Exclude<OnboardingStatus, KnownStep>>().toEqualTypeOf<string & {}>();
  });
  it('accepts a status the reference does not list', () => {
    expectTypeOf<OnboardingStatus>().toExtend<string>();
    expectTypeOf<'action_create_card'>().toExtend<OnboardingStatus>();
  });
  it('OnboardingStatusResponse has a required status', () => {
    expectTypeOf<OnboardingStatusResponse>().toEqualTypeOf<{ status: OnboardingStatus }>();
  });
  it('through createClient<paths>() (openapi-fetch), the status is a usable string: its mapped types turned string & {} into an object', () => {
    const api = createClient<paths>({ baseUrl: 'https://api.example.com' });
    const read = async () => {
      const { data } = await api.GET('/user/onboarding');
      const status: string | undefined = data?.status;
      return data ? data.status.toUpperCase() : status;
    };
    expectTypeOf(read).returns.resolves.toEqualTypeOf<string | undefined>();
  });
  it('WidenOpenEnums widens only the open enums, deeply, keeping closed ones and optionality', () => {
    expectTypeOf<WidenOpenEnums<{ a: 'x' | (string & {}); b?: { c: SyncStatus }; d: number }>>().toEqualTypeOf<{ a: string; b?: { c: SyncStatus }; d: number }>();
  });
  it('UnspecifiedObject is an open object', () => {
    expectTypeOf<UnspecifiedObject>().toEqualTypeOf<Record<string, unknown>>();
  });
});

describe('webhook events (6.1) in the OpenAPI components', () => {
  it('are { eventType, data } with the User, card.transaction.created with an open object', () => {
    expectTypeOf<UserCreatedEvent>().toEqualTypeOf<{ eventType: 'user.created'; data: User }>();
    expectTypeOf<KycStatusChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.status.changed'; data: User }>();
    expectTypeOf<KycPhoneValidationChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.phone-validation.changed'; data: User }>();
    expectTypeOf<KycSourceOfFundsChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.source-of-funds.changed'; data: User }>();
    expectTypeOf<CardTransactionCreatedEvent>().toEqualTypeOf<{ eventType: 'card.transaction.created'; data: Record<string, unknown> }>();
  });
});

describe('onboarding bodies (4.7 and the steps of 3.3; not shown: chosen so)', () => {
  it('one-time passwords: requested for an email or a phone, answered with where and until when', () => {
    expectTypeOf<EmailAddress>().toEqualTypeOf<string>();
    expectTypeOf<PhoneNumber>().toEqualTypeOf<string>();
    expectTypeOf<OneTimePassword>().toEqualTypeOf<string>();
    expectTypeOf<EmailVerificationRequest>().toEqualTypeOf<{ email: string }>();
    expectTypeOf<PhoneVerificationRequest>().toEqualTypeOf<{ phone: string }>();
    expectTypeOf<OneTimePasswordSent>().toEqualTypeOf<{ sentTo: string; expiresAt: string }>();
  });
  it('registration and phone carry the value with its one-time password', () => {
    expectTypeOf<RegisterUserRequest>().toEqualTypeOf<{ email: string; otp: string }>();
    expectTypeOf<SetPhoneRequest>().toEqualTypeOf<{ phone: string; otp: string }>();
  });
  it('terms, source of funds and card creation', () => {
    expectTypeOf<AcceptTermsRequest>().toEqualTypeOf<{ accepted: true }>();
    expectTypeOf<SourceOfFundsAnswer>().toEqualTypeOf<{ question: string; answer: string }>();
    expectTypeOf<SourceOfFundsRequest>().toEqualTypeOf<{ answers: SourceOfFundsAnswer[] }>();
    expectTypeOf<CreateCardRequest>().toEqualTypeOf<{ virtual?: boolean; embossedName?: string; phone?: string }>();
  });
});

describe('operations carry the contract operationIds', () => {
  it('has every operation of the naming contract', () => {
    expectTypeOf<
      | 'getNonce' | 'verifySiweSignature' | 'getAccountLimit' | 'setAccountLimit' | 'getWebhookPublicKey'
      | 'getOnboardingStatus' | 'requestEmailVerification' | 'getUser' | 'registerUser' | 'acceptTerms'
      | 'submitSourceOfFunds' | 'requestPhoneVerification' | 'setPhone' | 'updatePhone' | 'createAccount' | 'createCard'
      | 'requestLegacyPhoneVerification' | 'checkLegacyPhoneVerification'
    >().toExtend<keyof operations>();
  });
  it('maps each path and method to its operation', () => {
    expectTypeOf<paths['/api/v1/auth/nonce']['get']>().toEqualTypeOf<operations['getNonce']>();
    expectTypeOf<paths['/api/v1/auth/challenge']['post']>().toEqualTypeOf<operations['verifySiweSignature']>();
    expectTypeOf<paths['/user-api/user/account/limit']['get']>().toEqualTypeOf<operations['getAccountLimit']>();
    expectTypeOf<paths['/user-api/user/account/limit']['put']>().toEqualTypeOf<operations['setAccountLimit']>();
    expectTypeOf<paths['/api/v1/public-key']['get']>().toEqualTypeOf<operations['getWebhookPublicKey']>();
  });
});

describe('openapi-fetch infers bodies and answers from paths (createClient<paths>())', () => {
  const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });

  it('types the limit read as AccountLimit and its error as ErrorBody', () => {
    const readLimit = () => api.GET('/user-api/user/account/limit');
    type Result = Awaited<ReturnType<typeof readLimit>>;
    expectTypeOf<NonNullable<Result['data']>>().toEqualTypeOf<AccountLimit>();
    expectTypeOf<NonNullable<Result['error']>>().toEqualTypeOf<ErrorBody>();
  });

  it('requires the SetAccountLimitRequest body on the limit update, answered with a pending AccountLimit', () => {
    const setLimit = (body: SetAccountLimitRequest) => api.PUT('/user-api/user/account/limit', { body });
    type Updated = NonNullable<Awaited<ReturnType<typeof setLimit>>['data']>;
    expectTypeOf<Updated>().toExtend<AccountLimit>();
    // 3.1: the answer to an update is always pending.
    expectTypeOf<Updated['syncStatus']>().toEqualTypeOf<'pending'>();
    // @ts-expect-error currency must be "USD"
    void (() => api.PUT('/user-api/user/account/limit', { body: { amount: 100, currency: 'EUR' } }));
    // @ts-expect-error amount is required
    void (() => api.PUT('/user-api/user/account/limit', { body: { currency: 'USD' } }));
  });

  it('types the nonce as a string and the challenge answer as AccessToken', () => {
    const getNonce = () => api.GET('/api/v1/auth/nonce', { parseAs: 'text' });
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof getNonce>>['data']>>().toEqualTypeOf<string>();
    const verify = (body: SiweChallengeRequest) => api.POST('/api/v1/auth/challenge', { body });
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof verify>>['data']>>().toEqualTypeOf<AccessToken>();
  });

  it('types every onboarding answer: the User, the one-time password receipt', () => {
    const register = (body: RegisterUserRequest) => api.POST('/user', { body });
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof register>>['data']>>().toEqualTypeOf<User>();
    const account = () => api.POST('/account');
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof account>>['data']>>().toEqualTypeOf<User>();
    const sendOtp = (body: EmailVerificationRequest) => api.POST('/email/verification', { body });
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof sendOtp>>['data']>>().toEqualTypeOf<OneTimePasswordSent>();
    // @ts-expect-error registration needs the one-time password
    void (() => api.POST('/user', { body: { email: 'ada@example.com' } }));
  });

  it('rejects a path the spec does not have', () => {
    // @ts-expect-error not a path of the spec
    void (() => api.GET('/user-api/user/account/limits'));
  });
});
