import { randomUUID } from 'node:crypto';
import { USER_FIELDS, type User, type UserSeed } from './user.js';

/**
 * Fills every field a seed leaves out, so that the result is a complete User (reference 2.1).
 * A field of the spec's User that this list does not name yet (added to the spec since) is kept
 * as the seed gives it, rather than dropped.
 */
export function completeUser(seed: UserSeed): User {
  const user: User = {
    id: seed.id ?? randomUUID(),
    email: seed.email ?? null,
    phone: seed.phone ?? null,
    firstName: seed.firstName ?? null,
    lastName: seed.lastName ?? null,
    address1: seed.address1 ?? null,
    address2: seed.address2 ?? null,
    city: seed.city ?? null,
    postalCode: seed.postalCode ?? null,
    state: seed.state ?? null,
    country: seed.country ?? null,
    nationalityCountry: seed.nationalityCountry ?? null,
    // Anything but an array is left as it is, for the User schema check to name the problem.
    signInWallets: Array.isArray(seed.signInWallets)
      ? seed.signInWallets.map((wallet) => (typeof wallet === 'string' ? { address: wallet } : wallet))
      : ((seed.signInWallets ?? []) as User['signInWallets']),
    smartWallets: seed.smartWallets ?? [],
    kycStatus: seed.kycStatus ?? 'notStarted',
    availableFeatures: seed.availableFeatures ?? { providerIban: false },
    cards: seed.cards ?? [],
    bankingDetails: seed.bankingDetails === undefined ? null : seed.bankingDetails,
    isSourceOfFundsAnswered: seed.isSourceOfFundsAnswered ?? false,
    isPhoneValidated: seed.isPhoneValidated ?? false,
  };
  for (const field of USER_FIELDS) {
    if (!(field in user) && Object.hasOwn(seed, field)) (user as unknown as Record<string, unknown>)[field] = (seed as Record<string, unknown>)[field];
  }
  return user;
}
