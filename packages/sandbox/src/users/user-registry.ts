import { getAddress, isAddress } from 'viem';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from '../conformance/nesting-depth.js';
import type { SchemaCheck } from '../conformance/schema-check.js';
import { completeUser } from './complete-user.js';
import { nestedFieldProblems } from './nested-fields.js';
import { KYC_STATUSES, USER_FIELDS, type KycStatus, type User, type UserSeed } from './user.js';

/**
 * The user events of reference 6.1, each emitted by the change it names.
 *
 * @example
 * ```ts
 * const eventType: UserEventType = 'kyc.phone-validation.changed';
 * ```
 */
export type UserEventType = 'user.created' | 'kyc.status.changed' | 'kyc.phone-validation.changed' | 'kyc.source-of-funds.changed';

/** Receives a snapshot of the user after each change. */
export type UserEventSink = (eventType: UserEventType, user: User) => void;

/**
 * Why a user change was refused; the message says what to send instead.
 *
 * @example
 * ```ts
 * try { sandbox.users.setKycStatus('no-such-id', 'approved'); }
 * catch (error) { if (error instanceof UserRegistryError) console.error(error.code); } // 'unknown_user'
 * ```
 */
export class UserRegistryError extends Error {
  override readonly name = 'UserRegistryError';
  constructor(
    readonly code: 'invalid_user' | 'duplicate_user' | 'duplicate_wallet' | 'unknown_user',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The sandbox's users, indexed by id and by wallet address. Every change goes through here
 * so that every change emits its event, whether it came from the admin API or from code.
 */
export class UserRegistry {
  readonly #users = new Map<string, User>();
  readonly #userIdByWallet = new Map<string, string>();

  /**
   * @param singleOwner newer generation (reference 5 rule 8): a user has one sign-in wallet,
   * its owner, fixed; a user with more is refused.
   */
  constructor(
    private readonly userSchema: SchemaCheck,
    private readonly emit: UserEventSink = () => {},
    private readonly singleOwner = false,
  ) {}

  list(): User[] {
    return [...this.#users.values()].map((user) => structuredClone(user));
  }

  /** Whether a user with this id exists (no copy made: the bearer check runs on every request). */
  has(id: string): boolean {
    return this.#users.has(id);
  }

  /** Whether the user has a smart account, i.e. an account (no copy made: the limit routes ask on every request). */
  hasSmartAccount(id: string): boolean {
    return (this.#users.get(id)?.smartWallets.length ?? 0) > 0;
  }

  get(id: string): User | undefined {
    const user = this.#users.get(id);
    return user && structuredClone(user);
  }

  /** The user that signs in with `address`: a sign-in wallet or a smart-account wallet (EIP-1271). */
  findByWallet(address: string): User | undefined {
    const id = this.userIdByWallet(address);
    return id === undefined ? undefined : this.get(id);
  }

  /** Whether a user registered `email` (compared case-insensitively, as addresses are). */
  hasEmail(email: string): boolean {
    const wanted = email.toLowerCase();
    return [...this.#users.values()].some((user) => user.email?.toLowerCase() === wanted);
  }

  /** The id of the user that signs in with `address`, without copying the user. */
  userIdByWallet(address: string): string | undefined {
    return this.#userIdByWallet.get(address.toLowerCase());
  }

  /** Adds a user without an event: the seeded users exist before the sandbox starts. */
  seed(seed: UserSeed): User {
    return this.#add(seed);
  }

  /** Adds a user and emits `user.created`. */
  create(seed: UserSeed): User {
    const user = this.#add(seed);
    this.emit('user.created', structuredClone(user));
    return structuredClone(user);
  }

  /** Sets `kycStatus`; emits `kyc.status.changed` when the value changes. */
  setKycStatus(id: string, kycStatus: KycStatus): { user: User; changed: boolean } {
    if (!(KYC_STATUSES as readonly string[]).includes(kycStatus)) {
      throw new UserRegistryError('invalid_user', `kycStatus must be one of ${KYC_STATUSES.join(', ')}; got ${JSON.stringify(kycStatus)}.`);
    }
    return this.#change(id, 'kyc.status.changed', (user) => {
      if (user.kycStatus === kycStatus) return false;
      user.kycStatus = kycStatus;
      return true;
    });
  }

  /**
   * Sets `isPhoneValidated` (and `phone` when given); emits `kyc.phone-validation.changed`
   * only when the validation changes: a new number alone is not a validation change.
   */
  setPhoneValidation(id: string, isPhoneValidated: boolean, phone?: string | null): { user: User; changed: boolean } {
    return this.#change(id, 'kyc.phone-validation.changed', (user) => {
      const changed = user.isPhoneValidated !== isPhoneValidated;
      user.isPhoneValidated = isPhoneValidated;
      if (phone !== undefined) user.phone = phone;
      return changed;
    });
  }

  /**
   * Applies several changes as one (a migration's carry-over), then emits the event of each
   * change `apply` reports, every one carrying the user after all of them: a receiver never
   * sees a state the API could not have answered.
   */
  changeTogether(id: string, apply: (user: User) => UserEventType[]): User {
    let eventTypes: UserEventType[] = [];
    const { user } = this.#change(id, undefined, (next) => {
      eventTypes = apply(next);
      return false;
    });
    for (const eventType of eventTypes) this.emit(eventType, structuredClone(user));
    return user;
  }

  /**
   * Changes fields no event kind covers (the phone number alone, smart wallets, cards):
   * reference 6.1 names no event for them, so none is sent.
   */
  updateWithoutEvent(id: string, apply: (user: User) => void): User {
    return this.#change(id, undefined, (user) => {
      apply(user);
      return false;
    }).user;
  }

  /** Sets `isSourceOfFundsAnswered`; emits `kyc.source-of-funds.changed` on a change. */
  setSourceOfFunds(id: string, isSourceOfFundsAnswered: boolean): { user: User; changed: boolean } {
    return this.#change(id, 'kyc.source-of-funds.changed', (user) => {
      if (user.isSourceOfFundsAnswered === isSourceOfFundsAnswered) return false;
      user.isSourceOfFundsAnswered = isSourceOfFundsAnswered;
      return true;
    });
  }

  #change(id: string, eventType: UserEventType | undefined, apply: (user: User) => boolean): { user: User; changed: boolean } {
    const current = this.#users.get(id);
    if (!current) throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(id)}; list them with GET /__sandbox/users.`);
    const next = structuredClone(current);
    const changed = apply(next);
    this.#assertValid(next);
    this.#indexWallets(next);
    this.#users.set(id, next);
    if (changed && eventType !== undefined) this.emit(eventType, structuredClone(next));
    return { user: structuredClone(next), changed };
  }

  #add(seed: UserSeed): User {
    if (typeof seed !== 'object' || seed === null || Array.isArray(seed)) {
      throw new UserRegistryError('invalid_user', 'A user must be a JSON object with User fields (reference 2.1).');
    }
    // Every read of a user copies it recursively: one stored too deep would break them all.
    if (nestsDeeperThan(seed)) {
      throw new UserRegistryError('invalid_user', `The user nests values more than ${MAX_NESTING_DEPTH} levels deep; a User nests 3 levels (cards, wallets, bankingDetails).`);
    }
    // A misspelt field would otherwise be dropped silently and the user created without it.
    const unknownFields = Object.keys(seed).filter((field) => !USER_FIELDS.includes(field));
    if (unknownFields.length > 0) {
      throw new UserRegistryError(
        'invalid_user',
        `unknown User field${unknownFields.length > 1 ? 's' : ''} ${unknownFields.map((field) => JSON.stringify(field)).join(', ')}; the fields are ${USER_FIELDS.join(', ')}.`,
      );
    }
    // Likewise inside cards, wallets, bankingDetails and availableFeatures, which the User
    // schema leaves open: a field stored there would be echoed in every event of the user.
    const nestedProblems = nestedFieldProblems(seed as Record<string, unknown>);
    if (nestedProblems.length > 0) throw new UserRegistryError('invalid_user', `${nestedProblems.join('; ')}.`);
    const user = completeUser(seed);
    this.#assertValid(user);
    if (this.#users.has(user.id)) throw new UserRegistryError('duplicate_user', `A user with id ${JSON.stringify(user.id)} already exists; omit id to get a fresh one.`);
    if (this.singleOwner && user.signInWallets.length > 1) {
      throw new UserRegistryError(
        'invalid_user',
        `The newer generation allows one sign-in wallet per user, its owner, fixed at account creation (reference 5 rule 8); got ${user.signInWallets.length}. Keep one, or start the sandbox with generation "older".`,
      );
    }
    const wallets = [...user.signInWallets.map((w) => w.address), ...user.smartWallets.map((w) => w.address)];
    for (const address of wallets) {
      if (!isAddress(address, { strict: false })) {
        throw new UserRegistryError('invalid_user', `${JSON.stringify(address)} is not a wallet address (0x followed by 40 hex digits).`);
      }
    }
    this.#indexWallets(user);
    this.#users.set(user.id, user);
    return structuredClone(user);
  }

  /** Indexes the user's wallets (also one added later, such as a new smart account); refused when another user has one. */
  #indexWallets(user: User): void {
    const wallets = [...user.signInWallets.map((w) => w.address), ...user.smartWallets.map((w) => w.address)];
    for (const address of wallets) {
      const owner = this.#userIdByWallet.get(address.toLowerCase());
      if (owner !== undefined && owner !== user.id) {
        throw new UserRegistryError('duplicate_wallet', `The wallet ${getAddress(address)} already belongs to user ${owner}; a wallet signs in to one account only.`);
      }
    }
    for (const address of wallets) this.#userIdByWallet.set(address.toLowerCase(), user.id);
  }

  #assertValid(user: User): void {
    const result = this.userSchema.check(user);
    if (!result.ok) throw new UserRegistryError('invalid_user', `The user does not match the User schema: ${result.problems.join('; ')}.`);
  }
}
