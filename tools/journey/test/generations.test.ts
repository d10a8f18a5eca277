// Reference 5 rules 1 and 8, 4.7 and 9: the two generations side by side. The older
// generation's users sign in with their ttlInSeconds and verify their phone by SMS, and set
// their daily limit onchain (no limit endpoint: service facts); each generation's operations
// exist only on it; existing users of the newer generation sign in next to brand-new ones.
// Through @capi/client, with the receiver listening.
import { AuthenticationError, NotFoundError } from '@capi/client';
import { checkLegacyPhoneVerification, getOnboardingStatus, readTokenClaims, registerUser, requestEmailVerification, requestLegacyPhoneVerification, requestPhoneVerification } from '@capi/client/onboarding';
import type { User } from '@capi/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { admin, apiUser, lastOneTimePassword, newWallet, signIn, startJourney, type Journey } from './support/journey.js';

let journey: Journey | undefined;
afterEach(async () => {
  await journey?.close();
  journey = undefined;
});

/** The events the receiver got since `count`, once every delivery has settled. */
async function eventsSince(count: number) {
  await journey!.sandbox.whenDeliveriesSettled();
  return journey!.received.slice(count);
}

describe('older generation: an existing user verifies the phone by SMS one-time password (reference 4.7 and 9)', () => {
  it('the check answers the User with the phone validated, and the one event carries that same User', async () => {
    const wallet = newWallet(await startOlder());
    const { sandbox } = journey!;
    const seeded = admin<User>(sandbox, 'POST', '/__sandbox/users', { signInWallets: [wallet.account.address], email: 'older@example.com' });
    const { id } = await seeded;
    const before = journey!.received.length;
    const token = await signIn(wallet.client, wallet.account);
    expect(readTokenClaims(token)).toMatchObject({ hasSignedUp: true, userId: id });

    const phone = '+15555550177';
    expect(await requestLegacyPhoneVerification(wallet.client, { phone })).toEqual({ sentTo: phone, expiresAt: expect.any(String) });
    const checked = await checkLegacyPhoneVerification(wallet.client, { phone, otp: await lastOneTimePassword(sandbox, phone) });
    expect(checked).toMatchObject({ id, phone, isPhoneValidated: true });
    const events = await eventsSince(before);
    // user.created came from the admin API (the platform's side); the check brought the validation event.
    expect(events.map((event) => event.eventType)).toEqual(['user.created', 'kyc.phone-validation.changed']);
    expect(events[1]!.data).toEqual(checked);
    expect(await admin<User>(sandbox, 'GET', `/__sandbox/users/${id}`)).toEqual(checked);
  });

  it('the daily limit does not exist there (the user sets it onchain): NotFoundError saying so, for get, set and wait', async () => {
    const wallet = newWallet(await startOlder());
    await admin(journey!.sandbox, 'POST', '/__sandbox/users', { signInWallets: [wallet.account.address] });
    await signIn(wallet.client, wallet.account);
    for (const call of [() => wallet.client.getDailyLimit(), () => wallet.client.setDailyLimit({ amount: 100_000 }), () => wallet.client.waitForLimitSync({ timeoutMs: 1_000 })]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NotFound', message: expect.stringContaining('The daily limit is a newer-generation operation; on the older generation the user sets it onchain') });
    }
  });

  it('a wallet that owns no account gets a token (hasSignedUp: false) and 401 on the authenticated routes (reference 5 rule 1)', async () => {
    const stranger = newWallet(await startOlder());
    const token = await signIn(stranger.client, stranger.account);
    expect(readTokenClaims(token)).toMatchObject({ hasSignedUp: false });
    expect(readTokenClaims(token).userId).toBeUndefined();
    await expect(requestLegacyPhoneVerification(stranger.client, { phone: '+15555550178' })).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("the newer generation's onboarding does not exist there: NotFoundError", async () => {
    const wallet = newWallet(await startOlder());
    await admin(journey!.sandbox, 'POST', '/__sandbox/users', { signInWallets: [wallet.account.address] });
    await signIn(wallet.client, wallet.account);
    await expect(getOnboardingStatus(wallet.client)).rejects.toBeInstanceOf(NotFoundError);
    await expect(requestPhoneVerification(wallet.client, { phone: '+15555550179' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('newer generation: existing users next to brand-new ones', () => {
  it("the older generation's SMS verification does not exist there: NotFoundError", async () => {
    journey = await startJourney({});
    const wallet = newWallet(journey.sandbox);
    await signIn(wallet.client, wallet.account);
    await expect(requestLegacyPhoneVerification(wallet.client, { phone: '+15555550180' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an existing user signs in with its userId and is at the step its fields give; a new wallet registers beside it', async () => {
    const existing = newWallet((journey = await startJourney({})).sandbox);
    const { sandbox } = journey;
    const created = await admin<User>(sandbox, 'POST', '/__sandbox/users', { signInWallets: [existing.account.address], email: 'existing@example.com', kycStatus: 'approved', isSourceOfFundsAnswered: true });
    expect(readTokenClaims(await signIn(existing.client, existing.account))).toMatchObject({ hasSignedUp: true, userId: created.id });
    expect(await apiUser(existing.client)).toEqual(created);
    expect(await getOnboardingStatus(existing.client)).toEqual({ status: 'action_create_account' });

    const fresh = newWallet(sandbox);
    await signIn(fresh.client, fresh.account);
    await requestEmailVerification(fresh.client, { email: 'fresh@example.com' });
    const user = await registerUser(fresh.client, { email: 'fresh@example.com', otp: await lastOneTimePassword(sandbox, 'fresh@example.com') });
    expect(user.signInWallets).toEqual([{ address: fresh.account.address }]);
    expect(await getOnboardingStatus(fresh.client)).toEqual({ status: 'action_accept_tos' });
    // Each token reaches its own user only.
    expect((await apiUser(existing.client)).id).toBe(created.id);
    expect((await apiUser(fresh.client)).id).toBe(user.id);
  });
});

async function startOlder() {
  journey = await startJourney({ generation: 'older' });
  return journey.sandbox;
}
