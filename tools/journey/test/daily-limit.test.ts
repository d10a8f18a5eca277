// Reference 2.7, 3.1, 4.3, 4.4 and 8: the daily spending limit of onboarded users, through
// @capi/client against the sandbox: what the client refuses before sending, what the service
// refuses, the default, the sync status, one limit per account, a partner's agreed maximum, and
// the limit at work on the user's card payments (the sandbox's simulated card network).
import { createPartnerClient, InvalidArgumentError, ValidationError } from '@capi/client';
import { createCard } from '@capi/client/onboarding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, onboardedUser, signIn, startJourney, type Journey } from './support/journey.js';

describe('the standard maximum (reference 4.4 and 8)', () => {
  let journey: Journey;
  beforeAll(async () => {
    journey = await startJourney({});
  });
  afterAll(() => journey.close());

  it('starts at the default 1,000,000 cents, USD, synced; a lower limit is pending at once, then synced', async () => {
    const { client } = await onboardedUser(journey, 'limit-default@example.com');
    expect(await client.getDailyLimit()).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
    // Users may lower the limit for their own account.
    expect(await client.setDailyLimit({ amount: 250_000 })).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'pending' });
    expect(await client.waitForLimitSync({ pollIntervalMs: 20 })).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'synced' });
  });

  it('accepts the bounds 1 and 1,000,000; refuses 0, a fraction, above 1,000,000 and another currency before sending anything', async () => {
    const { client } = await onboardedUser(journey, 'limit-range@example.com');
    for (const amount of [1, 1_000_000]) expect(await client.setDailyLimit({ amount })).toMatchObject({ amount, syncStatus: 'pending' });
    for (const params of [{ amount: 0 }, { amount: -5 }, { amount: 10.5 }, { amount: 1_000_001 }, { amount: 100, currency: 'EUR' }]) {
      await expect(client.setDailyLimit(params as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect((await client.getDailyLimit()).amount).toBe(1_000_000);
  });

  it('is one limit per account: another user is not affected', async () => {
    const first = await onboardedUser(journey, 'limit-first@example.com');
    const second = await onboardedUser(journey, 'limit-second@example.com');
    await first.client.setDailyLimit({ amount: 50_000 });
    expect((await first.client.getDailyLimit()).amount).toBe(50_000);
    expect((await second.client.getDailyLimit()).amount).toBe(1_000_000);
  });
});

describe("a partner's agreed maximum (reference 8: 10,000 USD unless agreed at onboarding)", () => {
  let journey: Journey;
  beforeAll(async () => {
    journey = await startJourney({ maxDailyLimitCents: 2_500_000 });
  });
  afterAll(() => journey.close());

  it('a client told the agreed maximum sets up to it; above it the service answers 422 even when the client lets it through', async () => {
    const { account } = await onboardedUser(journey, 'limit-agreed@example.com');
    const agreed = createPartnerClient({ baseUrl: journey.sandbox.baseUrl, maxDailyLimitCents: 2_500_000 });
    await signIn(agreed, account);
    expect(await agreed.setDailyLimit({ amount: 2_500_000 })).toMatchObject({ amount: 2_500_000, syncStatus: 'pending' });
    await expect(agreed.setDailyLimit({ amount: 2_500_001 })).rejects.toBeInstanceOf(InvalidArgumentError);

    // A client configured with more than the partner agreed: the service is the judge.
    const generous = createPartnerClient({ baseUrl: journey.sandbox.baseUrl, maxDailyLimitCents: 5_000_000 });
    await signIn(generous, account);
    const refused = await generous.setDailyLimit({ amount: 3_000_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ status: 422 });
    expect((await generous.getDailyLimit()).amount).toBe(2_500_000);

    // A client left at the standard maximum refuses the agreed amounts locally.
    const standard = createPartnerClient({ baseUrl: journey.sandbox.baseUrl });
    await signIn(standard, account);
    await expect(standard.setDailyLimit({ amount: 2_000_000 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('the limit at work on card payments (reference 8: cumulative across cards; the authorization near the limit)', () => {
  let journey: Journey;
  beforeAll(async () => {
    // The sandbox clock starts at the next noon UTC (ahead of the real clock, as after an
    // advanceClock), so that the day's payments never straddle midnight.
    const realStart = Date.now();
    const noon = new Date(realStart);
    noon.setUTCHours(12, 0, 0, 0);
    if (noon.getTime() <= realStart) noon.setUTCDate(noon.getUTCDate() + 1);
    journey = await startJourney({ now: () => noon.getTime() + (Date.now() - realStart) });
  });
  afterAll(() => journey.close());

  it("the user's limit, set through the client, decides the day's card payments on both cards; each approval reaches the receiver as card.transaction.created, a decline does not, and the next day starts afresh", async () => {
    const { account, client, user } = await onboardedUser(journey, 'limit-cards@example.com');
    const second = await createCard(client, { virtual: true });
    const [cardA, cardB] = second.cards.map((card) => card.id);
    expect(second.cards).toHaveLength(2);

    await client.setDailyLimit({ amount: 10_000 });
    const inForce = await client.waitForLimitSync({ amount: 10_000, pollIntervalMs: 20 });
    const pay = async (cardId: string, amount: number) =>
      (await admin(journey.sandbox, 'POST', `/__sandbox/users/${user.id}/card-payments`, { cardId, amount })).authorization;

    const first = await pay(cardA!, 6_000);
    const crossing = await pay(cardB!, 5_000); // more than the 4,000 left: still approved
    const declinedA = await pay(cardA!, 100);
    const declinedB = await pay(cardB!, 1);
    expect([first, crossing, declinedA, declinedB].map((payment) => [payment.approved, payment.spentTodayCents])).toEqual([
      [true, 6_000],
      [true, 11_000],
      [false, 11_000],
      [false, 11_000],
    ]);
    // What the platform decided against is what the client reads.
    const spending = await admin(journey.sandbox, 'GET', `/__sandbox/users/${user.id}/daily-spending`);
    expect(spending).toMatchObject({ limitInForceCents: inForce.amount, spentTodayCents: 11_000, remainingTodayCents: 0 });

    await journey.sandbox.whenDeliveriesSettled();
    expect(journey.transactions).toEqual([
      { id: first.transactionId, userId: user.id, cardId: cardA, amount: 6_000, currency: 'USD', merchantName: 'Sandbox Merchant', createdAt: first.createdAt },
      { id: crossing.transactionId, userId: user.id, cardId: cardB, amount: 5_000, currency: 'USD', merchantName: 'Sandbox Merchant', createdAt: crossing.createdAt },
    ]);

    // The next UTC day (the sandbox clock): the user signs in again (the token has expired
    // meanwhile), the limit is the same, and payments are approved again.
    const hoursLeft = 24 - new Date(spending.authorizations[0].createdAt).getUTCHours();
    journey.sandbox.advanceClock(hoursLeft * 3_600_000);
    await signIn(client, account);
    expect(await client.getDailyLimit()).toEqual({ amount: 10_000, currency: 'USD', syncStatus: 'synced' });
    expect(await pay(cardB!, 9_000)).toMatchObject({ approved: true, spentTodayCents: 9_000, remainingTodayCents: 1_000 });
    await journey.sandbox.whenDeliveriesSettled();
    expect(journey.transactions.map((transaction) => transaction.amount)).toEqual([6_000, 5_000, 9_000]);
  });
});
