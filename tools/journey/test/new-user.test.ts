// Issue 15, "done when" 1: a brand-new wallet walks the newer generation from first sign-in
// to card through @capi/client, while a real @capi/webhook-receiver listens.
import { AuthenticationError, ConflictError, ValidationError } from '@capi/client';
import {
  acceptTerms,
  createAccount,
  createCard,
  getOnboardingStatus,
  readTokenClaims,
  registerUser,
  requestEmailVerification,
  requestPhoneVerification,
  setPhone,
  submitSourceOfFunds,
  updatePhone,
} from '@capi/client/onboarding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, apiUser, expectNewEvents, lastOneTimePassword, newWallet, signIn, startJourney, type Journey } from './support/journey.js';

let journey: Journey;
beforeAll(async () => {
  journey = await startJourney({ requirePhone: true });
});
afterAll(() => journey.close());

describe('a brand-new wallet, from first sign-in to card (newer generation, phone verification required)', () => {
  it('signs in, is refused the limit, registers, and goes through every onboarding step in order', async () => {
    const { sandbox } = journey;
    const { account, client } = newWallet(sandbox);
    const seen = { count: 0 };
    const expectStep = async (status: string) => expect(await getOnboardingStatus(client)).toEqual({ status });

    // Sign-in works before registration: the token says so.
    const firstToken = await signIn(client, account);
    expect(readTokenClaims(firstToken)).toMatchObject({ hasSignedUp: false, signerAddress: account.address });
    expect(readTokenClaims(firstToken).userId).toBeUndefined();
    expect(client.tokenManager.hasSignedUp).toBe(false);

    // Reference 5 rule 1 and 7: 401 on the limit, and on the onboarding status (no user to report yet).
    await expect(client.getDailyLimit()).rejects.toBeInstanceOf(AuthenticationError);
    // That 401 means "register first": the client keeps the token, which registration needs,
    // without a new sign-in (no wallet prompt).
    expect(client.tokenManager.hasToken).toBe(true);
    await expect(getOnboardingStatus(client)).rejects.toMatchObject({ name: 'AuthenticationError', code: 'UserNotRegistered' });
    expect(client.tokenManager.hasToken).toBe(true);

    // Registration needs the email's one-time password: a wrong one is refused, nothing is created.
    const email = 'ada@example.com';
    expect(await requestEmailVerification(client, { email })).toEqual({ sentTo: email, expiresAt: expect.any(String) });
    const code = await lastOneTimePassword(sandbox, email);
    const wrong = code === '000000' ? '000001' : '000000';
    await expect(registerUser(client, { email, otp: wrong })).rejects.toBeInstanceOf(ValidationError);
    await expectNewEvents(journey, seen, client, []);
    const registered = await registerUser(client, { email, otp: code });
    await expectNewEvents(journey, seen, client, ['user.created']);
    expect(await apiUser(client)).toEqual(registered);
    expect(registered).toMatchObject({ id: registered.id, email, kycStatus: 'notStarted', signInWallets: [{ address: account.address }], smartWallets: [], cards: [] });

    // Terms: always the first step.
    await expectStep('action_accept_tos');
    const tooEarly = submitSourceOfFunds(client, { answers: [{ question: 'Main source of income?', answer: 'Employment' }] });
    await expect(tooEarly).rejects.toBeInstanceOf(ConflictError);
    await expect(tooEarly).rejects.toMatchObject({ status: 409, code: 'OnboardingStepNotReached' });
    expect(await acceptTerms(client)).toEqual(await apiUser(client));
    await expectStep('action_complete_kyc');
    await expectNewEvents(journey, seen, client, []);

    // KYC: its outcome comes from the admin API; every change is an event.
    await admin(sandbox, 'PUT', `/__sandbox/users/${registered.id}/kyc-status`, { kycStatus: 'pending' });
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    await expectStep('action_complete_kyc');
    await admin(sandbox, 'PUT', `/__sandbox/users/${registered.id}/kyc-status`, { kycStatus: 'approved' });
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    await expectStep('action_complete_sof');

    // Source of funds.
    expect(await submitSourceOfFunds(client, { answers: [{ question: 'Main source of income?', answer: 'Employment' }] })).toMatchObject({ isSourceOfFundsAnswered: true });
    await expectNewEvents(journey, seen, client, ['kyc.source-of-funds.changed']);
    await expectStep('action_create_account');

    // The limit is the account's (reference 4.3): registered, but with no account yet, it is
    // refused (409, the message says to create the account) and a refused set changes nothing.
    for (const call of [() => client.getDailyLimit(), () => client.setDailyLimit({ amount: 100_000 })]) {
      const refused = await call().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConflictError);
      expect(refused).toMatchObject({ status: 409, code: 'OnboardingStepNotReached', message: expect.stringContaining('createAccount()') });
    }
    await expectNewEvents(journey, seen, client, []);

    // Account: the smart account appears; no event kind covers it.
    const withAccount = await createAccount(client);
    expect(withAccount.smartWallets).toHaveLength(1);
    expect(await apiUser(client)).toEqual(withAccount);
    await expectNewEvents(journey, seen, client, []);
    // The account has its limit at once, the default: the refused set left nothing behind.
    expect(await client.getDailyLimit()).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
    await expectStep('action_verify_phone');

    // Phone: the one-time password by SMS validates it, which is an event.
    const phone = '+15555550123';
    await requestPhoneVerification(client, { phone });
    await setPhone(client, { phone, otp: await lastOneTimePassword(sandbox, phone) });
    await expectNewEvents(journey, seen, client, ['kyc.phone-validation.changed']);
    expect(await apiUser(client)).toMatchObject({ phone, isPhoneValidated: true });
    await expectStep('action_create_card');

    // A new number alone is not a validation change: no event.
    const newPhone = '+15555550199';
    await requestPhoneVerification(client, { phone: newPhone });
    expect(await updatePhone(client, { phone: newPhone, otp: await lastOneTimePassword(sandbox, newPhone) })).toMatchObject({ phone: newPhone, isPhoneValidated: true });
    await expectNewEvents(journey, seen, client, []);

    // Card.
    const withCard = await createCard(client, { virtual: true });
    expect(withCard.cards).toEqual([expect.objectContaining({ virtual: true, lastFourDigits: expect.stringMatching(/^[0-9]{4}$/) })]);
    await expectStep('completed');

    // The limit works now, and a new sign-in carries the user's id.
    expect(await client.getDailyLimit()).toMatchObject({ amount: 1_000_000, currency: 'USD' });
    expect(await client.setDailyLimit({ amount: 250_000 })).toMatchObject({ amount: 250_000, syncStatus: 'pending' });
    expect(readTokenClaims(await signIn(client, account))).toMatchObject({ hasSignedUp: true, userId: registered.id });

    // Over the whole journey the receiver saw exactly these events, and nothing was rejected.
    await sandbox.whenDeliveriesSettled();
    expect(journey.received.map((event) => event.eventType)).toEqual(['user.created', 'kyc.status.changed', 'kyc.status.changed', 'kyc.source-of-funds.changed', 'kyc.phone-validation.changed']);
    expect(sandbox.deliveries().every((delivery) => delivery.state === 'succeeded')).toBe(true);
  });
});
