import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainWhitelist } from './auth/domain-whitelist.js';
import { NonceStore } from './auth/nonce-store.js';
import { TokenService } from './auth/token-service.js';
import { createSandboxClock } from './clock.js';
import { RequestValidator } from './conformance/request-validator.js';
import { SchemaCheck } from './conformance/schema-check.js';
import { SandboxConfigError } from './errors.js';
import { operations, userSchema } from './generated/openapi-contract.js';
import { ApiError } from './http/api-error.js';
import { anyOriginCorsPolicy, siweDomainCorsPolicy } from './http/cors.js';
import { logRequests } from './http/request-log.js';
import { Router } from './http/router.js';
import { withAgreedMaximum } from './limits/agreed-maximum.js';
import { CardSpending, type CardAuthorization, type CardPaymentRequest, type DailySpending } from './limits/card-spending.js';
import { defaultDailyLimitCents, LimitStore } from './limits/limit-store.js';
import { deliveryAttemptLogEntry, type SandboxLogEntry } from './log/sandbox-log.js';
import { OnboardingJourney, type OnboardingStep } from './onboarding/onboarding-journey.js';
import { OlderGenerationUserError, OlderGenerationUsers, type OlderGenerationUser, type OlderGenerationUserSeed } from './onboarding/older-generation-users.js';
import { OneTimePasswords, type SentOneTimePassword } from './onboarding/one-time-passwords.js';
import { resolveSandboxOptions, type SandboxOptions } from './options.js';
import { registerAdminApi } from './routes/admin-api.js';
import { registerCoreApi } from './routes/core-api.js';
import { registerOnboardingApi } from './routes/onboarding-api.js';
import { registerWebhookKeyApi } from './routes/webhook-key-api.js';
import type { KycStatus, User, UserSeed } from './users/user.js';
import { UserRegistry, UserRegistryError } from './users/user-registry.js';
import { readUsersFile } from './users/users-file.js';
import { DeliveryScheduler, RETRY_DELAYS_MS, type Delivery } from './webhooks/delivery-scheduler.js';
import { whenDeliveriesSettled, type WhenDeliveriesSettledOptions } from './webhooks/settle-wait.js';
import { checkOptionNames, DELIVERY_FILTER_NAMES, deliveryMatcher, type DeliveryFilter } from './webhooks/delivery-filter.js';
import { EventPublisher } from './webhooks/event-publisher.js';
import { sampleEventData, type SandboxEventType } from './webhooks/sample-event-data.js';
import { WebhookKey } from './webhooks/webhook-key.js';

/**
 * A running sandbox, as {@link startSandbox} returns it.
 *
 * @example
 * ```ts
 * const sandbox: Sandbox = await startSandbox();
 * const client = createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl });
 * ```
 */
export interface Sandbox {
  /** The core API base URL (`{base_url}`): auth, limits and the `/__sandbox/` admin endpoints. */
  readonly baseUrl: string;
  /** The webhook key service base URL (`{webhooks_url}`): `GET /api/v1/public-key`. */
  readonly webhooksUrl: string;
  /** The Ed25519 public key (PEM, SPKI) that verifies this sandbox's webhooks: the current one, after {@link Sandbox.rotateWebhookKey}. */
  readonly publicKey: string;
  /**
   * Users: create (emits `user.created`), read, and change their KYC state (each change
   * emits its event). Refusals throw {@link UserRegistryError}.
   */
  readonly users: {
    list(): User[];
    get(id: string): User | undefined;
    findByWallet(address: string): User | undefined;
    create(seed: UserSeed): User;
    setKycStatus(id: string, kycStatus: KycStatus): User;
    setPhoneValidation(id: string, isPhoneValidated: boolean, phone?: string | null): User;
    setSourceOfFunds(id: string, isSourceOfFundsAnswered: boolean): User;
    /** Newer generation: the onboarding step the user is at, as `GET /user/onboarding` answers it. */
    onboardingStatus(id: string): OnboardingStep;
  };
  /** Newer generation: adds an older-generation user to migrate when its owner registers; refusals throw {@link OlderGenerationUserError}. */
  addOlderGenerationUser(seed: OlderGenerationUserSeed): OlderGenerationUser;
  /**
   * Newer generation: simulates a card payment of a user's card against the account's daily
   * limit (reference 8), as the card network would ask the platform, and answers it: approved
   * while the day's approved total (across all the account's cards) is below the limit in
   * force, even when this payment meets or exceeds what remains; declined
   * (`daily_limit_reached`) once the total has reached it, until the next UTC day of the
   * sandbox clock. The limit in force is the last one synced: a change still `pending` does not
   * count yet. An approval sends `card.transaction.created`; a decline sends nothing. Refusals
   * throw {@link CardPaymentError}.
   */
  authorizeCardPayment(userId: string, payment: CardPaymentRequest): CardAuthorization;
  /** Newer generation: the account's card spending on the sandbox clock's current UTC day; refusals throw {@link CardPaymentError}. */
  dailySpending(userId: string): DailySpending;
  /**
   * Every one-time password the sandbox "sent" (email and SMS), oldest first: there is no real
   * mailbox or phone. `sentTo` keeps those sent to that email address or phone number, compared
   * ignoring case, as `GET /__sandbox/one-time-passwords?sentTo=` does.
   */
  oneTimePasswords(filter?: { sentTo?: string | undefined }): SentOneTimePassword[];
  /**
   * Sends one event now (to `to`, or to every configured endpoint); `data` defaults to a sample.
   * Data that does not match the event's schema, or has a field the schema does not define
   * (`data.cards[0].pan`: the service never sends one), throws {@link EventPublishError};
   * `allowUnknownFields: true` sends such fields on purpose, to test how a receiver tolerates
   * the fields of a newer schema; `unchecked: true` sends `data` (a JSON object) without any
   * check, signed like any event, to test how a receiver handles schema drift (an unknown
   * `kycStatus`, a missing field: its dead-letter store and `replay()`). `duplicate: true` sends
   * it twice to each endpoint (reference 6.2: duplicates are possible; the copy's entry names the
   * first in `copyOf`, and starts `duplicateAfterMs` after it), `false` once, whatever the
   * sandbox's `duplicateRate`.
   */
  sendEvent(eventType: SandboxEventType, data?: unknown, options?: { to?: string[]; allowUnknownFields?: boolean; unchecked?: boolean; duplicate?: boolean }): Delivery[];
  /**
   * Sends one event of a kind the SDK does not know (reference 6.1: other kinds are not shown),
   * with `data` (a JSON object, default `{}`) unchecked, to test how a receiver treats unknown
   * kinds. A known kind with this option throws {@link EventPublishError}.
   */
  sendEvent(eventType: string, data: Record<string, unknown> | undefined, options: { to?: string[]; unknownEventType: true; duplicate?: boolean }): Delivery[];
  /**
   * Replaces the webhook signing key with a fresh one and resolves to its public key: the key
   * service serves it at once, and every later delivery attempt (retries of earlier events
   * too) is signed with it. A receiver that cached the old key must refetch it. A key given as
   * `webhookPrivateKey` is replaced too, until the next start.
   */
  rotateWebhookKey(): Promise<string>;
  /**
   * What `success` the key service answers (reference 2.8): `false` makes
   * `GET {webhooks_url}/api/v1/public-key` answer `{success: false, publicKey: ""}` until
   * `true` restores it. Deliveries go on, signed with the current key.
   */
  setWebhookKeySuccess(success: boolean): void;
  addWebhookEndpoint(url: string): void;
  removeWebhookEndpoint(url: string): void;
  /**
   * The delivery log: every delivery with every attempt, oldest first; with a filter, those it
   * matches (`userId`, `eventType`, `state`, `url`, `id`; every one given must match). A filter
   * with a misspelt name or a value of the wrong type throws {@link SandboxConfigError}.
   */
  deliveries(filter?: DeliveryFilter): Delivery[];
  /**
   * Empties the delivery log, as `DELETE /__sandbox/deliveries` does. Deliveries in flight or
   * waiting for a retry go on (the log no longer shows them) and {@link Sandbox.whenDeliveriesSettled}
   * still waits for them.
   */
  clearDeliveries(): void;
  /**
   * Resolves once no delivery is in flight or waiting for a retry: with no options, every
   * delivery of the sandbox (another test's retrying delivery too), with no time limit. `userId`,
   * `url` and `eventType` wait only for the deliveries they match (those started while it waits
   * too); `timeoutMs` rejects with {@link DeliveriesNotSettledError}, which lists the deliveries
   * still unsettled, once that many milliseconds have passed. A bad option throws {@link SandboxConfigError}.
   */
  whenDeliveriesSettled(options?: WhenDeliveriesSettledOptions): Promise<void>;
  /**
   * Syncs now the pending daily-limit change of `userId`, or of every account without it: it
   * reads `synced` and card payments are checked against it, as when `limitSyncDelayMs` has
   * passed (no webhook: the service sends none for a limit). With `limitSyncDelayMs: 'manual'`
   * this is the only way a change syncs. Answers the ids of the users whose change synced; an
   * unknown `userId` throws {@link UserRegistryError}.
   */
  syncLimits(userId?: string): string[];
  /** The time scale the sandbox divides the retry delays by (`timeScale`, default 1). */
  readonly timeScale: number;
  /** How long the sandbox waits for a receiver's answer (`deliveryTimeoutMs`, default 30,000). */
  readonly deliveryTimeoutMs: number;
  /**
   * The `@capi/webhook-receiver` store settings that match this sandbox's delivery timing (the
   * receiver README's advice under a time scale N): `minRetryDelayMs` 60,000 / N (rounded down),
   * `claimTtlMs` 120,000 / N (rounded up), in whole ms as the stores take them, and
   * `replyWindowMs` the sandbox's `deliveryTimeoutMs`. Spread them into
   * `createMemoryDedupeStore` (or the Redis store); give a `createPublicKeyProvider`
   * `minRefreshIntervalMs: 15_000 / timeScale` too.
   */
  receiverOptions(): SandboxReceiverOptions;
  /** Moves the sandbox clock forward (nonces, tokens, one-time passwords, a migration's `waiting_kyc_setup`), e.g. past a token's expiry; anything but milliseconds >= 0 throws {@link SandboxConfigError}. */
  advanceClock(ms: number): void;
  /** Stops both listeners, every pending retry and every timer. */
  close(): Promise<void>;
}

/**
 * The `@capi/webhook-receiver` store options that match a sandbox's delivery timing, as
 * {@link Sandbox.receiverOptions} computes them.
 *
 * @example
 * ```ts
 * const store = createMemoryDedupeStore({ ...sandbox.receiverOptions() });
 * ```
 */
export interface SandboxReceiverOptions {
  /** The first retry wait, 60,000 ms divided by the time scale (the others are 5 and 15 times it). */
  minRetryDelayMs: number;
  /** How long a claim of a process that died mid-handler lives: 120,000 ms divided by the time scale. */
  claimTtlMs: number;
  /** How long the sandbox waits for an answer: its `deliveryTimeoutMs`. */
  replyWindowMs: number;
}

async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  // Listening on every interface (0.0.0.0, ::) is reached on loopback: a URL of 0.0.0.0 is no address to connect to.
  const connectable = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const hostForUrl = connectable.includes(':') ? `[${connectable}]` : connectable;
  return `http://${hostForUrl}:${address.port}`;
}

async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function createPublisher(scheduler: DeliveryScheduler, webhookUrls: string[]): EventPublisher {
  try {
    return new EventPublisher(scheduler, webhookUrls);
  } catch (error) {
    throw new SandboxConfigError('invalid_option', `webhookUrls: ${(error as Error).message}`);
  }
}

/** The signing key: the given one (a receiver can keep trusting it across restarts), or a fresh pair. */
async function createWebhookKey(privateKeyPem: string | undefined): Promise<WebhookKey> {
  try {
    return await WebhookKey.create(privateKeyPem);
  } catch (error) {
    throw new SandboxConfigError('invalid_option', `webhookPrivateKey is not a usable PKCS8 PEM Ed25519 private key (make one with openssl genpkey -algorithm ed25519): ${(error as Error).message}.`);
  }
}

// A logging hook that throws must not break a request or a delivery: warn once, go on.
function safeLog(onLog: ((entry: SandboxLogEntry) => void) | undefined): ((entry: SandboxLogEntry) => void) | undefined {
  if (onLog === undefined) return undefined;
  let warned = false;
  return (entry) => {
    try {
      onLog(entry);
    } catch (error) {
      if (warned) return;
      warned = true;
      process.emitWarning(`The sandbox's onLog threw (${(error as Error)?.message ?? String(error)}); its later errors are ignored.`, { code: 'CAPI_SANDBOX_ONLOG' });
    }
  };
}

/**
 * Starts a sandbox: the core API and the webhook key service on two loopback ports, with
 * seeded users, SIWE sign-in, daily limits and signed webhook delivery.
 *
 * @example
 * ```ts
 * import { startSandbox } from '@capi/sandbox';
 *
 * const sandbox = await startSandbox({ webhookUrls: ['http://localhost:3000/webhooks'], timeScale: 60 });
 * const user = sandbox.users.create({ signInWallets: [account.address] }); // emits user.created
 * sandbox.users.setKycStatus(user.id, 'approved'); // emits kyc.status.changed
 * await sandbox.whenDeliveriesSettled();
 * await sandbox.close();
 * ```
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const config = resolveSandboxOptions(options);
  // The journey settles what fell due whenever the clock is moved forward (it is made below, before any request).
  const clock = createSandboxClock(config.now, () => journey.settleDue());
  // The signing key: rotatable, and the key service's `success` switchable (/__sandbox/webhook-key).
  const webhookKey = await createWebhookKey(config.webhookPrivateKey);
  const log = safeLog(config.onLog);
  const scheduler = new DeliveryScheduler({
    signer: webhookKey,
    timeScale: config.timeScale,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    duplicateRate: config.duplicateRate,
    duplicateAfterMs: config.duplicateAfterMs,
    ...(log ? { onAttempt: (delivery: Delivery, attempt: Delivery['attempts'][number]) => log(deliveryAttemptLogEntry(delivery, attempt)) } : {}),
  });
  const publisher = createPublisher(scheduler, config.webhookUrls);
  const users = new UserRegistry(new SchemaCheck(userSchema, 'user'), (eventType, user) => publisher.publish(eventType, user), config.generation === 'newer');
  const seeds = [...config.users, ...(config.usersFile ? await readUsersFile(config.usersFile) : [])];
  seeds.forEach((seed, index) => {
    try {
      users.seed(seed);
    } catch (error) {
      throw new SandboxConfigError('invalid_user', `User ${index + 1} of the seeded users is unusable: ${(error as Error).message}`);
    }
  });
  const olderUsers = new OlderGenerationUsers();
  config.olderGenerationUsers.forEach((seed, index) => {
    try {
      olderUsers.add(seed);
    } catch (error) {
      throw new SandboxConfigError('invalid_option', `olderGenerationUsers[${index}]: ${(error as Error).message}`);
    }
  });
  const passwords = new OneTimePasswords(clock.now);
  const journey = new OnboardingJourney(users, olderUsers, passwords, { requirePhone: config.requirePhone, kycSetupMs: config.migrationKycSetupMs, now: clock.now });
  const tokens = new TokenService(config.generation, clock.now);
  const limits = new LimitStore(config.limitSyncDelayMs, defaultDailyLimitCents(config.maxDailyLimitCents));
  const syncLimits = (userId?: string): string[] => {
    if (userId !== undefined && !users.has(userId)) {
      throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(userId)}; list them with sandbox.users.list() (GET /__sandbox/users), or sync every account (no userId).`);
    }
    return limits.syncPending(userId);
  };
  const cardSpending = new CardSpending({
    users,
    limits,
    generation: config.generation,
    now: clock.now,
    onTransaction: (transaction) => publisher.publish('card.transaction.created', transaction),
  });

  const coreRouter = new Router();
  const webhooksRouter = new Router();
  const validator = new RequestValidator(withAgreedMaximum(operations, config.maxDailyLimitCents));
  const whitelist = new DomainWhitelist(config.whitelist);
  registerCoreApi(coreRouter, {
    operations,
    validator,
    nonces: new NonceStore(clock.now),
    clockAheadMs: clock.aheadMs,
    whitelist,
    users,
    tokens,
    limits,
    journey,
    now: clock.now,
    maxDailyLimitCents: config.maxDailyLimitCents,
    ...(config.verifySmartAccountSignature ? { verifySmartAccountSignature: config.verifySmartAccountSignature } : {}),
  });
  registerOnboardingApi(coreRouter, { operations, validator, tokens, users, journey, passwords, generation: config.generation });
  registerWebhookKeyApi(webhooksRouter, webhookKey);
  // A client that mixes up the two base URLs gets told which one to use.
  coreRouter.on('GET', '/api/v1/public-key', () => {
    throw new ApiError(404, { code: 'NotFound', message: `The webhook public key is served by the webhook key service: GET ${webhooksUrl}/api/v1/public-key.` });
  });

  // Browsers: the core API (and /__sandbox/) allows the origins whose host is an allowed SIWE
  // domain; the public key, public and stateless, may be read from any origin.
  const coreListener = coreRouter.listener(undefined, siweDomainCorsPolicy(whitelist));
  const webhooksListener = webhooksRouter.listener(undefined, anyOriginCorsPolicy);
  const coreServer = createServer(log ? logRequests(coreListener, log) : coreListener);
  const webhooksServer = createServer(log ? logRequests(webhooksListener, log) : webhooksListener);
  let baseUrl = '';
  let webhooksUrl = '';
  registerAdminApi(coreRouter, {
    users,
    journey,
    olderUsers,
    passwords,
    publisher,
    scheduler,
    tokens,
    clock,
    webhookKey,
    cardSpending,
    syncLimits: (userId) => syncLimits(userId),
    describe: () => ({
      baseUrl,
      webhooksUrl,
      publicKey: webhookKey.publicKey,
      webhookKeySuccess: webhookKey.success,
      generation: config.generation,
      requirePhone: config.requirePhone,
      maxDailyLimitCents: config.maxDailyLimitCents,
      defaultDailyLimitCents: defaultDailyLimitCents(config.maxDailyLimitCents),
      migrationKycSetupMs: config.migrationKycSetupMs,
      timeScale: config.timeScale,
      deliveryTimeoutMs: config.deliveryTimeoutMs,
      duplicateRate: config.duplicateRate,
      duplicateAfterMs: config.duplicateAfterMs,
      limitSyncDelayMs: config.limitSyncDelayMs,
      whitelist: ['localhost', ...config.whitelist],
      webhookEndpoints: publisher.endpoints(),
    }),
  });
  try {
    baseUrl = await listen(coreServer, config.port, config.host);
    webhooksUrl = await listen(webhooksServer, config.webhooksPort, config.host);
  } catch (error) {
    await Promise.all([closeServer(coreServer), closeServer(webhooksServer)]);
    throw new SandboxConfigError('invalid_option', `Cannot listen on ${config.host}: ${(error as Error).message}; choose other ports (0 picks free ones).`);
  }

  let closed: Promise<void> | undefined;
  return {
    baseUrl,
    webhooksUrl,
    get publicKey() {
      return webhookKey.publicKey;
    },
    users: {
      list: () => users.list(),
      get: (id) => users.get(id),
      findByWallet: (address) => users.findByWallet(address),
      create: (seed) => users.create(seed),
      setKycStatus: (id, kycStatus) => users.setKycStatus(id, kycStatus).user,
      setPhoneValidation: (id, isPhoneValidated, phone) => users.setPhoneValidation(id, isPhoneValidated, phone).user,
      setSourceOfFunds: (id, answered) => users.setSourceOfFunds(id, answered).user,
      onboardingStatus: (id) => {
        if (!users.has(id)) throw new UserRegistryError('unknown_user', `No user with id ${JSON.stringify(id)}; list them with sandbox.users.list().`);
        return journey.stepOf(id);
      },
    },
    addOlderGenerationUser: (seed) => {
      if (config.generation !== 'newer') throw new OlderGenerationUserError('Older-generation users are migrated when they register on the newer generation; start the sandbox with generation "newer".');
      return olderUsers.add(seed);
    },
    authorizeCardPayment: (userId, payment) => cardSpending.authorize(userId, payment),
    dailySpending: (userId) => cardSpending.spending(userId),
    oneTimePasswords: (filter) => {
      const sentTo = filter?.sentTo;
      if (sentTo !== undefined && typeof sentTo !== 'string') {
        throw new SandboxConfigError('invalid_option', `oneTimePasswords({ sentTo }) takes the email address or phone number they were sent to; got ${JSON.stringify(sentTo)}.`);
      }
      // As GET /__sandbox/one-time-passwords?sentTo=: compared ignoring case.
      return passwords.sent().filter((password) => sentTo === undefined || password.sentTo.toLowerCase() === sentTo.toLowerCase());
    },
    sendEvent: (eventType: string, data?: unknown, sendOptions?: { to?: string[]; unknownEventType?: boolean; allowUnknownFields?: boolean; unchecked?: boolean; duplicate?: boolean }) => {
      const unknownEventType = sendOptions?.unknownEventType;
      const allowUnknownFields = sendOptions?.allowUnknownFields;
      const unchecked = sendOptions?.unchecked;
      // An unknown kind has no sample: its data is what the caller gives, or {}.
      const fallback = () => (unknownEventType === true ? {} : sampleEventData(eventType, users.list()[0]));
      return publisher.publish(eventType, data ?? fallback(), {
        to: sendOptions?.to,
        ...(unknownEventType === undefined ? {} : { unknownEventType }),
        ...(allowUnknownFields === undefined ? {} : { allowUnknownFields }),
        ...(unchecked === undefined ? {} : { unchecked }),
        duplicate: sendOptions?.duplicate,
      });
    },
    rotateWebhookKey: () => webhookKey.rotate(),
    setWebhookKeySuccess: (success) => {
      if (typeof success !== 'boolean') throw new SandboxConfigError('invalid_option', `setWebhookKeySuccess takes true or false; got ${JSON.stringify(success)}.`);
      webhookKey.setSuccess(success);
    },
    addWebhookEndpoint: (url) => void publisher.addEndpoint(url),
    removeWebhookEndpoint: (url) => void publisher.removeEndpoint(url),
    deliveries: (filter) => {
      if (filter === undefined) return scheduler.list();
      checkOptionNames(filter, DELIVERY_FILTER_NAMES, 'deliveries', '{ userId, state }');
      return scheduler.list().filter(deliveryMatcher(filter, 'deliveries'));
    },
    clearDeliveries: () => scheduler.clear(),
    // Without options: every delivery, no time limit, as before the options existed.
    whenDeliveriesSettled: (waitOptions) => whenDeliveriesSettled(scheduler, waitOptions),
    syncLimits,
    timeScale: config.timeScale,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    // In whole ms, as the stores take them: the first wait rounded down (a retry that comes on
    // time is never sooner than it), the claim's life rounded up; at least 1 ms each.
    receiverOptions: () => ({
      minRetryDelayMs: Math.max(1, Math.floor(RETRY_DELAYS_MS[0] / config.timeScale)),
      claimTtlMs: Math.max(1, Math.ceil(120_000 / config.timeScale)),
      replyWindowMs: config.deliveryTimeoutMs,
    }),
    advanceClock: (ms) => clock.advance(ms),
    close: () =>
      (closed ??= (async () => {
        scheduler.close();
        limits.close();
        journey.close();
        await Promise.all([closeServer(coreServer), closeServer(webhooksServer)]);
      })()),
  };
}
