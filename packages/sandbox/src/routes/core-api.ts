import { assertFirewallAllows } from '../auth/firewall.js';
import { answerSiweChallenge, type ChallengeRequest, type SiweChallengeDependencies } from '../auth/siwe-challenge.js';
import type { OperationContract } from '../conformance/operation-contract.js';
import type { RequestValidator } from '../conformance/request-validator.js';
import { ApiError } from '../http/api-error.js';
import type { Router } from '../http/router.js';
import type { LimitStore } from '../limits/limit-store.js';
import type { OnboardingJourney } from '../onboarding/onboarding-journey.js';
import { registeredUserId } from './bearer-auth.js';
import { readOperationBody } from './operation-body.js';
import { otherGenerationRefusal } from './operation-generation.js';

export interface CoreApiDependencies extends SiweChallengeDependencies {
  /** The spec's operations: says which generation answers the limit (`x-generation`). */
  operations: readonly OperationContract[];
  validator: RequestValidator;
  limits: LimitStore;
  /** Whether a user has created the account that holds the limit. */
  journey: Pick<OnboardingJourney, 'assertAccountCreated'>;
  /** The partner's agreed maximum daily limit, in cents (default 1,000,000). */
  maxDailyLimitCents: number;
}

/** Reference 4.1 to 4.4 on the core base URL. */
export function registerCoreApi(router: Router, deps: CoreApiDependencies): void {
  router.on('GET', '/api/v1/auth/nonce', () => ({ status: 200, text: deps.nonces.issue() }));

  router.on('POST', '/api/v1/auth/challenge', async (request) => {
    const body = await readOperationBody<ChallengeRequest>(
      request,
      deps.validator,
      'verifySiweSignature',
      {
        // Older-generation authentication words its refusals as `{ message }` (its 422s too).
        unsupportedMediaType: (message) => new ApiError(415, { message }),
        notJson: (detail) => new ApiError(422, { message: `The body is not JSON (${detail}); send {"message", "signature", "ttlInSeconds"}.` }),
        invalid: (problems) => new ApiError(422, { message: `${problems.join('; ')}. ttlInSeconds must be an integer from 3600 to 86400.` }),
      },
      assertFirewallAllows,
    );
    return { status: 200, json: await answerSiweChallenge(body, deps) };
  });

  /**
   * The limit operations are the newer generation's (the spec's `x-generation`, from service
   * facts: the older generation's user sets the limit onchain, reference 9). On the other
   * generation they do not exist: 404, before the token is read, as every operation of the
   * other generation. The limit is the account's (reference 4.3): a user has none before
   * `createAccount` (409, see the spec).
   */
  const contractOf = (operationId: string): OperationContract => {
    const operation = deps.operations.find((candidate) => candidate.operationId === operationId);
    if (operation === undefined) throw new Error(`The embedded spec has no ${operationId}.`);
    return operation;
  };
  const getLimit = contractOf('getAccountLimit');
  const setLimit = contractOf('setAccountLimit');

  router.on('GET', '/user-api/user/account/limit', async (request) => {
    const refusal = otherGenerationRefusal(getLimit, deps.tokens.generation);
    if (refusal !== undefined) throw refusal;
    const userId = await registeredUserId(request, deps.tokens, deps.users);
    deps.journey.assertAccountCreated(userId);
    return { status: 200, json: deps.limits.get(userId) };
  });

  router.on('PUT', '/user-api/user/account/limit', async (request) => {
    const refusal = otherGenerationRefusal(setLimit, deps.tokens.generation);
    if (refusal !== undefined) throw refusal;
    const userId = await registeredUserId(request, deps.tokens, deps.users);
    const body = await readOperationBody<{ amount: number; currency: string }>(request, deps.validator, 'setAccountLimit', {
      unsupportedMediaType: (message) => new ApiError(415, { code: 'UnsupportedMediaType', message }),
      notJson: (detail) => new ApiError(400, { code: 'InvalidJson', message: `The body is not JSON (${detail}); send {"amount": <cents>, "currency": "USD"}.` }),
      invalid: (problems) =>
        new ApiError(422, {
          code: 'ValidationError',
          message: `${problems.join('; ')}. amount is an integer number of cents from 1 to ${deps.maxDailyLimitCents} and currency must be "USD".`,
        }),
    });
    // Checked after the body, as the onboarding operations do; nothing is stored before.
    deps.journey.assertAccountCreated(userId);
    return { status: 200, json: deps.limits.set(userId, body.amount, body.currency) };
  });
}
