// The generated types checked against reference section 2 (fields, nullability, required,
// enum members) and section 6 (events, headers). Each expected shape is written out by
// hand from the reference (the section 2 schemas once for both generated packages, in
// @capi/codegen-kit/reference-shapes), so a spec or generator change that drifts fails here.
import { describe, expectTypeOf, it } from 'vitest';
import {
  WEBHOOK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER,
  type AvailableFeatures, type BankingDetails, type Card, type CardTransactionCreatedEvent,
  type KycPhoneValidationChangedEvent, type KycSourceOfFundsChangedEvent, type KycStatus,
  type KycStatusChangedEvent, type SignInWallet, type SmartWallet, type User, type UserCreatedEvent,
  type UnspecifiedObject, type WalletAddress,
  type WebhookEvent, type WebhookEventMap, type WebhookEventType, type WebhookHeaders,
} from '../src/index.js';
import type { ReferenceBankingDetails, ReferenceCard, ReferenceKycStatus, ReferenceUser } from '@capi/codegen-kit/reference-shapes';

describe('User (2.1): every field present, nullable fields T | null', () => {
  it('is exactly the reference shape, nothing optional', () => {
    expectTypeOf<User>().toEqualTypeOf<ReferenceUser>();
  });
  it('carries null where a value may be missing, never undefined', () => {
    expectTypeOf<User['email']>().toEqualTypeOf<string | null>();
    expectTypeOf<User['nationalityCountry']>().toEqualTypeOf<string | null>();
    expectTypeOf<User['id']>().toEqualTypeOf<string>();
    expectTypeOf<User['isPhoneValidated']>().toEqualTypeOf<boolean>();
  });
  it('has bankingDetails as a nullable object', () => {
    expectTypeOf<User['bankingDetails']>().toEqualTypeOf<BankingDetails | null>();
  });
  it('refers to the named types', () => {
    expectTypeOf<User['signInWallets']>().toEqualTypeOf<SignInWallet[]>();
    expectTypeOf<User['smartWallets']>().toEqualTypeOf<SmartWallet[]>();
    expectTypeOf<User['cards']>().toEqualTypeOf<Card[]>();
    expectTypeOf<User['kycStatus']>().toEqualTypeOf<KycStatus>();
    expectTypeOf<User['availableFeatures']>().toEqualTypeOf<AvailableFeatures>();
  });
});

describe('SignInWallet (2.2) and SmartWallet (2.3): required addresses and chain id', () => {
  it('SignInWallet is { address: string }', () => {
    expectTypeOf<SignInWallet>().toEqualTypeOf<{ address: string }>();
  });
  it('SmartWallet is { address: string; chainId: string }', () => {
    expectTypeOf<SmartWallet>().toEqualTypeOf<{ address: string; chainId: string }>();
  });
});

describe('Card (2.3): all six fields required, embossedName and activatedAt nullable', () => {
  it('is exactly the six reference fields', () => {
    expectTypeOf<Card>().toEqualTypeOf<ReferenceCard>();
    expectTypeOf<keyof Card>().toEqualTypeOf<'id' | 'cardToken' | 'lastFourDigits' | 'embossedName' | 'activatedAt' | 'virtual'>();
  });
});

describe('BankingDetails (2.4): four required fields, each nullable', () => {
  it('is exactly the reference shape', () => {
    expectTypeOf<BankingDetails>().toEqualTypeOf<ReferenceBankingDetails>();
  });
});

describe('kycStatus (2.5): exactly the eight values', () => {
  it('is the union of the eight values, no more, no less', () => {
    expectTypeOf<KycStatus>().toEqualTypeOf<ReferenceKycStatus>();
  });
  it('rejects a value outside 2.5', () => {
    expectTypeOf<'unknown'>().not.toExtend<KycStatus>();
  });
});

describe('availableFeatures (2.6): providerIban required', () => {
  it('is { providerIban: boolean }', () => {
    expectTypeOf<AvailableFeatures>().toEqualTypeOf<{ providerIban: boolean }>();
  });
});

describe('shared building blocks of the schemas', () => {
  it('WalletAddress is a string (0x + 40 hex digits, checked by the validator)', () => {
    expectTypeOf<WalletAddress>().toEqualTypeOf<string>();
  });
  it('UnspecifiedObject, for payloads the reference does not show, is an open object', () => {
    expectTypeOf<UnspecifiedObject>().toEqualTypeOf<Record<string, unknown>>();
  });
});

describe('every event body is { eventType, data } (6.1), data the User in full', () => {
  it('types each user and KYC event with its constant eventType and the User', () => {
    expectTypeOf<UserCreatedEvent>().toEqualTypeOf<{ eventType: 'user.created'; data: User }>();
    expectTypeOf<KycStatusChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.status.changed'; data: User }>();
    expectTypeOf<KycPhoneValidationChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.phone-validation.changed'; data: User }>();
    expectTypeOf<KycSourceOfFundsChangedEvent>().toEqualTypeOf<{ eventType: 'kyc.source-of-funds.changed'; data: User }>();
  });
  it('types card.transaction.created data as an open object', () => {
    expectTypeOf<CardTransactionCreatedEvent>().toEqualTypeOf<{ eventType: 'card.transaction.created'; data: Record<string, unknown> }>();
  });
});

describe('WebhookEvent is a union discriminated on eventType', () => {
  it('is the union of the five events', () => {
    expectTypeOf<WebhookEvent>().toEqualTypeOf<
      UserCreatedEvent | KycStatusChangedEvent | KycPhoneValidationChangedEvent | KycSourceOfFundsChangedEvent | CardTransactionCreatedEvent
    >();
  });
  it('narrows by eventType', () => {
    const handle = (event: WebhookEvent) => {
      switch (event.eventType) {
        case 'kyc.status.changed':
          expectTypeOf(event).toEqualTypeOf<KycStatusChangedEvent>();
          expectTypeOf(event.data.kycStatus).toEqualTypeOf<KycStatus>();
          return;
        case 'card.transaction.created':
          expectTypeOf(event.data).toEqualTypeOf<Record<string, unknown>>();
          return;
        default:
          expectTypeOf(event.data).toEqualTypeOf<User>();
      }
    };
    expectTypeOf(handle).parameter(0).toEqualTypeOf<WebhookEvent>();
  });
  it('maps each event type to its event', () => {
    expectTypeOf<WebhookEventType>().toEqualTypeOf<
      'user.created' | 'kyc.status.changed' | 'kyc.phone-validation.changed' | 'kyc.source-of-funds.changed' | 'card.transaction.created'
    >();
    expectTypeOf<keyof WebhookEventMap>().toEqualTypeOf<WebhookEventType>();
    expectTypeOf<WebhookEventMap['kyc.status.changed']>().toEqualTypeOf<KycStatusChangedEvent>();
    expectTypeOf<WebhookEventMap[WebhookEventType]>().toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEventMap[WebhookEventType]['eventType']>().toEqualTypeOf<WebhookEventType>();
  });
  it('lists every event type in WEBHOOK_EVENT_TYPES, read-only', () => {
    expectTypeOf(WEBHOOK_EVENT_TYPES).toEqualTypeOf<readonly [
      'user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed', 'card.transaction.created',
    ]>();
    expectTypeOf<(typeof WEBHOOK_EVENT_TYPES)[number]>().toEqualTypeOf<WebhookEventType>();
  });
});

describe('webhook headers (6.2): X-Webhook-Timestamp and X-Webhook-Signature', () => {
  it('exports the header names as literal constants', () => {
    expectTypeOf<typeof WEBHOOK_TIMESTAMP_HEADER>().toEqualTypeOf<'X-Webhook-Timestamp'>();
    expectTypeOf<typeof WEBHOOK_SIGNATURE_HEADER>().toEqualTypeOf<'X-Webhook-Signature'>();
  });
  it('types the headers with their wire names, both required', () => {
    expectTypeOf<WebhookHeaders>().toEqualTypeOf<{ 'X-Webhook-Timestamp': string; 'X-Webhook-Signature': string }>();
  });
});
