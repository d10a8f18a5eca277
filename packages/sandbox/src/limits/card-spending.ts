import { randomUUID } from 'node:crypto';
import type { User } from '../users/user.js';
import type { LimitStore } from './limit-store.js';

/**
 * Why {@link CardSpending} refused a card payment: `unknown_user` and `unknown_card` (404 on
 * the admin API), `account_not_created` (409: the limit is the account's), `invalid_payment`
 * (422: the message names the field), `older_generation` (404: the older generation's limit is
 * onchain, which the sandbox does not model).
 *
 * @example
 * ```ts
 * const code: CardPaymentErrorCode = 'unknown_card';
 * ```
 */
export type CardPaymentErrorCode = 'unknown_user' | 'unknown_card' | 'account_not_created' | 'invalid_payment' | 'older_generation';

/**
 * Thrown by `sandbox.authorizeCardPayment` and `sandbox.dailySpending` (and answered by their
 * admin endpoints) for a payment the sandbox cannot simulate. Nothing is counted or sent.
 *
 * @example
 * ```ts
 * try { sandbox.authorizeCardPayment(user.id, { cardId: 'card_x', amount: 500 }); }
 * catch (error) { if (error instanceof CardPaymentError) console.error(error.code, error.message); }
 * ```
 */
export class CardPaymentError extends Error {
  override readonly name = 'CardPaymentError';
  constructor(
    readonly code: CardPaymentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A simulated card payment: what the card network asks the platform to approve.
 *
 * @example
 * ```ts
 * const payment: CardPaymentRequest = { cardId: user.cards[0].id, amount: 12_50, merchantName: 'Coffee' };
 * ```
 */
export interface CardPaymentRequest {
  /** One of the user's cards (`user.cards[n].id`). */
  cardId: string;
  /** In cents of USD: a whole number > 0. */
  amount: number;
  /** Only `USD` (the default), as for the limit. */
  currency?: string;
  /** Shown in the `card.transaction.created` event's data; default `Sandbox Merchant`. */
  merchantName?: string;
}

/**
 * The platform's answer to a card payment, checked against the account's daily limit
 * (reference 8): the limit is cumulative across every card of the account; an authorization
 * is approved while the day's approved total is below the limit in force, even one that meets
 * or exceeds what remains; once the total reaches the limit, later ones that day are declined.
 *
 * @example
 * ```ts
 * const { approved, remainingTodayCents } = sandbox.authorizeCardPayment(user.id, { cardId, amount: 500 });
 * ```
 */
export interface CardAuthorization {
  /** `auth_sandbox_<uuid>`. */
  id: string;
  userId: string;
  cardId: string;
  amount: number;
  currency: 'USD';
  merchantName: string;
  approved: boolean;
  /** Why it was declined: `daily_limit_reached`; `null` when approved. */
  declineReason: 'daily_limit_reached' | null;
  /** When it was asked, on the sandbox clock (ISO 8601). */
  createdAt: string;
  /** The UTC day it counts against (`YYYY-MM-DD`, the sandbox clock's). */
  day: string;
  /** The limit it was checked against: the one in force, not a change still `pending`. */
  limitInForceCents: number;
  /** The day's approved total, this authorization included when approved. */
  spentTodayCents: number;
  /** What remains of the day's limit after it (0 once the limit is reached or exceeded). */
  remainingTodayCents: number;
  /** The `data.id` of the `card.transaction.created` event an approval sent; `null` when declined (no event). */
  transactionId: string | null;
}

/**
 * An account's card spending on the current UTC day of the sandbox clock.
 *
 * @example
 * ```ts
 * const { spentTodayCents, authorizations } = sandbox.dailySpending(user.id);
 * ```
 */
export interface DailySpending {
  userId: string;
  day: string;
  limitInForceCents: number;
  spentTodayCents: number;
  remainingTodayCents: number;
  /** The day's authorizations, approved and declined, oldest first. */
  authorizations: CardAuthorization[];
}

/** What an approved authorization sends: the data of its `card.transaction.created` event, whose `id` is the authorization's `transactionId`. */
export type CardTransaction = Pick<CardAuthorization, 'userId' | 'cardId' | 'amount' | 'currency' | 'merchantName' | 'createdAt'> & { id: string };

interface DayRecord {
  day: string;
  spentCents: number;
  authorizations: CardAuthorization[];
}

const MAX_MERCHANT_NAME_LENGTH = 100;
/** The largest payment, in cents (10 billion USD): the day's total stays a safe integer. */
export const MAX_PAYMENT_CENTS = 1_000_000_000_000;
const PAYMENT_FIELDS: readonly string[] = ['cardId', 'amount', 'currency', 'merchantName'];

/** The UTC calendar day of an instant: the spec's `x-assumption` on where a day ends. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Card payments of each account against its daily limit (reference 8), on the sandbox
 * clock's UTC days. An approval sends `card.transaction.created` (through `onTransaction`); a
 * decline sends nothing and is not counted.
 */
export class CardSpending {
  readonly #days = new Map<string, DayRecord>();

  constructor(
    private readonly deps: {
      users: { get(id: string): User | undefined; hasSmartAccount(id: string): boolean };
      limits: Pick<LimitStore, 'inForce'>;
      /** The limit the sandbox models is the newer generation's; the older one's is onchain. */
      generation: 'older' | 'newer';
      now: () => number;
      onTransaction: (transaction: CardTransaction) => void;
    },
  ) {}

  authorize(userId: string, request: CardPaymentRequest): CardAuthorization {
    const user = this.#accountHolder(userId);
    const { cardId, amount, currency, merchantName } = readPaymentRequest(request);
    if (!user.cards.some((card) => card.id === cardId)) {
      const cards = user.cards.map((card) => card.id);
      throw new CardPaymentError(
        'unknown_card',
        `User ${JSON.stringify(userId)} has no card ${quoted(cardId)}; ${cards.length === 0 ? 'the user has no card yet (onboarding creates one: POST /cards)' : `its cards: ${cards.join(', ')}`}.`,
      );
    }
    const now = this.deps.now();
    const record = this.#today(userId, now);
    const limit = this.deps.limits.inForce(userId);
    // Reference 8: approved while the day's total is below the limit, even when this one meets
    // or exceeds what remains; once the total has reached the limit, declined for the day.
    const approved = record.spentCents < limit;
    const spentTodayCents = approved ? record.spentCents + amount : record.spentCents;
    const createdAt = new Date(now).toISOString();
    const transactionId = approved ? `txn_sandbox_${randomUUID()}` : null;
    const authorization: CardAuthorization = {
      id: `auth_sandbox_${randomUUID()}`,
      userId,
      cardId,
      amount,
      currency,
      merchantName,
      approved,
      declineReason: approved ? null : 'daily_limit_reached',
      createdAt,
      day: record.day,
      limitInForceCents: limit,
      spentTodayCents,
      remainingTodayCents: Math.max(0, limit - spentTodayCents),
      transactionId,
    };
    // Sent before it counts: should sending fail, nothing is counted either.
    if (transactionId !== null) this.deps.onTransaction({ id: transactionId, userId, cardId, amount, currency, merchantName, createdAt });
    record.spentCents = spentTodayCents;
    record.authorizations.push(authorization);
    return { ...authorization };
  }

  spending(userId: string): DailySpending {
    this.#accountHolder(userId);
    const record = this.#today(userId, this.deps.now());
    const limit = this.deps.limits.inForce(userId);
    return {
      userId,
      day: record.day,
      limitInForceCents: limit,
      spentTodayCents: record.spentCents,
      remainingTodayCents: Math.max(0, limit - record.spentCents),
      authorizations: record.authorizations.map((authorization) => ({ ...authorization })),
    };
  }

  #accountHolder(userId: string): User {
    if (this.deps.generation !== 'newer') {
      throw new CardPaymentError('older_generation', "Card payments are checked against the account's daily limit, which the sandbox models for the newer generation only (the older generation's user sets it onchain); start the sandbox with --generation newer.");
    }
    const user = this.deps.users.get(userId);
    if (user === undefined) throw new CardPaymentError('unknown_user', `No user with id ${JSON.stringify(userId)}; list them with GET /__sandbox/users.`);
    if (!this.deps.users.hasSmartAccount(userId)) {
      throw new CardPaymentError('account_not_created', `Card payments count against the account's daily limit, and user ${JSON.stringify(userId)} has not created the account yet; finish onboarding up to createAccount() and a card first.`);
    }
    return user;
  }

  /** The account's record of the current day; a new day starts from nothing. */
  #today(userId: string, now: number): DayRecord {
    const day = utcDay(now);
    let record = this.#days.get(userId);
    if (record === undefined || record.day !== day) {
      record = { day, spentCents: 0, authorizations: [] };
      this.#days.set(userId, record);
    }
    return record;
  }
}

function readPaymentRequest(request: CardPaymentRequest): Required<CardPaymentRequest> & { currency: 'USD' } {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new CardPaymentError('invalid_payment', 'Send a payment as {cardId, amount, currency?, merchantName?}.');
  }
  const unknown = Object.keys(request).filter((key) => !PAYMENT_FIELDS.includes(key));
  if (unknown.length > 0) throw new CardPaymentError('invalid_payment', `A payment has no field ${unknown.map((key) => JSON.stringify(key)).join(', ')}; send {cardId, amount, currency?, merchantName?}.`);
  // Own fields only: a field inherited from a prototype is not part of the payment.
  const field = (name: string): unknown => (Object.hasOwn(request, name) ? (request as unknown as Record<string, unknown>)[name] : undefined);
  const cardId = field('cardId');
  const amount = field('amount');
  const currency = field('currency') ?? 'USD';
  const merchantName = field('merchantName') ?? 'Sandbox Merchant';
  if (typeof cardId !== 'string' || cardId === '') throw new CardPaymentError('invalid_payment', `cardId must be one of the user's card ids; got ${quoted(cardId)}.`);
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0 || amount > MAX_PAYMENT_CENTS) {
    throw new CardPaymentError('invalid_payment', `amount must be a whole number of cents from 1 to ${MAX_PAYMENT_CENTS} (1250 is 12.50 USD); got ${quoted(amount)}.`);
  }
  if (currency !== 'USD') throw new CardPaymentError('invalid_payment', `currency must be "USD", the only currency of the limit; got ${quoted(currency)}.`);
  if (typeof merchantName !== 'string' || merchantName.trim() === '' || merchantName.length > MAX_MERCHANT_NAME_LENGTH) {
    throw new CardPaymentError('invalid_payment', `merchantName must be a non-empty string of at most ${MAX_MERCHANT_NAME_LENGTH} characters; got ${quoted(merchantName)}.`);
  }
  return { cardId, amount, currency, merchantName };
}

/** A value as JSON for a message, cut at 60 characters: an error never repeats a whole hostile input. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
