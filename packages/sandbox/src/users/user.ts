import type { KycStatus as SpecKycStatus, User as SpecUser } from '@capi/openapi-types';
import { userSchema } from '../generated/openapi-contract.js';

/**
 * The eight KYC states of reference 2.5, read from the spec's User schema.
 *
 * @example
 * ```ts
 * for (const kycStatus of KYC_STATUSES) sandbox.users.setKycStatus(user.id, kycStatus);
 * ```
 */
export const KYC_STATUSES = (userSchema as { properties: { kycStatus: { enum: SpecKycStatus[] } } }).properties.kycStatus.enum as readonly SpecKycStatus[];

/** The fields of a User (reference 2.1), in the spec's order, read from the spec's User schema. */
export const USER_FIELDS: readonly string[] = Object.keys((userSchema as { properties: Record<string, unknown> }).properties);

/**
 * One of {@link KYC_STATUSES}.
 *
 * @example
 * ```ts
 * const kycStatus: KycStatus = 'approved';
 * ```
 */
export type KycStatus = SpecKycStatus;

/**
 * A user as the service sends it in every user and KYC event (reference 2.1); every field is
 * present. The spec's User, from @capi/openapi-types.
 *
 * @example
 * ```ts
 * const user: User = sandbox.users.create({ email: 'ada@example.com' });
 * ```
 */
export type User = SpecUser;

/**
 * What you give the sandbox to create a user: any subset of the User fields. Missing fields
 * get defaults (nullable ones null, `kycStatus` `notStarted`, empty lists); sign-in wallets
 * may be written as plain address strings.
 *
 * @example
 * ```ts
 * const seed: UserSeed = { email: 'ada@example.com', signInWallets: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'] };
 * ```
 */
export type UserSeed = Partial<Omit<User, 'signInWallets'>> & {
  signInWallets?: (string | { address: string })[];
};
