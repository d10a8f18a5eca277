import { randomUUID } from 'node:crypto';
import { completeUser } from '../users/complete-user.js';
import type { User } from '../users/user.js';

/**
 * The event types the sandbox can send (reference 6.1).
 *
 * @example
 * ```ts
 * for (const eventType of SANDBOX_EVENT_TYPES) sandbox.sendEvent(eventType);
 * ```
 */
export const SANDBOX_EVENT_TYPES = [
  'user.created',
  'kyc.status.changed',
  'kyc.phone-validation.changed',
  'kyc.source-of-funds.changed',
  'card.transaction.created',
] as const;

/**
 * One of {@link SANDBOX_EVENT_TYPES}.
 *
 * @example
 * ```ts
 * const eventType: SandboxEventType = 'kyc.status.changed';
 * ```
 */
export type SandboxEventType = (typeof SANDBOX_EVENT_TYPES)[number];

/** A complete example user for events sent without a user (`send-event`, `POST /__sandbox/events`). */
export function sampleUser(): User {
  return completeUser({
    id: 'usr_sandbox_sample',
    email: 'ada@example.com',
    phone: '+4915112345678',
    firstName: 'Ada',
    lastName: 'Lovelace',
    address1: '12 Analytical Row',
    city: 'Berlin',
    postalCode: '10115',
    country: 'DE',
    nationalityCountry: 'GB',
    signInWallets: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
    smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }],
    kycStatus: 'approved',
    availableFeatures: { providerIban: true },
    cards: [{ id: 'card_sample', cardToken: 'ctk_sample', lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: '2026-01-15T10:00:00.000Z', virtual: true }],
    bankingDetails: { providerIban: 'DE89370400440532013000', providerBic: 'COBADEFFXXX', providerIbanStatus: 'assigned', address: 'Berlin, DE' },
    isSourceOfFundsAnswered: true,
    isPhoneValidated: true,
  });
}

/**
 * The `data` of an event sent on demand: the given user (or the sample user) for user and
 * KYC events; for `card.transaction.created`, whose payload the reference does not show, an
 * illustrative transaction that receivers must not rely on, with an id of its own
 * (`txn_sandbox_<uuid>`): each is a new transaction, as a partner keying them by id expects.
 */
export function sampleEventData(eventType: string, user: User = sampleUser()): unknown {
  if (eventType !== 'card.transaction.created') return user;
  return {
    id: `txn_sandbox_${randomUUID()}`,
    userId: user.id,
    cardId: user.cards[0]?.id ?? 'card_sample',
    amount: 1250,
    currency: 'USD',
    merchantName: 'Sandbox Coffee',
    createdAt: new Date().toISOString(),
  };
}
