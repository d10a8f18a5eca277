import type { TokenService } from '../auth/token-service.js';
import type { RequestValidator } from '../conformance/request-validator.js';
import type { OperationContract } from '../conformance/operation-contract.js';
import { ApiError } from '../http/api-error.js';
import type { Router } from '../http/router.js';
import type { User } from '../users/user.js';
import type { UserRegistry } from '../users/user-registry.js';
import { authenticate } from './bearer-auth.js';
import { readOperationBody } from './operation-body.js';

export interface OnboardingApiDependencies {
  operations: readonly OperationContract[];
  validator: RequestValidator;
  tokens: TokenService;
  users: UserRegistry;
}

/** The onboarding operations of reference 4.7, whose shapes the reference does not show. */
const ONBOARDING_OPERATION_IDS = new Set([
  'getOnboardingStatus',
  'registerUser',
  'requestPhoneVerification',
  'setPhone',
  'updatePhone',
  'createAccount',
  'requestLegacyPhoneVerification',
  'checkLegacyPhoneVerification',
]);

/**
 * The sandbox's reading of the onboarding step from the user's state. `completed` is the
 * sandbox's own value: the reference lists only four steps and says others exist.
 */
export function onboardingStep(user: User): string {
  if (user.kycStatus !== 'approved') return 'action_complete_kyc';
  if (!user.isSourceOfFundsAnswered) return 'action_complete_sof';
  return 'completed';
}

/**
 * Reference 4.7: authenticated like every user route; bodies are checked against the spec
 * (any JSON object); the writes are acknowledged with `{}` and change nothing, because
 * their effects are not shown in the reference.
 */
export function registerOnboardingApi(router: Router, deps: OnboardingApiDependencies): void {
  for (const operation of deps.operations) {
    if (!ONBOARDING_OPERATION_IDS.has(operation.operationId)) continue;
    router.on(operation.method, operation.path, async (request) => {
      const claims = await authenticate(request, deps.tokens, deps.users);
      if (operation.operationId === 'getOnboardingStatus') {
        return { status: 200, json: { status: onboardingStep(deps.users.get(claims.userId)!) } };
      }
      if (operation.requestBodySchema !== undefined) {
        await readOperationBody(request, deps.validator, operation.operationId, {
          notJson: (detail) => new ApiError(400, { code: 'InvalidJson', message: `The body is not JSON (${detail}); send a JSON object.` }),
          invalid: (problems) => new ApiError(422, { code: 'ValidationError', message: `${problems.join('; ')}.` }),
        });
      }
      return { status: 200, json: {} };
    });
  }
}
