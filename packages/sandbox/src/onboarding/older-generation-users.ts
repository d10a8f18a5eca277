import { createHash } from 'node:crypto';
import { getAddress, isAddress } from 'viem';
import { KYC_STATUSES, type KycStatus, type User } from '../users/user.js';

/**
 * A user of the older generation, with a smart account, that the sandbox may migrate when
 * its owner registers on the newer generation (reference 9). Everything but `owner` is
 * optional.
 *
 * @example
 * ```ts
 * await startSandbox({ generation: 'newer', olderGenerationUsers: [{ owner: account.address }] });
 * ```
 */
export interface OlderGenerationUserSeed {
  /** The wallet that owns the smart account today; only a registration signed by it is recognised. */
  owner: string;
  /** The existing smart account. Default: an address derived from `owner`, on chain `"100"`. */
  smartWallet?: { address: string; chainId?: string };
  /** The KYC state the older generation holds. Default `approved`. */
  kycStatus?: KycStatus;
  /** Whether the older generation holds source-of-funds answers. Default true. */
  isSourceOfFundsAnswered?: boolean;
  /** Whether the verification can be carried over (with an approved KYC). Default true; false is the fallback to the full flow. */
  verificationCarriesOver?: boolean;
  /** Whether the answers map onto the current questionnaire. Default true. */
  sourceOfFundsCarriesOver?: boolean;
  /** The email the older generation knows; a new user registering it with another wallet closes the migration for good. */
  email?: string;
  /** Name and address on file, carried over with the verification. */
  profile?: Partial<Pick<User, 'firstName' | 'lastName' | 'address1' | 'address2' | 'city' | 'postalCode' | 'state' | 'country' | 'nationalityCountry'>>;
}

/** An older-generation user as the sandbox holds it, every default filled in. */
export interface OlderGenerationUser extends Required<Omit<OlderGenerationUserSeed, 'smartWallet' | 'email'>> {
  smartWallet: { address: string; chainId: string };
  /** `waiting` until its owner registers; `migrated` then, or `closed` when its email was registered by another wallet. */
  state: 'waiting' | 'migrated' | 'closed';
  email: string | null;
}

const PROFILE_FIELDS = ['firstName', 'lastName', 'address1', 'address2', 'city', 'postalCode', 'state', 'country', 'nationalityCountry'] as const;

/**
 * Why an older-generation user was refused; the message says what to send.
 *
 * @example
 * ```ts
 * try { sandbox.addOlderGenerationUser({ owner: 'nope' }); } catch (error) { console.error((error as OlderGenerationUserError).message); }
 * ```
 */
export class OlderGenerationUserError extends Error {
  override readonly name = 'OlderGenerationUserError';
  readonly code = 'invalid_older_generation_user';
}

/** A smart-account address derived from its owner, stable across runs. */
export function derivedSmartAccountAddress(owner: string, salt: string): string {
  return getAddress(`0x${createHash('sha256').update(`${salt}:${owner.toLowerCase()}`).digest('hex').slice(0, 40)}`);
}

function booleanOr(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new OlderGenerationUserError(`${name} must be true or false; got ${JSON.stringify(value)}.`);
  return value;
}

function address(name: string, value: unknown): string {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new OlderGenerationUserError(`${name} must be a wallet address (0x followed by 40 hex digits); got ${JSON.stringify(value)}.`);
  }
  return getAddress(value);
}

/** Checks a seed and fills its defaults; a bad one throws {@link OlderGenerationUserError}. */
export function completeOlderGenerationUser(seed: OlderGenerationUserSeed): OlderGenerationUser {
  if (typeof seed !== 'object' || seed === null || Array.isArray(seed)) {
    throw new OlderGenerationUserError('An older-generation user is an object such as {"owner": "0x…"}.');
  }
  const known = ['owner', 'smartWallet', 'kycStatus', 'isSourceOfFundsAnswered', 'verificationCarriesOver', 'sourceOfFundsCarriesOver', 'profile', 'email'];
  const unknown = Object.keys(seed).filter((field) => !known.includes(field));
  if (unknown.length > 0) throw new OlderGenerationUserError(`unknown field ${unknown.map((f) => JSON.stringify(f)).join(', ')}; the fields are ${known.join(', ')}.`);
  const owner = address('owner', seed.owner);
  const kycStatus = seed.kycStatus ?? 'approved';
  if (!(KYC_STATUSES as readonly unknown[]).includes(kycStatus)) throw new OlderGenerationUserError(`kycStatus must be one of ${KYC_STATUSES.join(', ')}; got ${JSON.stringify(kycStatus)}.`);
  const smartWallet = seed.smartWallet ?? { address: derivedSmartAccountAddress(owner, 'older-generation') };
  if (typeof smartWallet !== 'object' || smartWallet === null) throw new OlderGenerationUserError('smartWallet must be {"address": "0x…", "chainId"?: "100"}.');
  if (smartWallet.chainId !== undefined && (typeof smartWallet.chainId !== 'string' || !/^[1-9][0-9]*$/.test(smartWallet.chainId))) {
    throw new OlderGenerationUserError(`smartWallet.chainId must be a chain id as a decimal string such as "100"; got ${JSON.stringify(smartWallet.chainId)}.`);
  }
  const profile = seed.profile ?? {};
  if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) throw new OlderGenerationUserError('profile must be an object of User name and address fields.');
  for (const [field, value] of Object.entries(profile)) {
    if (!(PROFILE_FIELDS as readonly string[]).includes(field)) throw new OlderGenerationUserError(`profile.${field} is not carried over; the fields are ${PROFILE_FIELDS.join(', ')}.`);
    if (value !== null && typeof value !== 'string') throw new OlderGenerationUserError(`profile.${field} must be a string or null.`);
  }
  if (seed.email !== undefined && seed.email !== null && typeof seed.email !== 'string') throw new OlderGenerationUserError('email must be a string.');
  return {
    owner,
    smartWallet: { address: address('smartWallet.address', smartWallet.address), chainId: smartWallet.chainId ?? '100' },
    kycStatus,
    isSourceOfFundsAnswered: booleanOr('isSourceOfFundsAnswered', seed.isSourceOfFundsAnswered, true),
    verificationCarriesOver: booleanOr('verificationCarriesOver', seed.verificationCarriesOver, true),
    sourceOfFundsCarriesOver: booleanOr('sourceOfFundsCarriesOver', seed.sourceOfFundsCarriesOver, true),
    profile,
    email: seed.email ?? null,
    state: 'waiting',
  };
}

/**
 * The older generation's users that may still be migrated. There is no migration endpoint
 * and no migrated flag (reference 9): a user is recognised only when the wallet that owns
 * its smart account registers, and never after its email was registered by another wallet.
 */
export class OlderGenerationUsers {
  readonly #byOwner = new Map<string, OlderGenerationUser>();

  add(seed: OlderGenerationUserSeed): OlderGenerationUser {
    const user = completeOlderGenerationUser(seed);
    if (this.#byOwner.has(user.owner.toLowerCase())) throw new OlderGenerationUserError(`An older-generation user owned by ${user.owner} already exists; one smart account per owner.`);
    this.#byOwner.set(user.owner.toLowerCase(), user);
    return structuredClone(user);
  }

  list(): OlderGenerationUser[] {
    return [...this.#byOwner.values()].map((user) => structuredClone(user));
  }

  /** Recognition at registration: the waiting user whose smart account `wallet` owns, now migrated. */
  claim(wallet: string): OlderGenerationUser | undefined {
    const user = this.#byOwner.get(wallet.toLowerCase());
    if (user?.state !== 'waiting') return undefined;
    user.state = 'migrated';
    return structuredClone(user);
  }

  /** A new user registered `email` with an unrecognised wallet: the older user it belonged to can never be migrated. */
  closeByEmail(email: string): void {
    for (const user of this.#byOwner.values()) {
      if (user.state === 'waiting' && user.email?.toLowerCase() === email.toLowerCase()) user.state = 'closed';
    }
  }
}
