import type { WebhookEvent } from '@capi/event-types';
import { parseWebhookEvent } from '@capi/webhook-validator';
import type { WebhookEventParser } from '../../src/index.js';

/**
 * Stands in for the validator of a later SDK version, whose schema knows the drift the tests
 * send: `kycStatus: 'someNewValue'`, and `address2` left out (nullable, and the platform
 * omits it). Every other problem is still refused, as the real validator refuses it.
 */
export const upgradedValidator: WebhookEventParser = (rawBody, options) => {
  const result = parseWebhookEvent(rawBody, options);
  if (result.ok || result.unknownEventType) return result;
  const knownDrift = result.errors.every((error) =>
    (error.path === '/data/kycStatus' && error.keyword === 'enum') || (error.path === '/data/address2' && error.keyword === 'required'));
  if (!knownDrift) return result;
  return { ok: true, event: JSON.parse(new TextDecoder().decode(rawBody)) as WebhookEvent };
};

/** The two drifted bodies of the tests: a new enum value, and a field left out. */
export function driftedBodies(userId: string): { newEnumValue: string; missingField: string } {
  const user = {
    id: userId, email: `${userId}@example.com`, phone: null, firstName: 'Ada', lastName: 'Lovelace',
    address1: '1 Main Street', address2: null, city: 'Berlin', postalCode: '10115', state: null, country: 'DE',
    nationalityCountry: 'DE', signInWallets: [], smartWallets: [], kycStatus: 'pending',
    availableFeatures: { providerIban: false }, cards: [], bankingDetails: null,
    isSourceOfFundsAnswered: false, isPhoneValidated: false,
  };
  const { address2: _omitted, ...withoutAddress2 } = user;
  return {
    newEnumValue: JSON.stringify({ eventType: 'kyc.status.changed', data: { ...user, kycStatus: 'someNewValue' } }),
    missingField: JSON.stringify({ eventType: 'user.created', data: withoutAddress2 }),
  };
}
