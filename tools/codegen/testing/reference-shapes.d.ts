// The schemas of reference section 2 (/work/shared/reference/partner-interface.md), written
// out by hand once, for the type tests of every generated package. They are deliberately not
// derived from the spec: a spec or generator change that drifts from the reference must fail.

/**
 * `kycStatus` (2.5): exactly the eight values.
 *
 * @example
 * expectTypeOf<KycStatus>().toEqualTypeOf<ReferenceKycStatus>();
 */
export type ReferenceKycStatus =
  | 'notStarted' | 'documentsRequested' | 'pending' | 'processing'
  | 'approved' | 'resubmissionRequested' | 'rejected' | 'requiresAction';

/**
 * `bankingDetails` (2.4): four required fields, each nullable.
 *
 * @example
 * expectTypeOf<BankingDetails>().toEqualTypeOf<ReferenceBankingDetails>();
 */
export interface ReferenceBankingDetails {
  providerIban: string | null;
  providerBic: string | null;
  providerIbanStatus: string | null;
  address: string | null;
}

/**
 * A card (2.3): six required fields, `embossedName` and `activatedAt` nullable.
 *
 * @example
 * expectTypeOf<Card>().toEqualTypeOf<ReferenceCard>();
 */
export interface ReferenceCard {
  id: string;
  cardToken: string;
  lastFourDigits: string;
  embossedName: string | null;
  activatedAt: string | null;
  virtual: boolean;
}

/**
 * The user (2.1): every field present, nullable fields `T | null`, nothing optional.
 *
 * @example
 * expectTypeOf<User>().toEqualTypeOf<ReferenceUser>();
 */
export interface ReferenceUser {
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
  kycStatus: ReferenceKycStatus;
  availableFeatures: { providerIban: boolean };
  cards: ReferenceCard[];
  bankingDetails: ReferenceBankingDetails | null;
  isSourceOfFundsAnswered: boolean;
  isPhoneValidated: boolean;
}
