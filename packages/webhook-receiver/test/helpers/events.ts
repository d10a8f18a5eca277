import type { User, WebhookEventType } from '@capi/event-types';

/** A complete user (reference 2.1), distinct per `id`. */
export function makeUser(id: string, overrides: Partial<User> = {}): User {
  return {
    id,
    email: `${id}@example.com`,
    phone: null,
    firstName: 'Ada',
    lastName: 'Lovelace',
    address1: '1 Main Street',
    address2: null,
    city: 'Berlin',
    postalCode: '10115',
    state: null,
    country: 'DE',
    nationalityCountry: 'DE',
    signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }],
    smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }],
    kycStatus: 'approved',
    availableFeatures: { providerIban: true },
    cards: [{ id: `card-${id}`, cardToken: `tok-${id}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: null, virtual: true }],
    bankingDetails: null,
    isSourceOfFundsAnswered: true,
    isPhoneValidated: false,
    ...overrides,
  };
}

/** The raw JSON body of a user event, exactly as the service would send it. */
export function eventBody(eventType: WebhookEventType, userId: string, overrides: Partial<User> = {}): string {
  return JSON.stringify({ eventType, data: makeUser(userId, overrides) });
}
