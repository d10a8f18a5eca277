// The newer generation's onboarding operations of @capi/client/onboarding over real HTTP on
// loopback: what each sends (method, path, body, bearer token), what it returns, what it
// refuses before sending, and the typed error, with the advice, for each refusal the spec
// documents. The journey through a real sandbox is in onboarding.test.ts.
import type { User } from '@capi/openapi-types';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationError, ConflictError, createPartnerClient, InvalidArgumentError, ServerError, signerFromViemAccount, TokenManager, UnexpectedResponseError, ValidationError, type PartnerClient } from '../src/index.js';
import {
  acceptTerms,
  checkLegacyPhoneVerification,
  createAccount,
  createCard,
  getOnboardingStatus,
  getUser,
  registerUser,
  requestEmailVerification,
  requestLegacyPhoneVerification,
  requestPhoneVerification,
  setPhone,
  submitSourceOfFunds,
  updatePhone,
  waitForOnboardingStatus,
} from '../src/onboarding.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

let service: PartnerService;
afterEach(() => service?.close());

const USER: User = {
  id: 'usr_7f3c2a',
  email: 'ada@example.com',
  phone: null,
  firstName: null,
  lastName: null,
  address1: null,
  address2: null,
  city: null,
  postalCode: null,
  state: null,
  country: null,
  nationalityCountry: null,
  signInWallets: [{ address: registeredAccount.address }],
  smartWallets: [],
  kycStatus: 'notStarted',
  availableFeatures: { providerIban: false },
  cards: [],
  bankingDetails: null,
  isSourceOfFundsAnswered: false,
  isPhoneValidated: false,
};
const SENT = { sentTo: 'ada@example.com', expiresAt: '2026-11-21T12:10:00.000Z' };

async function signedIn(): Promise<{ client: PartnerClient; token: string }> {
  service = await startPartnerService({ registeredAddresses: [registeredAccount.address] });
  const client = createPartnerClient({ baseUrl: service.url });
  const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
  return { client, token };
}

const lastRequest = () => service.requests.at(-1)!;

describe('each operation sends the spec\'s method, path and body with the bearer token, and returns the typed answer', () => {
  it.each([
    ['requestEmailVerification', (c: PartnerClient) => requestEmailVerification(c, { email: 'ada@example.com' }), 'POST', '/email/verification', { email: 'ada@example.com' }, SENT],
    ['registerUser', (c: PartnerClient) => registerUser(c, { email: 'ada@example.com', otp: '049281' }), 'POST', '/user', { email: 'ada@example.com', otp: '049281' }, USER],
    ['getUser', (c: PartnerClient) => getUser(c), 'GET', '/user', undefined, USER],
    ['acceptTerms', (c: PartnerClient) => acceptTerms(c), 'POST', '/user/terms', { accepted: true }, USER],
    ['submitSourceOfFunds', (c: PartnerClient) => submitSourceOfFunds(c, { answers: [{ question: 'Main income?', answer: 'Employment' }] }), 'POST', '/source-of-funds', { answers: [{ question: 'Main income?', answer: 'Employment' }] }, USER],
    ['createAccount', (c: PartnerClient) => createAccount(c), 'POST', '/account', undefined, USER],
    ['requestPhoneVerification', (c: PartnerClient) => requestPhoneVerification(c, { phone: '+15555550123' }), 'POST', '/phone/verification', { phone: '+15555550123' }, SENT],
    ['setPhone', (c: PartnerClient) => setPhone(c, { phone: '+15555550123', otp: '731904' }), 'POST', '/phone', { phone: '+15555550123', otp: '731904' }, USER],
    ['updatePhone', (c: PartnerClient) => updatePhone(c, { phone: '+15555550199', otp: '118273' }), 'PATCH', '/phone', { phone: '+15555550199', otp: '118273' }, USER],
    ['createCard', (c: PartnerClient) => createCard(c, { virtual: true, phone: '+15555550123' }), 'POST', '/cards', { virtual: true, phone: '+15555550123' }, USER],
    ['createCard without a body', (c: PartnerClient) => createCard(c), 'POST', '/cards', {}, USER],
    ['requestLegacyPhoneVerification', (c: PartnerClient) => requestLegacyPhoneVerification(c, { phone: '+15555550123' }), 'POST', '/api/v1/verification', { phone: '+15555550123' }, SENT],
    ['checkLegacyPhoneVerification', (c: PartnerClient) => checkLegacyPhoneVerification(c, { phone: '+15555550123', otp: '731904' }), 'POST', '/api/v1/verification/check', { phone: '+15555550123', otp: '731904' }, USER],
  ] as const)('%s', async (_name, call, method, path, body, answer) => {
    const { client, token } = await signedIn();
    service.script(method, path, { status: 200, body: answer });
    await expect(call(client)).resolves.toEqual(answer);
    expect(lastRequest()).toMatchObject({ method, path, authorization: `Bearer ${token}` });
    if (body === undefined) expect(lastRequest().body).toBe('');
    else expect(JSON.parse(lastRequest().body)).toEqual(body);
  });
});

describe('refuses a call it can tell is wrong before sending anything, with InvalidArgumentError', () => {
  it.each([
    ['an email that is not a string', () => requestEmailVerification(undefined as never, { email: 42 } as never), 'email', 'invalid_email', /needs email as a non-empty string, e.g. 'ada@example.com'; got 42/],
    ['no body', () => registerUser(undefined as never, undefined as never), 'body', 'invalid_body', /registerUser takes an object such as \{ email: 'ada@example.com', otp: '492817' \}; got undefined/],
    ['an OTP given as a number (leading zeros lost)', () => registerUser(undefined as never, { email: 'a@example.com', otp: 49281 } as never), 'otp', 'invalid_otp', /as a number it loses its leading zeros; got 49281/],
    ['an OTP that is not digits', () => setPhone(undefined as never, { phone: '+15555550123', otp: 'abc' }), 'otp', 'invalid_otp', /a string of digits, e.g. "049281"; got "abc"/],
    ['no phone', () => requestPhoneVerification(undefined as never, {} as never), 'phone', 'invalid_phone', /needs phone as a non-empty string, e.g. '\+15555550123'; got none/],
    ['no phone (older generation)', () => requestLegacyPhoneVerification(undefined as never, {} as never), 'phone', 'invalid_phone', /requestLegacyPhoneVerification needs phone as a non-empty string/],
    ['an OTP given as a number (older generation)', () => checkLegacyPhoneVerification(undefined as never, { phone: '+15555550123', otp: 731904 } as never), 'otp', 'invalid_otp', /as a number it loses its leading zeros/],
    ['empty answers', () => submitSourceOfFunds(undefined as never, { answers: [] as never }), 'answers', 'invalid_answers', /a non-empty list of \{ question, answer \} strings; got \[\]/],
    ['an answer without question', () => submitSourceOfFunds(undefined as never, { answers: [{ answer: 'x' }] as never }), 'answers', 'invalid_answers', /got \[\{"answer":"x"\}\]/],
    ['a card body that is an array', () => createCard(undefined as never, [] as never), 'body', 'invalid_body', /createCard takes an object such as \{ virtual: true \}; got an array/],
  ])('%s', async (_name, call, argument, code, message) => {
    const error = await call().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument, code, message: expect.stringMatching(message) });
  });
});

describe('turns each refusal the spec documents into its typed error, saying what to do', () => {
  it.each([
    ['409 OnboardingStepNotReached', () => acceptTerms, 'POST', '/user/terms', 409, 'OnboardingStepNotReached', ConflictError, /read getOnboardingStatus\(\) and complete the step it names first/],
    ['409 AlreadyRegistered (a registerUser sent twice: read the status and go on, the token keeps working)', () => (c: PartnerClient) => registerUser(c, { email: 'ada@example.com', otp: '049281' }), 'POST', '/user', 409, 'AlreadyRegistered', ConflictError, /^(?!.*sign in again).*nothing to register again: read getOnboardingStatus\(\) and go on from the step it names\. The token you hold keeps working/],
    ['409 EmailTaken', () => (c: PartnerClient) => registerUser(c, { email: 'ada@example.com', otp: '049281' }), 'POST', '/user', 409, 'EmailTaken', ConflictError, /a user has one sign-in wallet/],
    ['409 AlreadyDone', () => createAccount, 'POST', '/account', 409, 'AlreadyDone', ConflictError, /already complete: read getOnboardingStatus\(\) for the next one/],
    ['409 PhoneNotValidated (no advice to call a step the service refuses before action_verify_phone)', () => (c: PartnerClient) => updatePhone(c, { phone: '+15555550199', otp: '118273' }), 'PATCH', '/phone', 409, 'PhoneNotValidated', ConflictError, /^(?!.*Set and validate a phone number first).*requestPhoneVerification\(\), then setPhone\(\), at the step action_verify_phone, after createAccount\(\).*Read getOnboardingStatus\(\) for the step the user is at/],
    ['409 PhoneAlreadySet (createCard with another number: nothing created, how to change it)', () => (c: PartnerClient) => createCard(c, { virtual: true, phone: '+15555550199' }), 'POST', '/cards', 409, 'PhoneAlreadySet', ConflictError, /a card does not change it, so no card was created: call createCard\(\) without phone .*requestPhoneVerification\(\), then updatePhone\(\) for a validated number or setPhone\(\) for one not validated yet/],
    ['422 InvalidOneTimePassword on setPhone (names the phone call only)', () => (c: PartnerClient) => setPhone(c, { phone: '+15555550123', otp: '000000' }), 'POST', '/phone', 422, 'InvalidOneTimePassword', ValidationError, /^(?!.*requestEmailVerification).*Ask for a new one-time password with requestPhoneVerification\(\)/],
    ['422 InvalidOneTimePassword on updatePhone (names the phone call only)', () => (c: PartnerClient) => updatePhone(c, { phone: '+15555550199', otp: '000000' }), 'PATCH', '/phone', 422, 'InvalidOneTimePassword', ValidationError, /^(?!.*requestEmailVerification).*Ask for a new one-time password with requestPhoneVerification\(\)/],
    ['422 InvalidOneTimePassword on registerUser (names the email call only)', () => (c: PartnerClient) => registerUser(c, { email: 'ada@example.com', otp: '000000' }), 'POST', '/user', 422, 'InvalidOneTimePassword', ValidationError, /^(?!.*requestPhoneVerification).*Ask for a new one-time password with requestEmailVerification\(\)/],
    ['401 UserNotRegistered (the onboarding status, before registration)', () => getOnboardingStatus, 'GET', '/user/onboarding', 401, 'UserNotRegistered', AuthenticationError, /requestEmailVerification\(\), then registerUser\(\)/],
    ['401 UserNotRegistered (newer generation)', () => getUser, 'GET', '/user', 401, 'UserNotRegistered', AuthenticationError, /requestEmailVerification\(\), then registerUser\(\)/],
    ['401 UserNotRegistered (older generation: no registration operation there)', () => (c: PartnerClient) => requestLegacyPhoneVerification(c, { phone: '+15555550123' }), 'POST', '/api/v1/verification', 401, 'UserNotRegistered', AuthenticationError, /^(?!.*(requestEmailVerification|registerUser)).*the older generation has no registration operation.*sign in with a wallet that owns a registered account/],
    ['422 InvalidOneTimePassword (older generation)', () => (c: PartnerClient) => checkLegacyPhoneVerification(c, { phone: '+15555550123', otp: '000000' }), 'POST', '/api/v1/verification/check', 422, 'InvalidOneTimePassword', ValidationError, /^(?!.*(requestEmailVerification|requestPhoneVerification\(\))).*Ask for a new one-time password \(requestLegacyPhoneVerification\(\)\)/],
    ['401', () => getUser, 'GET', '/user', 401, 'Unauthorized', AuthenticationError, /Sign in again/],
  ] as const)('%s', async (_name, operation, method, path, status, code, errorClass, advice) => {
    const { client } = await signedIn();
    service.script(method, path, { status, body: { code, message: 'The service says no' } });
    const error = await (operation() as (c: PartnerClient) => Promise<unknown>)(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ status, code });
    expect((error as Error).message).toMatch(advice);
    // The message says the refusal once, the operation's advice in place of the service's
    // sentence, which is kept as serviceMessage.
    expect(error).toMatchObject({ serviceMessage: 'The service says no' });
    expect((error as Error).message).not.toContain('The service says no');
  });

  it('a 200 without a User or without {sentTo, expiresAt} is an UnexpectedResponseError (a base URL of the other generation)', async () => {
    const { client } = await signedIn();
    service.script('POST', '/account', { status: 200, body: {} });
    await expect(createAccount(client)).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_onboarding_body', message: expect.stringMatching(/createAccount answered without a User/) });
    service.script('POST', '/email/verification', { status: 200, body: { ok: true } });
    await expect(requestEmailVerification(client, { email: 'ada@example.com' })).rejects.toBeInstanceOf(UnexpectedResponseError);
    service.script('POST', '/api/v1/verification/check', { status: 200, body: {} });
    await expect(checkLegacyPhoneVerification(client, { phone: '+15555550123', otp: '731904' })).rejects.toMatchObject({ code: 'unexpected_onboarding_body', message: expect.stringMatching(/an older-generation deployment/) });
  });

  it('writes are not retried after a 503 (the service may have acted), reads are', async () => {
    const { client } = await signedIn();
    service.script('POST', '/cards', { status: 503, body: { message: 'maintenance' } }, { status: 200, body: USER });
    await expect(createCard(client, { virtual: true })).rejects.toBeInstanceOf(ServerError);
    expect(service.count('POST', '/cards')).toBe(1);
    service.script('GET', '/user', { status: 503, headers: { 'retry-after': '0' }, body: { message: 'maintenance' } }, { status: 200, body: USER });
    await expect(getUser(client)).resolves.toEqual(USER);
    expect(service.count('GET', '/user')).toBe(2);
  });
});

describe('a call made wrongly is an InvalidArgumentError saying what to pass, and sends nothing', () => {
  it.each([
    ['getOnboardingStatus', (c: PartnerClient, o: object) => getOnboardingStatus(c, o)],
    ['getUser', (c: PartnerClient, o: object) => getUser(c, o)],
    ['acceptTerms', (c: PartnerClient, o: object) => acceptTerms(c, o)],
    ['createAccount', (c: PartnerClient, o: object) => createAccount(c, o)],
    ['setPhone', (c: PartnerClient, o: object) => setPhone(c, { phone: '+15555550123', otp: '731904' }, o)],
    ['requestLegacyPhoneVerification', (c: PartnerClient, o: object) => requestLegacyPhoneVerification(c, { phone: '+15555550123' }, o)],
  ] as const)('%s: a signal that is not an AbortSignal (invalid_option, as the main entry), options that are no object', async (_name, call) => {
    const { client } = await signedIn();
    const before = service.requests.length;
    for (const signal of ['x', {}]) {
      const error = await call(client, { signal }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument: 'signal', code: 'invalid_option', message: expect.stringContaining('signal must be an AbortSignal (such as controller.signal)') });
    }
    await expect(call(client, null as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options', code: 'invalid_option' });
    expect(service.requests.length).toBe(before);
  });

  it.each([
    ['acceptTerms()', () => acceptTerms(undefined as never), /acceptTerms needs the PartnerClient as its first argument: const client = createPartnerClient\(\{ baseUrl \}\), then acceptTerms\(client, \.\.\.\); got nothing/],
    ['getUser(options) without the client', () => getUser({ timeoutMs: 5_000 } as never), /getUser needs the PartnerClient as its first argument.*got an object that is not a PartnerClient/],
    ['createAccount(client.raw)', () => createAccount(createPartnerClient({ baseUrl: 'https://api.example.com' }).raw as never), /createAccount needs the PartnerClient/],
    ['getOnboardingStatus()', () => getOnboardingStatus(undefined as never), /getOnboardingStatus needs the PartnerClient/],
    ['requestPhoneVerification(null, body)', () => requestPhoneVerification(null as never, { phone: '+15555550123' }), /requestPhoneVerification needs the PartnerClient.*got null/],
    ['waitForOnboardingStatus(undefined, target)', () => waitForOnboardingStatus(undefined as never, 'completed'), /getOnboardingStatus needs the PartnerClient/],
  ])('%s', async (_name, call, message) => {
    const error = await call().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument: 'client', code: 'invalid_client', message: expect.stringMatching(message) });
  });
});

describe("a 401 the TokenManager could not renew away: the advice depends on whether it has reauthenticate", () => {
  // The session ended at the service (a refresh token used twice, e.g. by two tabs): the renewed token is refused too.
  const sessionRevoked = { status: 401, body: { code: 'SessionRevoked', message: 'This session was ended' } };

  // A call through the onboarding functions and one through the client's own methods.
  const REFUSED_CALLS = [
    ['acceptTerms', 'POST', '/user/terms', (c: PartnerClient) => acceptTerms(c)],
    ['getDailyLimit', 'GET', '/user-api/user/account/limit', (c: PartnerClient) => c.getDailyLimit()],
  ] as const;

  async function clientWith(reauthenticate: boolean) {
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const signIn = () => client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
    const client: PartnerClient = createPartnerClient({ baseUrl: service.url, tokenManager: new TokenManager(reauthenticate ? { reauthenticate: () => signIn() } : {}) });
    await signIn();
    return client;
  }

  it.each(REFUSED_CALLS)('%s: with reauthenticate, it does not advise giving one, and says what the next request does', async (_name, method, path, call) => {
    const client = await clientWith(true);
    expect(client.tokenManager.canReauthenticate).toBe(true);
    service.script(method, path, sessionRevoked, sessionRevoked);
    const error = await call(client).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AuthenticationError', status: 401, code: 'SessionRevoked' });
    expect((error as Error).message).not.toContain('give the client a TokenManager with a reauthenticate callback');
    expect((error as Error).message).toContain('The service refused the access token even after the TokenManager renewed it for this request');
    expect((error as Error).message).toContain('The next request renews it again, through the reauthenticate callback');
  });

  it.each(REFUSED_CALLS)('%s: without reauthenticate, it advises giving one', async (_name, method, path, call) => {
    const client = await clientWith(false);
    expect(client.tokenManager.canReauthenticate).toBe(false);
    service.script(method, path, sessionRevoked);
    const error = await call(client).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'SessionRevoked' });
    expect((error as Error).message).toContain('Sign in again with signInWithEthereum(), or give the client a TokenManager with a reauthenticate callback');
  });
});
