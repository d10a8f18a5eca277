// Temporary local declaration of the event types, until @capi/event-types publishes its build.
// Same names and shapes as reference section 2 and 6.
export type KycStatus =
  | 'notStarted'
  | 'documentsRequested'
  | 'pending'
  | 'processing'
  | 'approved'
  | 'resubmissionRequested'
  | 'rejected'
  | 'requiresAction';

export interface SignInWallet { address: string }
export interface SmartWallet { address: string; chainId: string }
export interface Card {
  id: string;
  cardToken: string;
  lastFourDigits: string;
  embossedName: string | null;
  activatedAt: string | null;
  virtual: boolean;
}
export interface BankingDetails {
  providerIban: string | null;
  providerBic: string | null;
  providerIbanStatus: string | null;
  address: string | null;
}
export interface AvailableFeatures { providerIban: boolean }
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
  signInWallets: SignInWallet[];
  smartWallets: SmartWallet[];
  kycStatus: KycStatus;
  availableFeatures: AvailableFeatures;
  cards: Card[];
  bankingDetails: BankingDetails | null;
  isSourceOfFundsAnswered: boolean;
  isPhoneValidated: boolean;
}
export interface UserCreatedEvent { eventType: 'user.created'; data: User }
export interface KycStatusChangedEvent { eventType: 'kyc.status.changed'; data: User }
export interface KycPhoneValidationChangedEvent { eventType: 'kyc.phone-validation.changed'; data: User }
export interface KycSourceOfFundsChangedEvent { eventType: 'kyc.source-of-funds.changed'; data: User }
export interface CardTransactionCreatedEvent { eventType: 'card.transaction.created'; data: Record<string, unknown> }
export type WebhookEvent =
  | UserCreatedEvent
  | KycStatusChangedEvent
  | KycPhoneValidationChangedEvent
  | KycSourceOfFundsChangedEvent
  | CardTransactionCreatedEvent;
export type WebhookEventType = WebhookEvent['eventType'];
