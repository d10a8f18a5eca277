// Every operation of the spec has a public method, and each method returns the spec's
// response schema for its 200, typed (never `unknown`): the User for every write that answers
// one. The table is keyed by operationId, so a new operation in the spec without a method
// here fails the type check.
import { describe, expectTypeOf, test } from 'vitest';
import type { OnboardingStatus, operations, User } from '@capi/openapi-types';
import type { PartnerClient } from '../src/index.js';
import * as onboarding from '../src/onboarding.js';

// The operations a partner's code calls (the `receive*` ones are webhooks: the receiver's).
type CalledOperationId = Exclude<keyof operations, `receive${string}`>;
// The body of an operation's 200 answer, whatever its media type.
type Answer<Id extends CalledOperationId> = operations[Id]['responses'] extends { 200: { content: infer C } } ? C[keyof C] : never;
type Returned<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

// Which public method covers each operation.
interface MethodOf {
  getNonce: PartnerClient['signInWithEthereum'];
  verifySiweSignature: PartnerClient['signInWithEthereum'];
  getAccountLimit: PartnerClient['getDailyLimit'];
  setAccountLimit: PartnerClient['setDailyLimit'];
  getWebhookPublicKey: PartnerClient['getWebhookPublicKey'];
  getOnboardingStatus: typeof onboarding.getOnboardingStatus;
  requestEmailVerification: typeof onboarding.requestEmailVerification;
  getUser: typeof onboarding.getUser;
  registerUser: typeof onboarding.registerUser;
  acceptTerms: typeof onboarding.acceptTerms;
  submitSourceOfFunds: typeof onboarding.submitSourceOfFunds;
  requestPhoneVerification: typeof onboarding.requestPhoneVerification;
  setPhone: typeof onboarding.setPhone;
  updatePhone: typeof onboarding.updatePhone;
  createAccount: typeof onboarding.createAccount;
  createCard: typeof onboarding.createCard;
  requestLegacyPhoneVerification: typeof onboarding.requestLegacyPhoneVerification;
  checkLegacyPhoneVerification: typeof onboarding.checkLegacyPhoneVerification;
}

describe('every operation of the spec has a public method', () => {
  test('the table names exactly the operations a partner calls', () => {
    expectTypeOf<keyof MethodOf>().toEqualTypeOf<CalledOperationId>();
  });
});

describe("each method returns its operation's 200 answer, typed", () => {
  test('no method returns unknown or any', () => {
    type Returns = { [Id in keyof MethodOf]: Returned<MethodOf[Id]> }[keyof MethodOf];
    expectTypeOf<Returns>().not.toBeUnknown();
    expectTypeOf<Returns>().not.toBeAny();
  });

  test('every write that answers a User returns the User', () => {
    expectTypeOf<Answer<'registerUser'>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['getUser']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['registerUser']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['acceptTerms']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['submitSourceOfFunds']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['setPhone']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['updatePhone']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['createAccount']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['createCard']>>().toEqualTypeOf<User>();
    expectTypeOf<Returned<MethodOf['checkLegacyPhoneVerification']>>().toEqualTypeOf<User>();
  });

  test('the other answers are the spec schemas (the limit with its currency filled in)', () => {
    expectTypeOf<Returned<MethodOf['requestEmailVerification']>>().toEqualTypeOf<Answer<'requestEmailVerification'>>();
    expectTypeOf<Returned<MethodOf['requestPhoneVerification']>>().toEqualTypeOf<Answer<'requestPhoneVerification'>>();
    expectTypeOf<Returned<MethodOf['requestLegacyPhoneVerification']>>().toEqualTypeOf<Answer<'requestLegacyPhoneVerification'>>();
    expectTypeOf<Returned<MethodOf['getWebhookPublicKey']>>().toEqualTypeOf<Answer<'getWebhookPublicKey'>>();
    // The onboarding status keeps the spec's open enum of statuses, its known values included
    // (operations, as paths, widens it to string for openapi-fetch).
    expectTypeOf<Returned<MethodOf['getOnboardingStatus']>>().toExtend<Answer<'getOnboardingStatus'>>();
    expectTypeOf<Returned<MethodOf['getOnboardingStatus']>['status']>().toEqualTypeOf<OnboardingStatus>();
    // The limit: the spec's AccountLimit, currency always present (clients assume USD).
    expectTypeOf<Returned<MethodOf['getAccountLimit']>>().toExtend<Answer<'getAccountLimit'>>();
    expectTypeOf<Returned<MethodOf['getAccountLimit']>['currency']>().toEqualTypeOf<string>();
    // setAccountLimit answers `syncStatus: pending` (a const in the spec), and so does the method's type.
    expectTypeOf<Returned<MethodOf['setAccountLimit']>>().toExtend<Answer<'setAccountLimit'>>();
    expectTypeOf<Returned<MethodOf['setAccountLimit']>['syncStatus']>().toEqualTypeOf<'pending'>();
    // Sign-in: the challenge's token (and the newer generation's refresh token).
    expectTypeOf<Returned<MethodOf['verifySiweSignature']>['token']>().toEqualTypeOf<Answer<'verifySiweSignature'>['token']>();
  });
});
