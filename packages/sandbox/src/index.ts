export { startSandbox, type Sandbox, type SandboxReceiverOptions } from './sandbox.js';
export { DeliveriesNotSettledError, type WhenDeliveriesSettledOptions } from './webhooks/settle-wait.js';
export type { DeliveryFilter } from './webhooks/delivery-filter.js';
export { DEV_WALLET } from './dev-wallet.js';
export type { SandboxOptions } from './options.js';
export { SandboxConfigError, type SandboxConfigErrorCode } from './errors.js';
export { EventPublishError } from './webhooks/event-publisher.js';
export { RETRY_DELAYS_MS, DEFAULT_DELIVERY_TIMEOUT_MS, type Delivery, type DeliveryAttempt } from './webhooks/delivery-scheduler.js';
export { SANDBOX_EVENT_TYPES, type SandboxEventType } from './webhooks/sample-event-data.js';
export type { SmartAccountSignatureVerifier } from './auth/signature-verifier.js';
export type { Generation } from './auth/token-service.js';
export { NONCE_LIFETIME_MS } from './auth/nonce-store.js';
export { DEFAULT_DAILY_LIMIT_CENTS } from './limits/limit-store.js';
export {
  CardPaymentError,
  type CardPaymentErrorCode,
  type CardPaymentRequest,
  type CardAuthorization,
  type CardTransaction,
  type DailySpending,
} from './limits/card-spending.js';
export { KYC_STATUSES, type KycStatus, type User, type UserSeed } from './users/user.js';
export { UserRegistryError, type UserEventType } from './users/user-registry.js';
export type { SandboxLogEntry, RequestLogEntry, DeliveryAttemptLogEntry } from './log/sandbox-log.js';
export { ONBOARDING_STEPS, type OnboardingStep } from './onboarding/onboarding-journey.js';
export { OlderGenerationUserError, type OlderGenerationUser, type OlderGenerationUserSeed } from './onboarding/older-generation-users.js';
export { ONE_TIME_PASSWORD_LIFETIME_MS, type SentOneTimePassword } from './onboarding/one-time-passwords.js';
