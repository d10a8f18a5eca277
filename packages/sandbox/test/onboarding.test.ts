// The newer generation's onboarding rules that the journeys (tools/journey) do not walk:
// generations, the single owner, events only for the changes they name, one-time passwords,
// the partner's agreed maximum daily limit, and a migrated user's wait, which starts at the terms.
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxConfigError, startSandbox, type Sandbox } from '../src/index.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { newAccount, tokenFor } from './support/sign-in.js';

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
});
async function start(options: Parameters<typeof startSandbox>[0]): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  sandboxes.push(sandbox);
  return sandbox;
}

async function rawCall(sandbox: Sandbox, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(sandbox.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('answers each operation only on its generation (x-generation)', () => {
  it('the older-only SMS verification is a 404 under newer, the newer registration a 404 under older', async () => {
    const account = newAccount();
    const [older, newer] = await Promise.all([
      start({ users: [{ signInWallets: [account.address] }] }),
      start({ generation: 'newer', users: [{ signInWallets: [account.address] }] }),
    ]);
    const onNewer = await rawCall(newer, 'POST', '/api/v1/verification', await tokenFor(newer.baseUrl, account), { phone: '+15555550123' });
    expect(onNewer).toMatchObject({ status: 404, body: { code: 'NotFound', message: expect.stringMatching(/only on the older generation.*--generation older/) } });
    const onOlder = await rawCall(older, 'POST', '/user', await tokenFor(older.baseUrl, account), { email: 'ada@example.com', otp: '123456' });
    expect(onOlder).toMatchObject({ status: 404, body: { code: 'NotFound', message: expect.stringMatching(/only on the newer generation/) } });
    expect((await rawCall(older, 'GET', '/user/onboarding', await tokenFor(older.baseUrl, account))).status).toBe(404);
  });
});

describe('a wallet without a user gets 401 UserNotRegistered on every route but the registration (reference 5 rule 1 and 7)', () => {
  it('the onboarding status too, and then, once registered, its first step', async () => {
    const newer = await start({ generation: 'newer', users: [] });
    const account = newAccount();
    const token = await tokenFor(newer.baseUrl, account);
    for (const operationId of ['getOnboardingStatus', 'getUser']) {
      expect(await callOperation(newer.baseUrl, operationId, { token })).toMatchObject({ status: 401, body: { code: 'UserNotRegistered' } });
    }
    const email = 'new.user@example.com';
    await callOperation(newer.baseUrl, 'requestEmailVerification', { token, body: { email } });
    const otp = newer.oneTimePasswords().findLast((sent) => sent.sentTo === email)!.code;
    expect((await callOperation(newer.baseUrl, 'registerUser', { token, body: { email, otp } })).status).toBe(200);
    expect(await callOperation(newer.baseUrl, 'getOnboardingStatus', { token })).toMatchObject({ status: 200, body: { status: 'action_accept_tos' } });
  });
});

describe('one owner, fixed, on the newer generation (reference 5 rule 8)', () => {
  it('refuses a user with two sign-in wallets, from the options and from the admin API', async () => {
    const [first, second] = [newAccount(), newAccount()];
    await expect(startSandbox({ generation: 'newer', users: [{ signInWallets: [first.address, second.address] }] })).rejects.toThrow(SandboxConfigError);
    const newer = await start({ generation: 'newer', users: [] });
    const refused = await callAdmin(newer.baseUrl, 'POST', '/__sandbox/users', { signInWallets: [first.address, second.address] });
    expect(refused).toMatchObject({ status: 422, body: { code: 'invalid_user', message: expect.stringMatching(/one sign-in wallet per user/) } });
    // The older generation still allows several.
    const older = await start({ users: [{ signInWallets: [first.address, second.address] }] });
    expect(older.users.findByWallet(second.address)).toBeDefined();
  });

  it('refuses a second wallet registering the same email with the 409 the spec names', async () => {
    const newer = await start({ generation: 'newer', users: [] });
    const [first, second] = [newAccount(), newAccount()];
    for (const [account, expected] of [[first, 200], [second, 409]] as const) {
      const token = await tokenFor(newer.baseUrl, account);
      const sent = await callOperation(newer.baseUrl, 'requestEmailVerification', { token, body: { email: 'ada@example.com' } });
      if (expected === 409) {
        expect(sent).toMatchObject({ status: 409, body: { code: 'EmailTaken' } });
        continue;
      }
      const otp = newer.oneTimePasswords().at(-1)!.code;
      expect((await callOperation(newer.baseUrl, 'registerUser', { token, body: { email: 'ada@example.com', otp } })).status).toBe(expected);
    }
  });
});

describe('emits kyc.phone-validation.changed only when the validation changes', () => {
  it('a new number alone, through the admin API, emits nothing', async () => {
    const newer = await start({ generation: 'newer', users: [] });
    const user = newer.users.create({ signInWallets: [newAccount().address] });
    const sent = () => newer.deliveries().map((delivery) => delivery.eventType).filter((eventType) => eventType === 'kyc.phone-validation.changed');
    // An endpoint, so that each event shows in the delivery log (its deliveries fail: nothing listens).
    newer.addWebhookEndpoint('http://127.0.0.1:9/unreachable');
    const numberOnly = await callAdmin(newer.baseUrl, 'PUT', `/__sandbox/users/${user.id}/phone-validation`, { isPhoneValidated: false, phone: '+15555550123' });
    expect(numberOnly.body).toMatchObject({ eventEmitted: false, user: { phone: '+15555550123' } });
    expect(sent()).toEqual([]);
    const validated = await callAdmin(newer.baseUrl, 'PUT', `/__sandbox/users/${user.id}/phone-validation`, { isPhoneValidated: true });
    expect(validated.body).toMatchObject({ eventEmitted: true, user: { isPhoneValidated: true } });
    expect(sent()).toEqual(['kyc.phone-validation.changed']);
  });
});

describe('one-time passwords', () => {
  it('a wrong code leaves the password usable; an expired one is refused; a used one cannot be reused', async () => {
    const newer = await start({ generation: 'newer', users: [] });
    const account = newAccount();
    const token = await tokenFor(newer.baseUrl, account);
    const register = (otp: string) => callOperation(newer.baseUrl, 'registerUser', { token, body: { email: 'ada@example.com', otp } });
    expect((await register('123456')).body).toMatchObject({ code: 'InvalidOneTimePassword' });
    await callOperation(newer.baseUrl, 'requestEmailVerification', { token, body: { email: 'ada@example.com' } });
    const code = newer.oneTimePasswords().at(-1)!.code;
    expect((await register(code === '999999' ? '999998' : '999999')).status).toBe(422);
    newer.advanceClock(10 * 60 * 1000 + 1);
    const fresh = await tokenFor(newer.baseUrl, account);
    expect((await callOperation(newer.baseUrl, 'registerUser', { token: fresh, body: { email: 'ada@example.com', otp: code } })).body).toMatchObject({ code: 'InvalidOneTimePassword' });
    await callOperation(newer.baseUrl, 'requestEmailVerification', { token: fresh, body: { email: 'ada@example.com' } });
    const second = newer.oneTimePasswords().at(-1)!.code;
    expect((await callOperation(newer.baseUrl, 'registerUser', { token: fresh, body: { email: 'ADA@example.com', otp: second } })).status).toBe(200);
    expect(newer.users.onboardingStatus(newer.users.findByWallet(account.address)!.id)).toBe('action_accept_tos');
  });
});

describe("the partner's agreed maximum daily limit (maxDailyLimitCents)", () => {
  it('accepts amounts up to the agreed maximum and refuses above it; the default stays 1,000,000', async () => {
    const account = newAccount();
    // The limit is the newer generation's; the user has its account (a smart wallet).
    const users = [{ signInWallets: [account.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }];
    const [agreed, standard] = await Promise.all([start({ generation: 'newer', users, maxDailyLimitCents: 2_500_000 }), start({ generation: 'newer', users })]);
    const put = async (sandbox: Sandbox, amount: number) => callOperation(sandbox.baseUrl, 'setAccountLimit', { token: await tokenFor(sandbox.baseUrl, account), body: { amount, currency: 'USD' } });
    expect((await put(agreed, 2_500_000)).status).toBe(200);
    const above = await put(agreed, 2_500_001);
    expect(above.status).toBe(422);
    expect(above.body.message).toMatch(/from 1 to 2500000/);
    expect((await put(standard, 1_000_001)).status).toBe(422);
  });

  it('an agreed maximum below 1,000,000 is also the default: GET reads it, and PUT of that amount is accepted', async () => {
    const account = newAccount();
    const users = [{ signInWallets: [account.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }];
    const lower = await start({ generation: 'newer', users, maxDailyLimitCents: 500_000 });
    const token = await tokenFor(lower.baseUrl, account);
    expect((await callOperation(lower.baseUrl, 'getAccountLimit', { token })).body).toEqual({ amount: 500_000, currency: 'USD', syncStatus: 'synced' });
    expect((await callAdmin(lower.baseUrl, 'GET', '/__sandbox')).body).toMatchObject({ maxDailyLimitCents: 500_000, defaultDailyLimitCents: 500_000 });
    // What it reads can be set again; 1,000,000 (the usual default) is above this partner's maximum.
    expect((await callOperation(lower.baseUrl, 'setAccountLimit', { token, body: { amount: 500_000, currency: 'USD' } })).status).toBe(200);
    const above = await callOperation(lower.baseUrl, 'setAccountLimit', { token, body: { amount: 1_000_000, currency: 'USD' } });
    expect(above.status).toBe(422);
    expect(above.body.message).toMatch(/from 1 to 500000/);
    // A maximum above 1,000,000 leaves the default at 1,000,000.
    const higher = await start({ generation: 'newer', users, maxDailyLimitCents: 2_500_000 });
    expect((await callOperation(higher.baseUrl, 'getAccountLimit', { token: await tokenFor(higher.baseUrl, account) })).body.amount).toBe(1_000_000);
  });

  it('refuses an option that is not a whole number of cents', async () => {
    for (const maxDailyLimitCents of [0, 1.5, -1, '2000000']) {
      await expect(startSandbox({ maxDailyLimitCents: maxDailyLimitCents as number })).rejects.toThrow(/maxDailyLimitCents must be a whole number of cents/);
    }
    await expect(startSandbox({ requirePhone: 'yes' as never })).rejects.toThrow(/requirePhone must be true or false/);
    await expect(startSandbox({ olderGenerationUsers: [{ owner: newAccount().address }] })).rejects.toThrow(/generation "newer"/);
    await expect(startSandbox({ generation: 'newer', olderGenerationUsers: [{ owner: 'nope' }] })).rejects.toThrow(/olderGenerationUsers\[0\]: owner must be a wallet address/);
  });
});

describe('the onboarding status follows the current state, so it can go back (the spec\'s x-assumption on OnboardingStatus)', () => {
  it('completed -> action_complete_kyc when KYC moves to requiresAction -> completed once approved again', async () => {
    const newer = await start({ generation: 'newer', users: [] });
    const account = newAccount();
    const user = newer.users.create({
      signInWallets: [account.address],
      kycStatus: 'approved',
      isSourceOfFundsAnswered: true,
      smartWallets: [{ address: newAccount().address, chainId: '100' }],
      phone: '+15555550123',
      cards: [{ id: 'crd_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true }],
    });
    const token = await tokenFor(newer.baseUrl, account);
    const status = async () => {
      const answer = await callOperation(newer.baseUrl, 'getOnboardingStatus', { token });
      expect(newer.users.onboardingStatus(user.id)).toBe(answer.body.status);
      expect((await callAdmin(newer.baseUrl, 'GET', `/__sandbox/users/${user.id}/onboarding`)).body.status).toBe(answer.body.status);
      return answer.body.status;
    };
    expect(await status()).toBe('completed');
    expect((await callAdmin(newer.baseUrl, 'PUT', `/__sandbox/users/${user.id}/kyc-status`, { kycStatus: 'requiresAction' })).body.eventEmitted).toBe(true);
    expect(await status()).toBe('action_complete_kyc');
    newer.users.setKycStatus(user.id, 'pending');
    expect(await status()).toBe('action_complete_kyc');
    newer.users.setKycStatus(user.id, 'approved');
    expect(await status()).toBe('completed');
    // Likewise the source of funds: a completed user whose answers are withdrawn is back at action_complete_sof.
    newer.users.setSourceOfFunds(user.id, false);
    expect(await status()).toBe('action_complete_sof');
    newer.users.setSourceOfFunds(user.id, true);
    expect(await status()).toBe('completed');
    // The account, its card and its limit stay: only the status names the step to do again.
    expect((await callOperation(newer.baseUrl, 'getUser', { token })).body.cards).toHaveLength(1);
  });
});

describe('a migrated user waits for the carry-over after the terms (reference 3.3: terms, then the wait)', () => {
  it('a user slower to accept the terms than the carry-over still waits at waiting_kyc_setup after them, and nothing is carried over before', async () => {
    const owner = newAccount();
    const newer = await start({ generation: 'newer', migrationKycSetupMs: 60_000, olderGenerationUsers: [{ owner: owner.address }] });
    const token = await tokenFor(newer.baseUrl, owner);
    const email = 'slow.reader@example.com';
    expect((await callOperation(newer.baseUrl, 'requestEmailVerification', { token, body: { email } })).status).toBe(200);
    const code = newer.oneTimePasswords().findLast((sent) => sent.sentTo === email)!.code;
    const user = (await callOperation(newer.baseUrl, 'registerUser', { token, body: { email, otp: code } })).body;
    const status = async () => (await callOperation(newer.baseUrl, 'getOnboardingStatus', { token })).body.status;
    // The user reads the terms for longer than the carry-over takes.
    await newer.advanceClock(120_000);
    expect(await status()).toBe('action_accept_tos');
    expect(newer.users.get(user.id)).toMatchObject({ kycStatus: 'notStarted', isSourceOfFundsAnswered: false });
    expect((await callOperation(newer.baseUrl, 'acceptTerms', { token, body: { accepted: true } })).status).toBe(200);
    // The wait starts now, and lasts its whole time.
    expect(await status()).toBe('waiting_kyc_setup');
    await newer.advanceClock(59_000);
    expect(await status()).toBe('waiting_kyc_setup');
    expect(newer.users.get(user.id)).toMatchObject({ kycStatus: 'notStarted' });
    await newer.advanceClock(1_000);
    expect(await status()).toBe('action_create_account');
    expect(newer.users.get(user.id)).toMatchObject({ kycStatus: 'approved', isSourceOfFundsAnswered: true });
  });
});

describe('createCard refuses a phone other than the number the user has (409 PhoneAlreadySet), rather than ignoring it', () => {
  const seededAtCardStep = (fields: Record<string, unknown>) => ({
    kycStatus: 'approved' as const,
    isSourceOfFundsAnswered: true,
    smartWallets: [{ address: newAccount().address, chainId: '100' }],
    ...fields,
  });

  it('requirePhone: after the phone is verified, another number is refused, names PATCH /phone, and creates nothing; the same number or none is accepted', async () => {
    const account = newAccount();
    const newer = await start({ generation: 'newer', requirePhone: true, users: [seededAtCardStep({ signInWallets: [account.address], phone: '+15555550123', isPhoneValidated: true })] });
    const token = await tokenFor(newer.baseUrl, account);
    expect((await callOperation(newer.baseUrl, 'getOnboardingStatus', { token })).body.status).toBe('action_create_card');
    const refused = await callOperation(newer.baseUrl, 'createCard', { token, body: { virtual: true, phone: '+15555550199' } });
    expect(refused).toMatchObject({
      status: 409,
      body: { code: 'PhoneAlreadySet', message: expect.stringMatching(/already set \(validated\); a card does not change it, so phone "\+15555550199" was refused and no card was created\. .*POST \/phone\/verification, then PATCH \/phone/) },
    });
    const user = (await callOperation(newer.baseUrl, 'getUser', { token })).body;
    expect(user).toMatchObject({ phone: '+15555550123', isPhoneValidated: true, cards: [] });
    const same = await callOperation(newer.baseUrl, 'createCard', { token, body: { virtual: true, phone: '+15555550123' } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ phone: '+15555550123', cards: [expect.anything()] });
    const none = await callOperation(newer.baseUrl, 'createCard', { token, body: { virtual: true } });
    expect(none.body.cards).toHaveLength(2);
  });

  it('without requirePhone: the first card sets the number; a later card with another is refused and names POST /phone (the number is not validated)', async () => {
    const account = newAccount();
    const newer = await start({ generation: 'newer', users: [seededAtCardStep({ signInWallets: [account.address] })] });
    const token = await tokenFor(newer.baseUrl, account);
    expect((await callOperation(newer.baseUrl, 'createCard', { token, body: { phone: '+15555550123' } })).body).toMatchObject({ phone: '+15555550123', isPhoneValidated: false });
    const refused = await callOperation(newer.baseUrl, 'createCard', { token, body: { phone: '+15555550199' } });
    expect(refused).toMatchObject({ status: 409, body: { code: 'PhoneAlreadySet', message: expect.stringMatching(/already set \(not validated\).*POST \/phone\/verification, then POST \/phone /) } });
    expect((await callOperation(newer.baseUrl, 'getUser', { token })).body).toMatchObject({ phone: '+15555550123', cards: [expect.anything()] });
  });
});
