// Reference 2.7, 3.1, 4.3, 4.4 and 8: the daily spending limit of onboarded users, through
// @capi/client against the sandbox: what the client refuses before sending, what the service
// refuses, the default, the sync status, one limit per account, and a partner's agreed maximum.
import { createPartnerClient, InvalidArgumentError, ValidationError } from '@capi/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onboardedUser, signIn, startJourney, type Journey } from './support/journey.js';

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
