import { assertFirewallAllows } from '../auth/firewall.js';
import { answerSiweChallenge, type ChallengeRequest, type SiweChallengeDependencies } from '../auth/siwe-challenge.js';
import type { RequestValidator } from '../conformance/request-validator.js';
import { ApiError } from '../http/api-error.js';
import type { Router } from '../http/router.js';
import type { LimitStore } from '../limits/limit-store.js';
import type { OnboardingJourney } from '../onboarding/onboarding-journey.js';
import { registeredUserId } from './bearer-auth.js';
import { readOperationBody } from './operation-body.js';

export interface CoreApiDependencies extends SiweChallengeDependencies {
  validator: RequestValidator;
  limits: LimitStore;
  /** Newer generation: whether a user has created the account that holds the limit. */
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
        notJson: (detail) => new ApiError(422, { message: `The body is not JSON (${detail}); send {"message", "signature", "ttlInSeconds"}.` }),
        invalid: (problems) => new ApiError(422, { message: `${problems.join('; ')}. ttlInSeconds must be an integer from 3600 to 86400.` }),
      },
      assertFirewallAllows,
    );
    return { status: 200, json: await answerSiweChallenge(body, deps) };
  });

  /**
   * The limit is the account's (reference 4.3). The older generation's users sign up with
   * their account; a newer user has none before `createAccount` (409, see the spec).
   */
  const assertAccountCreated = (userId: string): void => {
    if (deps.tokens.generation === 'newer') deps.journey.assertAccountCreated(userId);
  };

  router.on('GET', '/user-api/user/account/limit', async (request) => {
    const userId = await registeredUserId(request, deps.tokens, deps.users);
    assertAccountCreated(userId);
    return { status: 200, json: deps.limits.get(userId) };
  });

  router.on('PUT', '/user-api/user/account/limit', async (request) => {
    const userId = await registeredUserId(request, deps.tokens, deps.users);
    const body = await readOperationBody<{ amount: number; currency: string }>(request, deps.validator, 'setAccountLimit', {
      notJson: (detail) => new ApiError(400, { code: 'InvalidJson', message: `The body is not JSON (${detail}); send {"amount": <cents>, "currency": "USD"}.` }),
      invalid: (problems) =>
        new ApiError(422, {
          code: 'ValidationError',
          message: `${problems.join('; ')}. amount is an integer number of cents from 1 to ${deps.maxDailyLimitCents} and currency must be "USD".`,
        }),
    });
    // Checked after the body, as the onboarding operations do; nothing is stored before.
    assertAccountCreated(userId);
    return { status: 200, json: deps.limits.set(userId, body.amount, body.currency) };
  });
}
