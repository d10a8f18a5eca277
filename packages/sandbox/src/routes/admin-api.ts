import type { SandboxClock } from '../clock.js';
import type { TokenService } from '../auth/token-service.js';
import { ApiError } from '../http/api-error.js';
import type { RouteRequest, Router } from '../http/router.js';
import { CardPaymentError, type CardPaymentRequest, type CardSpending } from '../limits/card-spending.js';
import type { OnboardingJourney } from '../onboarding/onboarding-journey.js';
import { OlderGenerationUserError, type OlderGenerationUsers, type OlderGenerationUserSeed } from '../onboarding/older-generation-users.js';
import type { OneTimePasswords } from '../onboarding/one-time-passwords.js';
import { KYC_STATUSES, type KycStatus, type UserSeed } from '../users/user.js';
import { UserRegistryError, type UserRegistry } from '../users/user-registry.js';
import type { DeliveryScheduler } from '../webhooks/delivery-scheduler.js';
import { DELIVERY_FILTER_NAMES, deliveryMatcher } from '../webhooks/delivery-filter.js';
import { EventPublishError, unknownEventTypeMessage, type EventPublisher } from '../webhooks/event-publisher.js';
import { sampleEventData, SANDBOX_EVENT_TYPES } from '../webhooks/sample-event-data.js';
import { DeliveriesNotSettledError, whenDeliveriesSettled } from '../webhooks/settle-wait.js';
import type { WebhookKey } from '../webhooks/webhook-key.js';

export interface AdminApiDependencies {
  users: UserRegistry;
  journey: OnboardingJourney;
  olderUsers: OlderGenerationUsers;
  passwords: OneTimePasswords;
  publisher: EventPublisher;
  scheduler: DeliveryScheduler;
  tokens: TokenService;
  clock: SandboxClock;
  webhookKey: WebhookKey;
  cardSpending: CardSpending;
  /** Syncs the pending daily-limit change of a user, or of every account (see `Sandbox.syncLimits`). */
  syncLimits(userId?: string): string[];
  describe(): Record<string, unknown>;
}

const invalid = (message: string) => new ApiError(422, { code: 'ValidationError', message });

/** How long `GET /__sandbox/deliveries/settled` waits without a `timeoutMs`, and at most. */
const DEFAULT_SETTLE_WAIT_MS = 30_000;
const MAX_SETTLE_WAIT_MS = 600_000;

/** Maps the registry's and the publisher's refusals to HTTP answers. */
function asApiError(error: unknown): unknown {
  if (error instanceof UserRegistryError) {
    const status = error.code === 'unknown_user' ? 404 : error.code === 'invalid_user' ? 422 : 409;
    return new ApiError(status, { code: error.code, message: error.message });
  }
  if (error instanceof EventPublishError) return new ApiError(422, { code: error.code, message: error.message });
  if (error instanceof OlderGenerationUserError) return new ApiError(422, { code: error.code, message: error.message });
  if (error instanceof CardPaymentError) {
    const status = { unknown_user: 404, unknown_card: 404, older_generation: 404, account_not_created: 409, invalid_payment: 422 }[error.code];
    return new ApiError(status, { code: error.code, message: error.message });
  }
  return error;
}

async function objectBody(request: RouteRequest): Promise<Record<string, unknown>> {
  const body = await request.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object.');
  return body as Record<string, unknown>;
}

function booleanField(body: Record<string, unknown>, name: string): boolean {
  const value = body[name];
  if (typeof value !== 'boolean') throw invalid(`${name} must be true or false; got ${JSON.stringify(value)}.`);
  return value;
}

/**
 * The sandbox's own endpoints under `/__sandbox/` on the core base URL: users and their KYC
 * changes (each emitting its event), events on demand, webhook endpoints, the delivery
 * log, the newer generation's refresh, and the clock.
 */
export function registerAdminApi(router: Router, deps: AdminApiDependencies): void {
  const guarded =
    (handler: (request: RouteRequest) => Promise<{ status: number; json: unknown }> | { status: number; json: unknown }) =>
    async (request: RouteRequest) => {
      try {
        return await handler(request);
      } catch (error) {
        throw asApiError(error);
      }
    };

  router.on('GET', '/__sandbox', () => ({ status: 200, json: deps.describe() }));

  router.on('GET', '/__sandbox/users', () => {
    deps.journey.settleDue();
    return { status: 200, json: { users: deps.users.list() } };
  });
  router.on('POST', '/__sandbox/users', guarded(async (request) => ({ status: 201, json: deps.users.create((await objectBody(request)) as UserSeed) })));
  router.on(
    'GET',
    '/__sandbox/users/:id',
    guarded((request) => {
      deps.journey.settleDue();
      const user = deps.users.get(request.params.id!);
      if (!user) throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(request.params.id)}; list them with GET /__sandbox/users.`);
      return { status: 200, json: user };
    }),
  );
  router.on(
    'PUT',
    '/__sandbox/users/:id/kyc-status',
    guarded(async (request) => {
      const { kycStatus } = await objectBody(request);
      if (!(KYC_STATUSES as readonly unknown[]).includes(kycStatus)) throw invalid(`kycStatus must be one of ${KYC_STATUSES.join(', ')}; got ${JSON.stringify(kycStatus)}.`);
      const { user, changed } = deps.users.setKycStatus(request.params.id!, kycStatus as KycStatus);
      return { status: 200, json: { user, eventEmitted: changed } };
    }),
  );
  router.on(
    'PUT',
    '/__sandbox/users/:id/phone-validation',
    guarded(async (request) => {
      const body = await objectBody(request);
      const isPhoneValidated = booleanField(body, 'isPhoneValidated');
      if (body.phone !== undefined && body.phone !== null && typeof body.phone !== 'string') throw invalid('phone must be a string or null.');
      const { user, changed } = deps.users.setPhoneValidation(request.params.id!, isPhoneValidated, body.phone as string | null | undefined);
      return { status: 200, json: { user, eventEmitted: changed } };
    }),
  );
  router.on(
    'PUT',
    '/__sandbox/users/:id/source-of-funds',
    guarded(async (request) => {
      const isSourceOfFundsAnswered = booleanField(await objectBody(request), 'isSourceOfFundsAnswered');
      const { user, changed } = deps.users.setSourceOfFunds(request.params.id!, isSourceOfFundsAnswered);
      return { status: 200, json: { user, eventEmitted: changed } };
    }),
  );

  router.on(
    'GET',
    '/__sandbox/users/:id/onboarding',
    guarded((request) => {
      if (!deps.users.has(request.params.id!)) throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(request.params.id)}; list them with GET /__sandbox/users.`);
      return { status: 200, json: { status: deps.journey.stepOf(request.params.id!) } };
    }),
  );

  // Reference 8's rules on card spending: payments as the card network would ask for them.
  router.on(
    'POST',
    '/__sandbox/users/:id/card-payments',
    guarded(async (request) => ({ status: 201, json: { authorization: deps.cardSpending.authorize(request.params.id!, (await objectBody(request)) as unknown as CardPaymentRequest) } })),
  );
  router.on(
    'GET',
    '/__sandbox/users/:id/daily-spending',
    guarded((request) => ({ status: 200, json: deps.cardSpending.spending(request.params.id!) })),
  );

  router.on('GET', '/__sandbox/older-generation-users', () => ({ status: 200, json: { olderGenerationUsers: deps.olderUsers.list() } }));
  router.on(
    'POST',
    '/__sandbox/older-generation-users',
    guarded(async (request) => {
      if (deps.tokens.generation !== 'newer') {
        throw new ApiError(404, { code: 'NotFound', message: 'Older-generation users are migrated when they register on the newer generation; start the sandbox with --generation newer.' });
      }
      return { status: 201, json: deps.olderUsers.add((await objectBody(request)) as unknown as OlderGenerationUserSeed) };
    }),
  );

  // There is no mailbox or phone: the partner's tests read the codes here.
  router.on('GET', '/__sandbox/one-time-passwords', (request) => {
    const sentTo = request.url.searchParams.get('sentTo');
    const sent = deps.passwords.sent().filter((password) => sentTo === null || password.sentTo.toLowerCase() === sentTo.toLowerCase());
    return { status: 200, json: { oneTimePasswords: sent } };
  });

  router.on(
    'POST',
    '/__sandbox/events',
    guarded(async (request) => {
      const body = await objectBody(request);
      const eventType = body.eventType;
      const unknownEventType = body.unknownEventType ?? false;
      if (typeof unknownEventType !== 'boolean') throw invalid(`unknownEventType must be true or false; got ${JSON.stringify(unknownEventType)}.`);
      // A known kind's data may have fields its schema does not define only on purpose (tolerance tests).
      const allowUnknownFields = body.allowUnknownFields ?? false;
      if (typeof allowUnknownFields !== 'boolean') throw invalid(`allowUnknownFields must be true or false; got ${JSON.stringify(allowUnknownFields)}.`);
      // A known kind's data sent without the schema check, on purpose (schema drift: a receiver's dead-letter path).
      const unchecked = body.unchecked ?? false;
      if (typeof unchecked !== 'boolean') throw invalid(`unchecked must be true or false; got ${JSON.stringify(unchecked)}.`);
      // The service's duplicate (reference 6.2), on request; absent: the sandbox's duplicateRate decides.
      const duplicate = body.duplicate;
      if (duplicate !== undefined && typeof duplicate !== 'boolean') throw invalid(`duplicate must be true or false; got ${JSON.stringify(duplicate)}.`);
      if (body.to !== undefined && (!Array.isArray(body.to) || body.to.some((url) => typeof url !== 'string'))) {
        throw invalid('to must be an array of endpoint URLs; leave it out to use the configured endpoints.');
      }
      // Reference 6.1: other kinds exist but are not shown. Sent only on request, with the
      // data given (default {}), so that partners can test how their receiver treats them.
      if (unknownEventType) {
        if (typeof eventType !== 'string') throw invalid(`eventType must be the event kind as a string; got ${JSON.stringify(eventType)}.`);
        if (body.userId !== undefined) throw invalid('userId picks the data of a known event kind; an unknown kind sends the data you give (default {}).');
        const deliveries = deps.publisher.publish(eventType, body.data ?? {}, { to: body.to as string[] | undefined, unknownEventType: true, duplicate });
        return { status: 202, json: { deliveries } };
      }
      if (typeof eventType !== 'string' || !(SANDBOX_EVENT_TYPES as readonly string[]).includes(eventType)) {
        throw invalid(unknownEventTypeMessage(eventType));
      }
      let data = body.data;
      if (data === undefined && typeof body.userId === 'string') {
        const user = deps.users.get(body.userId);
        if (user === undefined) throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(body.userId)}.`);
        // That user's event data: the User itself, or a sample transaction of that user's card.
        data = sampleEventData(eventType, user);
      }
      const deliveries = deps.publisher.publish(eventType, data ?? sampleEventData(eventType, deps.users.list()[0]), { to: body.to as string[] | undefined, allowUnknownFields, unchecked, duplicate });
      return { status: 202, json: { deliveries } };
    }),
  );

  // The webhook key service's key: rotate it, or make it answer `success: false` (reference 2.8).
  const keyState = () => ({ publicKey: deps.webhookKey.publicKey, success: deps.webhookKey.success });
  router.on('GET', '/__sandbox/webhook-key', () => ({ status: 200, json: keyState() }));
  router.on('PUT', '/__sandbox/webhook-key', async (request) => {
    deps.webhookKey.setSuccess(booleanField(await objectBody(request), 'success'));
    return { status: 200, json: keyState() };
  });
  router.on('POST', '/__sandbox/webhook-key/rotate', async () => {
    const previousPublicKey = deps.webhookKey.publicKey;
    await deps.webhookKey.rotate();
    return { status: 200, json: { ...keyState(), previousPublicKey } };
  });

  router.on('GET', '/__sandbox/deliveries', (request) => {
    // The filters of sandbox.deliveries(), by the same names: a misspelt one is refused, not
    // ignored (the whole log would look like the filtered one).
    const filter: Record<string, string> = {};
    for (const [name, value] of request.url.searchParams) {
      if (!(DELIVERY_FILTER_NAMES as string[]).includes(name)) throw invalid(`GET /__sandbox/deliveries has no filter ${JSON.stringify(name)}. Its filters: ${DELIVERY_FILTER_NAMES.join(', ')}.`);
      filter[name] = value;
    }
    let matches;
    try {
      matches = deliveryMatcher(filter, 'GET /__sandbox/deliveries');
    } catch (error) {
      throw invalid((error as Error).message);
    }
    return { status: 200, json: { deliveries: deps.scheduler.list().filter(matches) } };
  });
  // sandbox.whenDeliveriesSettled over HTTP, for a sandbox run from the command line: a long poll
  // that answers once no delivery its filters pick is in flight or waiting for a retry (those a
  // cleared log no longer shows included), or 504 after timeoutMs (30 s by default, at most 10
  // minutes: an HTTP client waits that long at most) naming the deliveries still open.
  router.on('GET', '/__sandbox/deliveries/settled', async (request) => {
    const options: { timeoutMs: number; userId?: string; url?: string; eventType?: string } = { timeoutMs: DEFAULT_SETTLE_WAIT_MS };
    for (const [name, value] of request.url.searchParams) {
      if (name === 'timeoutMs') {
        const timeoutMs = /^\d+$/.test(value) ? Number(value) : Number.NaN;
        if (!(timeoutMs > 0 && timeoutMs <= MAX_SETTLE_WAIT_MS)) throw invalid(`GET /__sandbox/deliveries/settled: timeoutMs must be whole milliseconds from 1 to ${MAX_SETTLE_WAIT_MS}; got ${JSON.stringify(value)}.`);
        options.timeoutMs = timeoutMs;
      } else if (name === 'userId' || name === 'url' || name === 'eventType') {
        options[name] = value;
      } else {
        throw invalid(`GET /__sandbox/deliveries/settled has no parameter ${JSON.stringify(name)}. Its parameters: timeoutMs, userId, url, eventType.`);
      }
    }
    try {
      await whenDeliveriesSettled(deps.scheduler, options);
    } catch (error) {
      if (error instanceof DeliveriesNotSettledError) {
        return { status: 504, json: { code: error.code, message: error.message, unsettled: error.unsettled } };
      }
      throw invalid((error as Error).message);
    }
    return { status: 200, json: { settled: true } };
  });
  router.on('DELETE', '/__sandbox/deliveries', () => {
    deps.scheduler.clear();
    return { status: 200, json: { deliveries: [] } };
  });

  router.on('GET', '/__sandbox/webhook-endpoints', () => ({ status: 200, json: { endpoints: deps.publisher.endpoints() } }));
  router.on(
    'POST',
    '/__sandbox/webhook-endpoints',
    guarded(async (request) => {
      const { url } = await objectBody(request);
      if (typeof url !== 'string') throw invalid('url must be the endpoint URL as a string, e.g. "http://localhost:3000/webhooks".');
      deps.publisher.addEndpoint(url);
      return { status: 201, json: { endpoints: deps.publisher.endpoints() } };
    }),
  );
  router.on(
    'DELETE',
    '/__sandbox/webhook-endpoints',
    guarded((request) => {
      const url = request.url.searchParams.get('url');
      if (url === null) throw invalid('Name the endpoint to remove: DELETE /__sandbox/webhook-endpoints?url=<url>.');
      if (!deps.publisher.removeEndpoint(url)) throw new ApiError(404, { code: 'NotFound', message: `${url} is not a configured endpoint.` });
      return { status: 200, json: { endpoints: deps.publisher.endpoints() } };
    }),
  );

  router.on('POST', '/__sandbox/auth/refresh', async (request) => {
    if (deps.tokens.generation !== 'newer') {
      throw new ApiError(404, { code: 'NotFound', message: 'Refresh tokens exist only in the newer generation; start the sandbox with --generation newer.' });
    }
    const { refreshToken } = await objectBody(request);
    if (typeof refreshToken !== 'string' || refreshToken === '') throw invalid('Send {"refreshToken": "<the latest refresh token>"}.');
    return { status: 200, json: await deps.tokens.refresh(refreshToken, (address) => deps.users.findByWallet(address)?.id) };
  });

  router.on('POST', '/__sandbox/limits/sync', async (request) => {
    // An empty body syncs every account, as syncLimits() does.
    const body = (await request.rawBody()).length === 0 ? {} : await objectBody(request);
    const { userId } = body;
    if (userId !== undefined && (typeof userId !== 'string' || userId === '')) throw invalid('userId must be the id of a user (or leave it out to sync every account).');
    try {
      return { status: 200, json: { synced: deps.syncLimits(userId as string | undefined) } };
    } catch (error) {
      throw asApiError(error);
    }
  });

  router.on('POST', '/__sandbox/clock', async (request) => {
    const { advanceSeconds } = await objectBody(request);
    if (typeof advanceSeconds !== 'number' || !Number.isFinite(advanceSeconds) || advanceSeconds < 0) {
      throw invalid('advanceSeconds must be a number of seconds >= 0 (the clock only moves forward).');
    }
    try {
      deps.clock.advance(advanceSeconds * 1000);
    } catch {
      throw invalid(`advanceSeconds ${advanceSeconds} would move the clock past the year 9999; advance it by less.`);
    }
    return { status: 200, json: { now: new Date(deps.clock.now()).toISOString() } };
  });
}
