import { randomBytes, randomInt } from 'node:crypto';
import type { Card, OnboardingStatus } from '@capi/openapi-types';
import { ApiError } from '../http/api-error.js';
import type { User } from '../users/user.js';
import type { UserEventType, UserRegistry } from '../users/user-registry.js';
import { derivedSmartAccountAddress, type OlderGenerationUser, type OlderGenerationUsers } from './older-generation-users.js';
import type { OneTimePasswords } from './one-time-passwords.js';

/**
 * The onboarding steps of the newer generation, in the observed order of reference 3.3.
 * The reference names the first four; the later names are the spec's (`x-assumption`).
 *
 * @example
 * ```ts
 * expect(ONBOARDING_STEPS.indexOf('action_accept_tos')).toBe(0);
 * ```
 */
export const ONBOARDING_STEPS = [
  'action_accept_tos',
  'waiting_kyc_setup',
  'action_complete_kyc',
  'action_complete_sof',
  'action_create_account',
  'action_verify_phone',
  'action_create_card',
  'completed',
] as const satisfies readonly OnboardingStatus[];

/** One of {@link ONBOARDING_STEPS}. @example const step: OnboardingStep = 'completed'; */
export type OnboardingStep = (typeof ONBOARDING_STEPS)[number];

const WHAT_TO_DO: Record<OnboardingStep, string> = {
  action_accept_tos: 'accept the terms first (POST /user/terms)',
  waiting_kyc_setup: 'wait while the verification is carried over (poll GET /user/onboarding)',
  action_complete_kyc: 'KYC must be approved first (sandbox: PUT /__sandbox/users/:id/kyc-status)',
  action_complete_sof: 'answer the source-of-funds questionnaire first (POST /source-of-funds)',
  action_create_account: 'create the account first (POST /account)',
  action_verify_phone: 'verify the phone first (POST /phone/verification, then POST /phone)',
  action_create_card: 'create a card (POST /cards)',
  completed: 'onboarding is complete',
};

/** The same steps as later ones in a list ("…, then answer …"): what to do, without "first". */
const THEN_DO: Partial<Record<OnboardingStep, string>> = {
  waiting_kyc_setup: 'wait while the verification is carried over (poll GET /user/onboarding)',
  action_complete_kyc: 'get KYC approved (sandbox: PUT /__sandbox/users/:id/kyc-status)',
  action_complete_sof: 'answer the source-of-funds questionnaire (POST /source-of-funds)',
  action_create_account: 'create the account (POST /account)',
};

const conflict = (code: string, message: string) => new ApiError(409, { code, message });

interface Migration {
  from: OlderGenerationUser;
  /** When the carry-over is done, on the sandbox clock: never before the terms are accepted, which start its wait. */
  setupEndsAt: number;
  settled: boolean;
}

interface JourneyRecord {
  termsAccepted: boolean;
  migration?: Migration;
}

/** Options of {@link OnboardingJourney}. */
export interface OnboardingJourneyOptions {
  /** Whether the partner requires phone verification (step `action_verify_phone`). */
  requirePhone: boolean;
  /** How long `waiting_kyc_setup` lasts for a migrated user, on the sandbox clock. */
  kycSetupMs: number;
  now: () => number;
}

/**
 * The newer generation's onboarding as a state machine over the user registry. The step is
 * derived from the user's fields (what the API answers) plus two facts the User has no field
 * for: terms acceptance and a running migration. Every change goes through the registry, so
 * each emits its event.
 */
export class OnboardingJourney {
  readonly #records = new Map<string, JourneyRecord>();
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly users: UserRegistry,
    private readonly olderUsers: OlderGenerationUsers,
    private readonly passwords: OneTimePasswords,
    private readonly options: OnboardingJourneyOptions,
  ) {}

  /**
   * The step `userId` is at. A user the journey did not register (seeded, or made through the
   * admin API) has accepted the terms: it stands for a user that already exists.
   */
  stepOf(userId: string): OnboardingStep {
    this.settleDue();
    const user = this.#user(userId);
    const record = this.#records.get(userId) ?? { termsAccepted: true };
    if (!record.termsAccepted) return 'action_accept_tos';
    if (record.migration && !record.migration.settled) return 'waiting_kyc_setup';
    if (user.kycStatus !== 'approved') return 'action_complete_kyc';
    if (!user.isSourceOfFundsAnswered) return 'action_complete_sof';
    if (user.smartWallets.length === 0) return 'action_create_account';
    if (this.options.requirePhone && !user.isPhoneValidated) return 'action_verify_phone';
    if (user.cards.length === 0) return 'action_create_card';
    return 'completed';
  }

  /** Emails a one-time password for registration (`requestEmailVerification`). */
  requestEmailVerification(wallet: string, email: string): { sentTo: string; expiresAt: string } {
    this.#assertCanRegister(wallet, email);
    return this.passwords.send('email', wallet, email);
  }

  /**
   * Registers `wallet`'s user with a proved email and emits `user.created`. A wallet that
   * owns an older-generation user's smart account migrates it (reference 9); any other
   * wallet makes a new user, and the older user with that email can never be migrated.
   */
  register(wallet: string, email: string, otp: string): User {
    this.#assertCanRegister(wallet, email);
    this.passwords.consume('email', wallet, email, otp);
    const from = this.olderUsers.claim(wallet);
    if (!from) this.olderUsers.closeByEmail(email);
    const user = this.users.create({ email, signInWallets: [wallet] });
    const record: JourneyRecord = { termsAccepted: false };
    // The carry-over waits for the terms (reference 3.3: terms, then the wait): its clock starts in acceptTerms.
    if (from) record.migration = { from, setupEndsAt: Number.POSITIVE_INFINITY, settled: false };
    this.#records.set(user.id, record);
    return user;
  }

  /**
   * `action_accept_tos`: always required, migrated users too (reference 3.3). A migrated user
   * then waits at `waiting_kyc_setup` for `kycSetupMs` of the sandbox clock, from now.
   */
  acceptTerms(userId: string): User {
    this.#requireStep(userId, 'action_accept_tos');
    const record = this.#records.get(userId)!;
    record.termsAccepted = true;
    if (record.migration) {
      record.migration.setupEndsAt = this.options.now() + this.options.kycSetupMs;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.settleDue();
      }, this.options.kycSetupMs);
      timer.unref();
      this.#timers.add(timer);
    }
    return this.#user(userId);
  }

  /** `action_complete_sof`: emits `kyc.source-of-funds.changed`. */
  submitSourceOfFunds(userId: string): User {
    this.#requireStep(userId, 'action_complete_sof');
    return this.users.setSourceOfFunds(userId, true).user;
  }

  /**
   * `action_create_account`: the smart account appears in `smartWallets`, owned by the
   * sign-in wallet (a migrated user keeps its existing one). No event kind covers it.
   */
  createAccount(userId: string): User {
    this.#requireStep(userId, 'action_create_account');
    const user = this.#user(userId);
    const smartWallet = this.#records.get(userId)?.migration?.from.smartWallet ?? {
      address: derivedSmartAccountAddress(user.signInWallets[0]?.address ?? user.id, 'newer-generation'),
      chainId: '100',
    };
    return this.users.updateWithoutEvent(userId, (next) => {
      next.smartWallets.push(smartWallet);
    });
  }

  /**
   * The daily limit is the account's (reference 4.3): before `createAccount` there is none,
   * and the limit routes answer 409 naming the step the user is at and what to do.
   */
  assertAccountCreated(userId: string): void {
    if (this.users.hasSmartAccount(userId)) return;
    const step = this.stepOf(userId);
    // Without a smart account the step is at most action_create_account (stepOf's order); the
    // message names every step still open on the way there, in order.
    const migration = this.#records.get(userId)?.migration;
    const mayCarryOver = (open: OnboardingStep) =>
      migration !== undefined && !migration.settled && (open === 'action_complete_kyc' || open === 'action_complete_sof') ? ' unless it is carried over' : '';
    const then = this.#openStepsBefore(userId, 'action_create_account')
      .filter((open) => open !== step)
      .map((open) => `, then ${THEN_DO[open]}${mayCarryOver(open)}`)
      .join('');
    throw conflict('OnboardingStepNotReached', `The daily limit is set on the account, which this user has not created yet; the user is at ${step}: ${WHAT_TO_DO[step]}${then}.`);
  }

  /** The steps not done yet from the start up to `last` (included), in order, as the user's state says now. */
  #openStepsBefore(userId: string, last: OnboardingStep): OnboardingStep[] {
    const user = this.#user(userId);
    const record = this.#records.get(userId) ?? { termsAccepted: true };
    const open: Record<OnboardingStep, boolean> = {
      action_accept_tos: !record.termsAccepted,
      waiting_kyc_setup: record.migration !== undefined && !record.migration.settled,
      action_complete_kyc: user.kycStatus !== 'approved',
      action_complete_sof: !user.isSourceOfFundsAnswered,
      action_create_account: user.smartWallets.length === 0,
      action_verify_phone: this.options.requirePhone && !user.isPhoneValidated,
      action_create_card: user.cards.length === 0,
      completed: false,
    };
    return ONBOARDING_STEPS.slice(0, ONBOARDING_STEPS.indexOf(last) + 1).filter((step) => open[step]);
  }

  /** Sends an SMS one-time password, once the onboarding has reached the phone (or to change a validated number). */
  requestPhoneVerification(userId: string, wallet: string, phone: string): { sentTo: string; expiresAt: string } {
    this.#requirePhoneStep(userId);
    return this.passwords.send('sms', wallet, phone);
  }

  /** Sets and validates the phone; emits `kyc.phone-validation.changed`. */
  setPhone(userId: string, wallet: string, phone: string, otp: string): User {
    this.#requirePhoneStep(userId);
    if (this.#user(userId).isPhoneValidated) throw conflict('AlreadyDone', 'The phone is already validated; change it with PATCH /phone.');
    this.passwords.consume('sms', wallet, phone, otp);
    return this.users.setPhoneValidation(userId, true, phone).user;
  }

  /** Replaces a validated number with another proved one; the validation does not change, so no event. */
  updatePhone(userId: string, wallet: string, phone: string, otp: string): User {
    if (!this.#user(userId).isPhoneValidated) throw conflict('PhoneNotValidated', 'The user has no validated phone to change; set one with POST /phone.');
    this.passwords.consume('sms', wallet, phone, otp);
    return this.users.setPhoneValidation(userId, true, phone).user;
  }

  /**
   * `action_create_card` (and more cards once `completed`). Without phone verification the
   * first card sets the phone number, unvalidated (reference 9). A `phone` other than the
   * number the user has is refused (409 `PhoneAlreadySet`), not ignored.
   */
  createCard(userId: string, request: { virtual?: boolean; embossedName?: string; phone?: string }): User {
    const step = this.stepOf(userId);
    if (step !== 'action_create_card' && step !== 'completed') this.#requireStep(userId, 'action_create_card');
    const user = this.#user(userId);
    // A card sets the number only when the user has none; another number is refused rather than
    // dropped, so that the partner does not believe the user's number changed.
    if (user.phone !== null && request.phone !== undefined && request.phone !== user.phone) {
      throw conflict(
        'PhoneAlreadySet',
        `The user's phone number is already set (${user.isPhoneValidated ? 'validated' : 'not validated'}); a card does not change it, so phone ${JSON.stringify(request.phone)} was refused and no card was created. ` +
          `Leave phone out (or send the user's number), or change the number first: POST /phone/verification, then ${user.isPhoneValidated ? 'PATCH /phone' : 'POST /phone'} with the one-time password.`,
      );
    }
    if (user.phone === null && request.phone === undefined) {
      throw new ApiError(422, {
        code: 'ValidationError',
        message: 'phone is required with the first card: this partner does not require phone verification, so the number is set when the first card is created. Send {"phone": "+15555550123", ...}.',
      });
    }
    const virtual = request.virtual ?? true;
    const fullName = [user.firstName, user.lastName].filter((part) => part !== null).join(' ').toUpperCase();
    const card: Card = {
      id: `crd_${randomBytes(6).toString('hex')}`,
      cardToken: `tok_${randomBytes(12).toString('hex')}`,
      lastFourDigits: String(randomInt(0, 10_000)).padStart(4, '0'),
      embossedName: request.embossedName ?? (fullName === '' ? null : fullName.slice(0, 26)),
      activatedAt: virtual ? new Date(this.options.now()).toISOString() : null,
      virtual,
    };
    return this.users.updateWithoutEvent(userId, (next) => {
      if (next.phone === null && request.phone !== undefined) next.phone = request.phone;
      next.cards.push(card);
    });
  }

  /**
   * Ends every migration whose `waiting_kyc_setup` is over: the name and address, KYC and
   * source of funds carry over where the older user allows it, as one change that emits the
   * event of each; otherwise the user simply continues with the full flow, without an error.
   */
  settleDue(): void {
    const now = this.options.now();
    for (const [userId, record] of this.#records) {
      const migration = record.migration;
      if (!migration || migration.settled || migration.setupEndsAt > now) continue;
      migration.settled = true;
      const { from } = migration;
      this.users.changeTogether(userId, (user) => {
        const events: UserEventType[] = [];
        if (from.verificationCarriesOver && from.kycStatus === 'approved' && user.kycStatus !== 'approved') {
          Object.assign(user, from.profile);
          user.kycStatus = 'approved';
          events.push('kyc.status.changed');
        }
        if (from.sourceOfFundsCarriesOver && from.isSourceOfFundsAnswered && !user.isSourceOfFundsAnswered) {
          user.isSourceOfFundsAnswered = true;
          events.push('kyc.source-of-funds.changed');
        }
        return events;
      });
    }
  }

  /** Stops the migration timers. */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #assertCanRegister(wallet: string, email: string): void {
    if (this.users.userIdByWallet(wallet) !== undefined) {
      throw conflict('AlreadyRegistered', `The wallet ${wallet} already has a user; read it with GET /user and follow GET /user/onboarding.`);
    }
    if (this.users.hasEmail(email)) {
      throw conflict('EmailTaken', `Another user registered ${email}; a user has one sign-in wallet, fixed at registration (reference 5 rule 8). Sign in with that user's wallet: registering another email makes a new user, and an older-generation user's verification is then not carried over.`);
    }
  }

  #requirePhoneStep(userId: string): void {
    const step = this.stepOf(userId);
    if (ONBOARDING_STEPS.indexOf(step) < ONBOARDING_STEPS.indexOf('action_verify_phone') && !this.#user(userId).isPhoneValidated) {
      throw conflict('OnboardingStepNotReached', `The user is at ${step}; ${WHAT_TO_DO[step]}.`);
    }
  }

  #requireStep(userId: string, wanted: OnboardingStep): void {
    const step = this.stepOf(userId);
    if (step === wanted) return;
    if (ONBOARDING_STEPS.indexOf(step) < ONBOARDING_STEPS.indexOf(wanted)) {
      throw conflict('OnboardingStepNotReached', `The user is at ${step}; ${WHAT_TO_DO[step]}.`);
    }
    throw conflict('AlreadyDone', `The user is past ${wanted} (now at ${step}); ${WHAT_TO_DO[step]}.`);
  }

  #user(userId: string): User {
    return this.users.get(userId)!;
  }
}
