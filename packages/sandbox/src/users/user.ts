/**
 * The eight KYC states of reference 2.5.
 *
 * @example
 * ```ts
 * for (const kycStatus of KYC_STATUSES) sandbox.users.setKycStatus(user.id, kycStatus);
 * ```
 */
export const KYC_STATUSES = [
  'notStarted',
  'documentsRequested',
  'pending',
  'processing',
  'approved',
  'resubmissionRequested',
  'rejected',
  'requiresAction',
] as const;

/**
 * One of {@link KYC_STATUSES}.
 *
 * @example
 * ```ts
 * const kycStatus: KycStatus = 'approved';
 * ```
 */
export type KycStatus = (typeof KYC_STATUSES)[number];

/**
 * A user as the service sends it in every user and KYC event (reference 2.1); every field is present.
 *
 * @example
 * ```ts
 * const user: User = sandbox.users.create({ email: 'ada@example.com' });
 * ```
 */
export interface User {
  id: string;
  email: string | null;
  phone: string | null;
  firstName: string | null;
  lastName: string | null;
  address1: string | null;
  address2: string | null;
  city: string | null;
  postalCode: string | null;
  state: string | null;
  country: string | null;
  nationalityCountry: string | null;
  signInWallets: { address: string }[];
  smartWallets: { address: string; chainId: string }[];
  kycStatus: KycStatus;
  availableFeatures: { providerIban: boolean };
  cards: {
    id: string;
    cardToken: string;
    lastFourDigits: string;
    embossedName: string | null;
    activatedAt: string | null;
    virtual: boolean;
  }[];
  bankingDetails: {
    providerIban: string | null;
    providerBic: string | null;
    providerIbanStatus: string | null;
    address: string | null;
  } | null;
  isSourceOfFundsAnswered: boolean;
  isPhoneValidated: boolean;
}

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
