import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CardPaymentError, startSandbox, type Sandbox } from '../src/index.js';
import { MAX_PAYMENT_CENTS } from '../src/limits/card-spending.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { newAccount, tokenFor } from './support/sign-in.js';
import { startPlainReceiver } from './support/webhook-receiver.js';

// Reference 8: the daily limit is cumulative across all cards of the account; an
// authorization that meets or exceeds the remaining limit can still be approved, and later
// eligible authorizations that day are declined. The day is the sandbox clock's UTC day, which
// starts here at 20:00 so that a test can move it into the next day.
const START = Date.UTC(2026, 10, 27, 20, 0, 0);
const card = (id: string) => ({ id, cardToken: `ctk_${id}`, lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: false });

let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startPlainReceiver>>;
// Long enough that a payment made right after a PUT meets the change still pending, on a busy machine too.
const SYNC_MS = 600;

beforeAll(async () => {
  receiver = await startPlainReceiver({ publicKey: () => sandbox.publicKey });
  const realStart = Date.now();
  sandbox = await startSandbox({ generation: 'newer', limitSyncDelayMs: SYNC_MS, webhookUrls: [receiver.url], now: () => START + (Date.now() - realStart) });
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});
afterEach(async () => {
  await sandbox.whenDeliveriesSettled();
});

let userCount = 0;
/** A user with its account (a smart wallet) and two cards. */
function cardHolder() {
  const owner = newAccount();
  userCount += 1;
  const user = sandbox.users.create({
    signInWallets: [owner.address],
    smartWallets: [{ address: newAccount().address, chainId: '100' }],
    cards: [card(`card_a${userCount}`), card(`card_b${userCount}`)],
  });
  return { owner, user, cardA: user.cards[0]!.id, cardB: user.cards[1]!.id };
}

async function setLimitAndWaitForSync(owner: ReturnType<typeof newAccount>, amount: number) {
  const token = await tokenFor(sandbox.baseUrl, owner);
  const put = await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount, currency: 'USD' } });
  expect(put.body).toEqual({ amount, currency: 'USD', syncStatus: 'pending' });
  for (;;) {
    const { body } = await callOperation(sandbox.baseUrl, 'getAccountLimit', { token });
    if (body.syncStatus === 'synced') return token;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('card payments against the daily limit (reference 8)', () => {
  it('counts payments on every card of the account against one limit, approves the one that crosses it, then declines the rest of the day', async () => {
    const { owner, user, cardA, cardB } = cardHolder();
    await setLimitAndWaitForSync(owner, 10_000);

    const first = sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 6_000 });
    expect(first).toMatchObject({ approved: true, declineReason: null, limitInForceCents: 10_000, spentTodayCents: 6_000, remainingTodayCents: 4_000, day: '2026-11-27' });
    // Another card of the same account: the limit is not per card. 5,000 exceeds the 4,000
    // left, and is still approved.
    const crossing = sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: 5_000 });
    expect(crossing).toMatchObject({ approved: true, spentTodayCents: 11_000, remainingTodayCents: 0 });
    // Later ones that day are declined on either card, however small, and not counted.
    const later = sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1 });
    expect(later).toMatchObject({ approved: false, declineReason: 'daily_limit_reached', transactionId: null, spentTodayCents: 11_000 });
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: 1 }).approved).toBe(false);

    const spending = sandbox.dailySpending(user.id);
    expect(spending).toMatchObject({ userId: user.id, day: '2026-11-27', limitInForceCents: 10_000, spentTodayCents: 11_000, remainingTodayCents: 0 });
    expect(spending.authorizations.map((authorization) => [authorization.cardId, authorization.amount, authorization.approved])).toEqual([
      [cardA, 6_000, true],
      [cardB, 5_000, true],
      [cardA, 1, false],
      [cardB, 1, false],
    ]);
  });

  it('approves again on the next UTC day of the sandbox clock', async () => {
    const { owner, user, cardA } = cardHolder();
    await setLimitAndWaitForSync(owner, 1_000);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1_000 }).approved).toBe(true);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1 }).approved).toBe(false);
    const hoursToMidnight = 24 - new Date(sandbox.dailySpending(user.id).authorizations[0]!.createdAt).getUTCHours();
    sandbox.advanceClock(hoursToMidnight * 3_600_000);
    const nextDay = sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 400 });
    expect(nextDay).toMatchObject({ approved: true, spentTodayCents: 400, remainingTodayCents: 600 });
    expect(nextDay.day > '2026-11-27').toBe(true);
    expect(sandbox.dailySpending(user.id).authorizations).toHaveLength(1);
  });

  it('checks against the limit in force: a change still pending does not count until it has synced', async () => {
    const { owner, user, cardA } = cardHolder();
    await setLimitAndWaitForSync(owner, 500);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 500 }).approved).toBe(true);
    // Raised, but not yet applied downstream: still declined under the old limit.
    const token = await tokenFor(sandbox.baseUrl, owner);
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 2_000, currency: 'USD' } });
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 100 })).toMatchObject({ approved: false, limitInForceCents: 500 });
    await setLimitAndWaitForSync(owner, 2_000);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 100 })).toMatchObject({ approved: true, limitInForceCents: 2_000, spentTodayCents: 600, remainingTodayCents: 1_400 });
    // Lowered below the day's total, but still pending: the higher limit still approves.
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 100, currency: 'USD' } });
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 100 })).toMatchObject({ approved: true, limitInForceCents: 2_000, spentTodayCents: 700 });
  });

  it('approves again the same day when the limit is raised above the total after it was reached (the limit in force decides each one)', async () => {
    const { owner, user, cardA } = cardHolder();
    await setLimitAndWaitForSync(owner, 1_000);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1_200 }).approved).toBe(true);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1 }).approved).toBe(false);
    await setLimitAndWaitForSync(owner, 5_000);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1 })).toMatchObject({ approved: true, spentTodayCents: 1_201 });
  });

  it(`takes payments up to ${MAX_PAYMENT_CENTS} cents: the day's total stays exact`, () => {
    const { user, cardA, cardB } = cardHolder();
    sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 6_000 });
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: MAX_PAYMENT_CENTS })).toMatchObject({ approved: true, spentTodayCents: MAX_PAYMENT_CENTS + 6_000 });
    expect(() => sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: MAX_PAYMENT_CENTS + 1 })).toThrow(expect.objectContaining({ code: 'invalid_payment' }));
  });

  it('declines at once when the user lowers the limit below what was spent today', async () => {
    const { owner, user, cardA, cardB } = cardHolder();
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 3_000 })).toMatchObject({ approved: true, limitInForceCents: 1_000_000 });
    await setLimitAndWaitForSync(owner, 2_000);
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: 1 })).toMatchObject({ approved: false, limitInForceCents: 2_000, spentTodayCents: 3_000, remainingTodayCents: 0 });
  });

  it('sends card.transaction.created for each approval, with the payment in its data, and nothing for a decline', async () => {
    const { owner, user, cardA, cardB } = cardHolder();
    await setLimitAndWaitForSync(owner, 2_000);
    await sandbox.whenDeliveriesSettled(); // its user.created
    const before = receiver.received.length;
    const approvedA = sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1_500, merchantName: 'Corner Bakery' });
    const approvedB = sandbox.authorizeCardPayment(user.id, { cardId: cardB, amount: 1_500 });
    sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 10 });
    await sandbox.whenDeliveriesSettled();
    // Deliveries run concurrently: their order is not promised (reference 6.2).
    const events = receiver.received.slice(before).map((delivery) => delivery.event);
    expect(events).toHaveLength(2);
    expect(events).toEqual(expect.arrayContaining([
      { eventType: 'card.transaction.created', data: { id: approvedA.transactionId, userId: user.id, cardId: cardA, amount: 1_500, currency: 'USD', merchantName: 'Corner Bakery', createdAt: approvedA.createdAt } },
      { eventType: 'card.transaction.created', data: { id: approvedB.transactionId, userId: user.id, cardId: cardB, amount: 1_500, currency: 'USD', merchantName: 'Sandbox Merchant', createdAt: approvedB.createdAt } },
    ]));
    expect(approvedA.transactionId).not.toBe(approvedB.transactionId);
  });

  it('does not count a card.transaction.created sent on demand (POST /__sandbox/events): it is an event, not a payment', async () => {
    const { owner, user, cardA } = cardHolder();
    await setLimitAndWaitForSync(owner, 1_000);
    const sent = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/events', { eventType: 'card.transaction.created', userId: user.id });
    expect(sent.status).toBe(202);
    await sandbox.whenDeliveriesSettled();
    expect(sandbox.dailySpending(user.id)).toMatchObject({ spentTodayCents: 0, authorizations: [] });
    expect(sandbox.authorizeCardPayment(user.id, { cardId: cardA, amount: 1_000 })).toMatchObject({ approved: true });
  });

  it.each([
    ['a card of another user', () => {
      const other = cardHolder();
      return { userId: cardHolder().user.id, payment: { cardId: other.cardA, amount: 1 } };
    }, 'unknown_card', /has no card "card_a\d+"; its cards: card_a\d+, card_b\d+/],
    ['a field inherited, not its own (an amount on the prototype)', () => ({ userId: cardHolder().user.id, payment: Object.assign(Object.create({ amount: 7 }), { cardId: `card_a${userCount}` }) }), 'invalid_payment', /amount must be a whole number/],
    ['an unknown user', () => ({ userId: 'usr_nobody', payment: { cardId: 'card_x', amount: 1 } }), 'unknown_user', /No user with id "usr_nobody"/],
    ['amount 0', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: 0 } }), 'invalid_payment', /amount must be a whole number of cents from 1 to/],
    ['a fractional amount', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: 10.5 } }), 'invalid_payment', /got 10.5/],
    ['an amount as a string', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: '100' } }), 'invalid_payment', /got "100"/],
    ['currency EUR', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: 1, currency: 'EUR' } }), 'invalid_payment', /currency must be "USD"/],
    ['a misspelt field', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, ammount: 1 } }), 'invalid_payment', /no field "ammount"/],
    ['an empty merchant name', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: 1, merchantName: ' ' } }), 'invalid_payment', /merchantName must be a non-empty string/],
    ['a merchant name of 5,000 characters (the message repeats 60 at most)', () => ({ userId: cardHolder().user.id, payment: { cardId: `card_a${userCount}`, amount: 1, merchantName: 'x'.repeat(5_000) } }), 'invalid_payment', /^merchantName must be a non-empty string of at most 100 characters; got "x{56}\.\.\.\.$/],
  ])('refuses %s with a typed error, counting and sending nothing', async (_name, make, code, message) => {
    const { userId, payment } = make();
    const deliveries = sandbox.deliveries().length;
    const thrown = (() => {
      try {
        sandbox.authorizeCardPayment(userId, payment as never);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(CardPaymentError);
    expect(thrown).toMatchObject({ code, message: expect.stringMatching(message) });
    if (code !== 'unknown_user') expect(sandbox.dailySpending(userId).authorizations).toEqual([]);
    expect(sandbox.deliveries()).toHaveLength(deliveries);
  });

  it('refuses a user without an account: the limit is the account\'s', () => {
    const user = sandbox.users.create({ signInWallets: [newAccount().address] });
    expect(() => sandbox.authorizeCardPayment(user.id, { cardId: 'card_x', amount: 1 })).toThrow(
      expect.objectContaining({ code: 'account_not_created', message: expect.stringMatching(/has not created the account yet/) }),
    );
  });
});

describe('the admin endpoints', () => {
  it('POST /__sandbox/users/:id/card-payments answers 201 {authorization}; GET .../daily-spending the day so far', async () => {
    const { user, cardA } = cardHolder();
    const paid = await callAdmin(sandbox.baseUrl, 'POST', `/__sandbox/users/${user.id}/card-payments`, { cardId: cardA, amount: 2_500 });
    expect(paid.status).toBe(201);
    expect(paid.body.authorization).toMatchObject({ userId: user.id, cardId: cardA, amount: 2_500, currency: 'USD', approved: true, spentTodayCents: 2_500, remainingTodayCents: 997_500 });
    const spending = await callAdmin(sandbox.baseUrl, 'GET', `/__sandbox/users/${user.id}/daily-spending`);
    expect(spending).toEqual({ status: 200, body: { ...sandbox.dailySpending(user.id) } });
    expect(spending.body.authorizations).toEqual([paid.body.authorization]);
  });

  it.each([
    ['an unknown card', (cardA: string) => ({ cardId: `${cardA}_nope`, amount: 1 }), 404, 'unknown_card'],
    ['a negative amount', (cardA: string) => ({ cardId: cardA, amount: -1 }), 422, 'invalid_payment'],
    ['a body that is a list', () => [1], 422, 'ValidationError'],
  ])('answers %s with %i and its code', async (_name, body, status, code) => {
    const { user, cardA } = cardHolder();
    const response = await callAdmin(sandbox.baseUrl, 'POST', `/__sandbox/users/${user.id}/card-payments`, body(cardA));
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ code, message: expect.any(String) });
    expect(sandbox.dailySpending(user.id).authorizations).toEqual([]);
  });

  it('answers 404 unknown_user and 409 account_not_created', async () => {
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/users/usr_nobody/card-payments', { cardId: 'c', amount: 1 })).toMatchObject({ status: 404, body: { code: 'unknown_user' } });
    const user = sandbox.users.create({ signInWallets: [newAccount().address] });
    expect(await callAdmin(sandbox.baseUrl, 'GET', `/__sandbox/users/${user.id}/daily-spending`)).toMatchObject({ status: 409, body: { code: 'account_not_created' } });
  });
});

describe('on the older generation', () => {
  it('refuses card payments with older_generation (404): its limit is onchain, which the sandbox does not model', async () => {
    const older = await startSandbox({ generation: 'older' });
    try {
      const user = older.users.create({ signInWallets: [newAccount().address], smartWallets: [{ address: newAccount().address, chainId: '100' }], cards: [card('card_old')] });
      expect(() => older.authorizeCardPayment(user.id, { cardId: 'card_old', amount: 1 })).toThrow(expect.objectContaining({ code: 'older_generation' }));
      expect(await callAdmin(older.baseUrl, 'POST', `/__sandbox/users/${user.id}/card-payments`, { cardId: 'card_old', amount: 1 })).toMatchObject({ status: 404, body: { code: 'older_generation' } });
    } finally {
      await older.close();
    }
  });
});
