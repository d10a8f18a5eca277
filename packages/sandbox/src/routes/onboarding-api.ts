import type { Generation, TokenService } from '../auth/token-service.js';
import type { OperationContract } from '../conformance/operation-contract.js';
import type { RequestValidator } from '../conformance/request-validator.js';
import { ApiError } from '../http/api-error.js';
import type { RouteResponse, Router } from '../http/router.js';
import type { OnboardingJourney } from '../onboarding/onboarding-journey.js';
import type { OneTimePasswords } from '../onboarding/one-time-passwords.js';
import type { UserRegistry } from '../users/user-registry.js';
import { notRegistered, signedIn } from './bearer-auth.js';
import { readOperationBody } from './operation-body.js';
import { otherGenerationRefusal } from './operation-generation.js';

export interface OnboardingApiDependencies {
  operations: readonly OperationContract[];
  validator: RequestValidator;
  tokens: TokenService;
  users: UserRegistry;
  journey: OnboardingJourney;
  passwords: OneTimePasswords;
  generation: Generation;
}

interface OnboardingCall {
  deps: OnboardingApiDependencies;
  /** The signed-in wallet (the token's `signerAddress`). */
  wallet: string;
  /** Its user's id; undefined before registration. */
  userId: string | undefined;
  /** The body, checked against the operation's request schema (undefined when it takes none). */
  body: any;
}

type OnboardingHandler = (call: OnboardingCall) => unknown;

/** Reference 5 rule 1 and 7: every route but the registration's two needs a user (401 `UserNotRegistered`). */
function registered(call: OnboardingCall): { wallet: string; userId: string } {
  if (call.userId === undefined) throw notRegistered(call.deps.generation);
  return { wallet: call.wallet, userId: call.userId };
}

/** What each onboarding operation does; every answer is the spec's (the User after the change, mostly). */
const HANDLERS: Record<string, OnboardingHandler> = {
  getOnboardingStatus(call) {
    return { status: call.deps.journey.stepOf(registered(call).userId) };
  },
  requestEmailVerification({ deps, wallet, body }) {
    return deps.journey.requestEmailVerification(wallet, body.email);
  },
  getUser(call) {
    const { userId } = registered(call);
    call.deps.journey.settleDue();
    return call.deps.users.get(userId);
  },
  registerUser({ deps, wallet, body }) {
    return deps.journey.register(wallet, body.email, body.otp);
  },
  acceptTerms(call) {
    return call.deps.journey.acceptTerms(registered(call).userId);
  },
  submitSourceOfFunds(call) {
    return call.deps.journey.submitSourceOfFunds(registered(call).userId);
  },
  requestPhoneVerification(call) {
    const { wallet, userId } = registered(call);
    return call.deps.journey.requestPhoneVerification(userId, wallet, call.body.phone);
  },
  setPhone(call) {
    const { wallet, userId } = registered(call);
    return call.deps.journey.setPhone(userId, wallet, call.body.phone, call.body.otp);
  },
  updatePhone(call) {
    const { wallet, userId } = registered(call);
    return call.deps.journey.updatePhone(userId, wallet, call.body.phone, call.body.otp);
  },
  createAccount(call) {
    return call.deps.journey.createAccount(registered(call).userId);
  },
  createCard(call) {
    return call.deps.journey.createCard(registered(call).userId, call.body);
  },
  // The older generation always verifies the phone by SMS one-time password (reference 9).
  requestLegacyPhoneVerification(call) {
    const { wallet } = registered(call);
    return call.deps.passwords.send('sms', wallet, call.body.phone);
  },
  checkLegacyPhoneVerification(call) {
    const { wallet, userId } = registered(call);
    call.deps.passwords.consume('sms', wallet, call.body.phone, call.body.otp);
    return call.deps.users.setPhoneValidation(userId, true, call.body.phone).user;
  },
};

/**
 * The onboarding operations of reference 3.3 and 4.7, each answered only on its generation
 * (`x-generation`; on the other one the operation does not exist: 404 naming the
 * generation). The bearer token is checked first, then the body against the spec.
 */
export function registerOnboardingApi(router: Router, deps: OnboardingApiDependencies): void {
  for (const operation of deps.operations) {
    const handler = HANDLERS[operation.operationId];
    if (handler === undefined) continue;
    router.on(operation.method, operation.path, async (request): Promise<RouteResponse> => {
      const refusal = otherGenerationRefusal(operation, deps.generation);
      if (refusal !== undefined) throw refusal;
      const { claims, userId } = await signedIn(request, deps.tokens, deps.users);
      let body: unknown;
      if (operation.requestBodySchema !== undefined) {
        body = await readOperationBody(request, deps.validator, operation.operationId, {
          unsupportedMediaType: (message) => new ApiError(415, { code: 'UnsupportedMediaType', message }),
          notJson: (detail) => new ApiError(400, { code: 'InvalidJson', message: `The body is not JSON (${detail}); send a JSON object.` }),
          invalid: (problems) => new ApiError(422, { code: 'ValidationError', message: `${problems.join('; ')}.` }),
        });
      }
      return { status: 200, json: handler({ deps, wallet: claims.signerAddress, userId, body }) };
    });
  }
}
