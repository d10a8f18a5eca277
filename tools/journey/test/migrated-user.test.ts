// Issue 15, "done when" 2: users of the older generation re-onboard on the newer one
// (reference 3.3 and 9), driven through @capi/client with a real webhook receiver listening.
import type { PartnerClient } from '@capi/client';
import { ConflictError } from '@capi/client';
import { acceptTerms, createAccount, createCard, getOnboardingStatus, registerUser, requestEmailVerification, submitSourceOfFunds, waitForOnboardingStatus } from '@capi/client/onboarding';
import { derivedAddressFor } from './support/addresses.js';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, apiUser, expectNewEvents, lastOneTimePassword, newWallet, signIn, startJourney, type Journey } from './support/journey.js';

// Long enough that only the sandbox clock (moved by the admin API) ends the wait.
const KYC_SETUP_MS = 10 * 60 * 1000;

let journey: Journey;
beforeAll(async () => {
  journey = await startJourney({ migrationKycSetupMs: KYC_SETUP_MS });
});
afterAll(() => journey.close());

async function register(client: PartnerClient, account: PrivateKeyAccount, email: string) {
  await signIn(client, account);
  await requestEmailVerification(client, { email });
  return registerUser(client, { email, otp: await lastOneTimePassword(journey.sandbox, email) });
}

/** Moves the sandbox clock past the carry-over, through the admin API. */
async function endCarryOver() {
  await admin(journey.sandbox, 'POST', '/__sandbox/clock', { advanceSeconds: KYC_SETUP_MS / 1000 + 1 });
}

describe('a migrated user: terms, waiting_kyc_setup, then KYC and source of funds skipped', () => {
  it('is recognised at registration by the wallet that owns its smart account, and carries its verification over', async () => {
    const { sandbox } = journey;
    const { account, client } = newWallet(sandbox);
    const smartWallet = { address: derivedAddressFor('older smart account'), chainId: '100' };
    await admin(sandbox, 'POST', '/__sandbox/older-generation-users', { owner: account.address, smartWallet, email: 'grace@example.com', profile: { firstName: 'Grace', lastName: 'Hopper', country: 'US' } });
    const seen = { count: journey.received.length };

    // Registration is the standard one: there is no migration endpoint and no migrated flag.
    const user = await register(client, account, 'grace@example.com');
    await expectNewEvents(journey, seen, client, ['user.created']);
    expect(await apiUser(client)).toMatchObject({ id: user.id, kycStatus: 'notStarted', isSourceOfFundsAnswered: false, smartWallets: [] });

    // Terms first, always; then the carry-over runs in the background.
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_accept_tos' });
    await acceptTerms(client);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'waiting_kyc_setup' });

    // The partner's app polls until the wait is over; the sandbox clock ends it.
    const waited = waitForOnboardingStatus(client, (status) => status !== 'waiting_kyc_setup', { pollIntervalMs: 20, maxPollIntervalMs: 50 });
    await endCarryOver();
    // KYC and source of funds are skipped: the next step is the account.
    expect(await waited).toEqual({ status: 'action_create_account' });
    // Both sent at once, one per subject: they may arrive in either order.
    await expectNewEvents(journey, seen, client, ['kyc.status.changed', 'kyc.source-of-funds.changed'], { anyOrder: true });
    expect(await apiUser(client)).toMatchObject({ kycStatus: 'approved', isSourceOfFundsAnswered: true, firstName: 'Grace', lastName: 'Hopper', country: 'US' });

    // The account brings back the existing smart account, owned by the same wallet.
    expect(await createAccount(client)).toMatchObject({ smartWallets: [smartWallet], signInWallets: [{ address: account.address }] });
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_create_card' });
    // Without phone verification, the first card sets the phone.
    expect(await createCard(client, { phone: '+15555550142' })).toMatchObject({ phone: '+15555550142', isPhoneValidated: false });
    expect(await getOnboardingStatus(client)).toEqual({ status: 'completed' });
    await expectNewEvents(journey, seen, client, []);
    expect(await client.getDailyLimit()).toMatchObject({ amount: 1_000_000 });
  });
});

describe('the fallback: verification that cannot be carried over', () => {
  it('waits, then continues with the full flow without an error', async () => {
    const { sandbox } = journey;
    const { account, client } = newWallet(sandbox);
    await admin(sandbox, 'POST', '/__sandbox/older-generation-users', { owner: account.address, verificationCarriesOver: false, sourceOfFundsCarriesOver: false });
    const seen = { count: journey.received.length };
    const user = await register(client, account, 'linus@example.com');
    await expectNewEvents(journey, seen, client, ['user.created']);
    await acceptTerms(client);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'waiting_kyc_setup' });
    await endCarryOver();
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_complete_kyc' });
    await expectNewEvents(journey, seen, client, []);

    // The standard flow from here: KYC from the admin API, then source of funds.
    await admin(sandbox, 'PUT', `/__sandbox/users/${user.id}/kyc-status`, { kycStatus: 'approved' });
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_complete_sof' });
    await submitSourceOfFunds(client, { answers: [{ question: 'Main source of income?', answer: 'Savings' }] });
    await expectNewEvents(journey, seen, client, ['kyc.source-of-funds.changed']);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_create_account' });
  });
});

describe('recognition happens only at registration, with the owning wallet', () => {
  it('treats a user registered with an unrecognised wallet as new, and never migrates it later', async () => {
    const { sandbox } = journey;
    const owner = newWallet(sandbox);
    const other = newWallet(sandbox);
    await admin(sandbox, 'POST', '/__sandbox/older-generation-users', { owner: owner.account.address, email: 'carol@example.com' });

    // Another wallet registers the older user's email: a new user, the full flow, no wait.
    await register(other.client, other.account, 'carol@example.com');
    await acceptTerms(other.client);
    expect(await getOnboardingStatus(other.client)).toEqual({ status: 'action_complete_kyc' });

    // The owning wallet cannot take that email (one sign-in wallet per user, fixed)...
    await signIn(owner.client, owner.account);
    await requestEmailVerification(owner.client, { email: 'carol2@example.com' });
    const taken = registerUser(owner.client, { email: 'carol@example.com', otp: '000000' });
    await expect(taken).rejects.toBeInstanceOf(ConflictError);
    await expect(taken).rejects.toMatchObject({ status: 409, code: 'EmailTaken' });
    // ...and registering it now with any email makes a new user: the migration is closed for good.
    await register(owner.client, owner.account, 'carol2@example.com');
    await acceptTerms(owner.client);
    expect(await getOnboardingStatus(owner.client)).toEqual({ status: 'action_complete_kyc' });
    const { olderGenerationUsers } = await admin<{ olderGenerationUsers: { owner: string; state: string }[] }>(sandbox, 'GET', '/__sandbox/older-generation-users');
    expect(olderGenerationUsers.find((older) => older.owner === owner.account.address)?.state).toBe('closed');
  });
});
