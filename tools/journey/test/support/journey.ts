// What both journeys share: a sandbox of the newer generation, a partner's real webhook
// receiver on loopback HTTP (or several instances of it behind a load balancer, sharing one
// real Redis), and a client per wallet. Nothing is mocked.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPartnerClient, signerFromViemAccount, type PartnerClient } from '@capi/client';
import { acceptTerms, createAccount, createCard, getUser, registerUser, requestEmailVerification, submitSourceOfFunds } from '@capi/client/onboarding';
import { startSandbox, type Sandbox, type SandboxOptions, type User } from '@capi/sandbox';
import { createMemoryDedupeStore, createRedisDedupeStore, createWebhookReceiver, toNodeHandler, type DeadLetterStore, type ReplayReport, type WebhookReceiver } from '@capi/webhook-receiver';
import { Redis } from 'ioredis';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { expect, vi } from 'vitest';

/** The page a partner's front end signs in from (localhost is always whitelisted). */
export const SIGN_IN_PAGE = { domain: 'localhost:3000', uri: 'http://localhost:3000/login', chainId: 100 } as const;

export interface ReceivedEvent {
  eventType: string;
  data: User;
}

export interface Journey {
  sandbox: Sandbox;
  /** Every user and KYC event the receiver's handlers got, in order. */
  received: ReceivedEvent[];
  /** The `data` of every `card.transaction.created` the receiver's handler got, in order. */
  transactions: Record<string, unknown>[];
  /** Where the partner's receiver listens (loopback HTTP): the load balancer, with several instances. */
  receiverUrl: string;
  /** Makes the receiver's handler throw for the next event of `eventType` (an outage of the partner's own code). */
  failNextHandler(eventType: string): void;
  /** What the receiver gave its `onError`, in order: the error's message and the outcome it answered. */
  reported: { message: string; outcome: string }[];
  /** How many deliveries the receiver has parsed: each takes its place in its subject's line right after. */
  parsedCount(): number;
  /** Makes every handler wait until the returned function is called (a slow partner database). */
  holdHandlers(): () => void;
  /** `receiver.replay()` of the (first) receiver: runs its dead letters again. */
  replay(): Promise<ReplayReport>;
  close(): Promise<void>;
}

/**
 * How the partner runs its receiver: one process with the memory store (the default), or
 * `instances` processes behind a round-robin load balancer, sharing the Redis at `redisPort`
 * (each instance its own receiver, its own Redis connection and its own lines, as separate
 * processes have).
 */
export interface ReceiverSetup {
  instances: number;
  redisPort: number;
}

/** How the partner configures its receiver beyond the defaults: answering 202 before the handlers run, with a dead-letter store. */
export interface ReceiverOptions {
  acknowledgeEarly?: boolean;
  deadLetters?: DeadLetterStore;
}

/** Starts a newer-generation sandbox and a receiver registered as its webhook endpoint. */
export async function startJourney(options: SandboxOptions, setup?: ReceiverSetup, receiverOptions: ReceiverOptions = {}): Promise<Journey> {
  const timeScale = options.timeScale ?? 600;
  const sandbox = await startSandbox({ generation: 'newer', users: [], limitSyncDelayMs: 50, ...options, timeScale });
  // The receiver trusts the key the webhook key service serves, fetched as a partner would.
  const { publicKey } = await createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl }).getWebhookPublicKey();
  const received: ReceivedEvent[] = [];
  const transactions: Record<string, unknown>[] = [];
  const failing = new Set<string>();
  let held: Promise<void> | undefined;
  let parsed = 0;
  const record = async (event: { eventType: string; data: unknown }) => {
    await held;
    if (failing.delete(event.eventType)) throw new Error(`the partner's ${event.eventType} handler failed`);
    if (event.eventType === 'card.transaction.created') transactions.push(event.data as Record<string, unknown>);
    else received.push({ eventType: event.eventType, data: event.data as User });
  };
  const reported: Journey['reported'] = [];
  // The sandbox's retries come after 1, 5 and 15 minutes divided by its time scale: so does
  // the least wait the store expects before a retry (a sooner copy is a newer event).
  const minRetryDelayMs = Math.round(60_000 / timeScale);
  const redisClients: Redis[] = [];
  const receivers: WebhookReceiver[] = [];
  const instance = () => {
    let dedupe;
    if (setup === undefined) {
      dedupe = createMemoryDedupeStore({ minRetryDelayMs });
    } else {
      const client = new Redis({ host: '127.0.0.1', port: setup.redisPort, maxRetriesPerRequest: 1 });
      // A second connection for wake-ups: a hand-over between instances happens at once.
      const subscriber = client.duplicate();
      redisClients.push(client, subscriber);
      dedupe = createRedisDedupeStore({ client, subscriber, keyPrefix: `journey-${sandbox.baseUrl}:`, minRetryDelayMs });
    }
    const receiver = createWebhookReceiver({
      publicKey,
      dedupe,
      ...receiverOptions,
      onError: (error, { outcome }) => void reported.push({ message: (error as Error).message, outcome }),
      validator: (rawBody, options) => {
        parsed += 1;
        return parseWebhookEvent(rawBody, options);
      },
    })
      .on('user.created', record)
      .on('kyc.status.changed', record)
      .on('kyc.source-of-funds.changed', record)
      .on('kyc.phone-validation.changed', record)
      .on('card.transaction.created', record);
    receivers.push(receiver);
    return createServer(toNodeHandler(receiver));
  };
  const servers: Server[] = Array.from({ length: setup?.instances ?? 1 }, instance);
  const urls = await Promise.all(servers.map(listen));
  if (setup !== undefined) servers.push(roundRobin(urls));
  const receiverUrl = setup === undefined ? urls[0]! : await listen(servers.at(-1)!);
  sandbox.addWebhookEndpoint(receiverUrl);
  return {
    sandbox,
    received,
    transactions,
    receiverUrl,
    failNextHandler: (eventType) => void failing.add(eventType),
    reported,
    parsedCount: () => parsed,
    holdHandlers: () => {
      let release!: () => void;
      held = new Promise<void>((resolve) => { release = resolve; });
      return () => { held = undefined; release(); };
    },
    replay: () => receivers[0]!.replay(),
    close: async () => {
      await sandbox.whenDeliveriesSettled();
      await sandbox.close();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })));
      for (const client of redisClients) client.disconnect();
    },
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

/** A load balancer: each request goes to the next of `urls` in turn, body and headers as they came. */
function roundRobin(urls: string[]): Server {
  let next = 0;
  return createServer((incoming, outgoing) => {
    const forwarded = request(urls[next++ % urls.length]!, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(forwarded);
  });
}

/** A brand-new wallet and a client for it. */
export function newWallet(sandbox: Sandbox): { account: PrivateKeyAccount; client: PartnerClient } {
  return { account: privateKeyToAccount(generatePrivateKey()), client: createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl }) };
}

/** Signs the wallet in through the client (nonce, SIWE, challenge) and returns the token. */
export async function signIn(client: PartnerClient, account: PrivateKeyAccount): Promise<string> {
  return (await client.signInWithEthereum({ ...signerFromViemAccount(account), ...SIGN_IN_PAGE })).token;
}

/** Calls one of the sandbox's admin endpoints, as a partner's test does over HTTP. */
export async function admin<T = any>(sandbox: Sandbox, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return (await response.json()) as T;
}

/** The last one-time password the sandbox "sent" to `sentTo` (there is no mailbox or phone). */
export async function lastOneTimePassword(sandbox: Sandbox, sentTo: string): Promise<string> {
  const { oneTimePasswords } = await admin<{ oneTimePasswords: { code: string }[] }>(sandbox, 'GET', `/__sandbox/one-time-passwords?sentTo=${encodeURIComponent(sentTo)}`);
  return oneTimePasswords.at(-1)!.code;
}

/** The user as the API answers it now (`GET /user`, through the client). */
export function apiUser(client: PartnerClient): Promise<User> {
  return getUser(client);
}

/**
 * Waits for every delivery, then checks that the receiver got exactly `eventTypes` since the
 * last check, and that each one's User equals what the API answers now.
 */
export async function expectNewEvents(
  journey: Journey,
  seen: { count: number },
  client: PartnerClient,
  eventTypes: string[],
  { anyOrder = false }: { anyOrder?: boolean } = {},
): Promise<void> {
  await journey.sandbox.whenDeliveriesSettled();
  const fresh = journey.received.slice(seen.count);
  seen.count = journey.received.length;
  // Events of different subjects sent at once have no order (reference 6.2): anyOrder compares them as a set.
  const types = fresh.map((event) => event.eventType);
  if (anyOrder) expect(types.sort()).toEqual([...eventTypes].sort());
  else expect(types).toEqual(eventTypes);
  if (fresh.length === 0) return;
  const now = await apiUser(client);
  for (const event of fresh) expect(event.data).toEqual(now);
}

/**
 * A brand-new wallet taken through the whole onboarding by the client (KYC approved from the
 * admin API, no phone verification: the card sets the phone), ready to use its limit.
 */
export async function onboardedUser(journey: Journey, email: string): Promise<{ account: PrivateKeyAccount; client: PartnerClient; user: User }> {
  const { sandbox } = journey;
  const { account, client } = newWallet(sandbox);
  await signIn(client, account);
  await requestEmailVerification(client, { email });
  const { id } = await registerUser(client, { email, otp: await lastOneTimePassword(sandbox, email) });
  await acceptTerms(client);
  await admin(sandbox, 'PUT', `/__sandbox/users/${id}/kyc-status`, { kycStatus: 'approved' });
  await submitSourceOfFunds(client, { answers: [{ question: 'Main source of income?', answer: 'Employment' }] });
  await createAccount(client);
  const user = await createCard(client, { virtual: true, phone: '+15555550100' });
  await sandbox.whenDeliveriesSettled();
  return { account, client, user };
}

/**
 * Sets a user's KYC status from the admin API (the platform's side). With `failing`, the
 * partner's handler fails on that event's first attempt, which has been answered 500 when this
 * returns.
 */
export async function changeKyc(journey: Journey, userId: string, kycStatus: string, { failing = false } = {}): Promise<void> {
  const before = journey.sandbox.deliveries().length;
  if (failing) journey.failNextHandler('kyc.status.changed');
  await admin(journey.sandbox, 'PUT', `/__sandbox/users/${userId}/kyc-status`, { kycStatus });
  if (failing) await vi.waitFor(() => expect(journey.sandbox.deliveries()[before]?.attempts[0]?.status).toBe(500));
}

/**
 * A late retry, for a journey whose retries come seconds after a failure: `pending` fails,
 * `approved` is processed, then `pending`'s retry comes. It must be answered `superseded` and
 * reach no handler, so that the partner stays on the API's `approved`.
 */
export async function expectLateRetrySuperseded(journey: Journey, email: string): Promise<void> {
  const { client, user } = await onboardedUser(journey, email);
  const seen = { count: journey.received.length };
  const before = journey.sandbox.deliveries().length;
  await changeKyc(journey, user.id, 'pending', { failing: true });
  await changeKyc(journey, user.id, 'approved');
  await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
  expect(journey.received.at(-1)!.data.kycStatus).toBe('approved');
  const [pending, approved] = journey.sandbox.deliveries().slice(before);
  expect(approved!.attempts.map((attempt) => attempt.status)).toEqual([200]);
  // The retry was acknowledged (the service stops), as superseded: handled, it would have
  // left the partner on pending while the API says approved.
  expect(pending!.attempts.map((attempt) => attempt.status)).toEqual([500, 200]);
  expect(JSON.parse(pending!.attempts[1]!.responseBody!)).toMatchObject({ code: 'superseded' });
}

/**
 * An outage of the partner's database: `pending` and `approved` both fail their first attempt.
 * Both retries must be handled, once each, in order, ending on the API's `approved`.
 */
export async function expectOutageRetriesInOrder(journey: Journey, email: string): Promise<void> {
  const { client, user } = await onboardedUser(journey, email);
  const seen = { count: journey.received.length };
  const before = journey.sandbox.deliveries().length;
  await changeKyc(journey, user.id, 'pending', { failing: true });
  await changeKyc(journey, user.id, 'approved', { failing: true });
  await journey.sandbox.whenDeliveriesSettled();
  const fresh = journey.received.slice(seen.count);
  expect(fresh.map((event) => event.data.kycStatus)).toEqual(['pending', 'approved']);
  expect(fresh.at(-1)!.data).toEqual(await apiUser(client));
  const deliveries = journey.sandbox.deliveries().slice(before);
  expect(deliveries.map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[500, 200], [500, 200]]);
  expect(deliveries.map((delivery) => JSON.parse(delivery.attempts[1]!.responseBody!).code)).toEqual(['processed', 'processed']);
}

/**
 * Three changes in quick succession while the partner's handlers are held (a slow database):
 * `resubmissionRequested`, `pending`, `approved`, each sent once the previous one has reached
 * the receiver and asked for its subject. Released, they must be handled in that order, each on
 * its first attempt (none answered 409 and retried later), ending on the API's `approved`.
 */
export async function expectHeldChangesInOrder(journey: Journey, email: string): Promise<void> {
  const { client, user } = await onboardedUser(journey, email);
  const seen = journey.received.length;
  const deliveriesBefore = journey.sandbox.deliveries().length;
  const release = journey.holdHandlers();
  for (const kycStatus of ['resubmissionRequested', 'pending', 'approved']) {
    const parsed = journey.parsedCount();
    await changeKyc(journey, user.id, kycStatus);
    // Parsed, then a moment to ask the store for the subject, before the next change.
    while (journey.parsedCount() === parsed) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  release();
  await journey.sandbox.whenDeliveriesSettled();
  const fresh = journey.received.slice(seen);
  expect(fresh.map((event) => event.data.kycStatus)).toEqual(['resubmissionRequested', 'pending', 'approved']);
  expect(fresh.at(-1)!.data).toEqual(await apiUser(client));
  const deliveries = journey.sandbox.deliveries().slice(deliveriesBefore);
  expect(deliveries.map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[200], [200], [200]]);
}

/** An event the platform sends again (what a retry after a lost answer looks like): answered `duplicate`, and no handler runs. */
export async function expectRepeatedDeliveryDuplicate(journey: Journey, email: string): Promise<void> {
  const { client, user } = await onboardedUser(journey, email);
  const seen = { count: journey.received.length };
  await changeKyc(journey, user.id, 'processing');
  await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
  const { deliveries } = await admin<{ deliveries: { id: string }[] }>(journey.sandbox, 'POST', '/__sandbox/events', { eventType: 'kyc.status.changed', userId: user.id });
  await expectNewEvents(journey, seen, client, []);
  const again = journey.sandbox.deliveries().find((entry) => entry.id === deliveries[0]!.id)!;
  expect(again.state).toBe('succeeded');
  expect(JSON.parse(again.attempts[0]!.responseBody!)).toMatchObject({ code: 'duplicate' });
}

/**
 * A user's whole life (onboarding, then KYC approved -> resubmissionRequested -> approved ->
 * resubmissionRequested) on a journey whose sandbox sends every event twice (`duplicateRate: 1`):
 * each event reaches the handlers once, in order, the User the API answers, the return to an
 * earlier state included; each pair of copies is answered processed + duplicate.
 */
export async function expectEachEventOnceWhenSentTwice(journey: Journey, email: string): Promise<void> {
  const { client, user } = await onboardedUser(journey, email);
  const seen = { count: journey.received.length };
  for (const kycStatus of ['resubmissionRequested', 'approved', 'resubmissionRequested']) {
    await admin(journey.sandbox, 'PUT', `/__sandbox/users/${user.id}/kyc-status`, { kycStatus });
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
  }
  const mine = (event: ReceivedEvent) => event.data.id === user.id;
  expect(journey.received.filter((event) => mine(event) && event.eventType === 'kyc.status.changed').map((event) => event.data.kycStatus).slice(-3))
    .toEqual(['resubmissionRequested', 'approved', 'resubmissionRequested']);
  // Every event went out twice, both copies acknowledged: one processed, the other a duplicate.
  const deliveries = journey.sandbox.deliveries({ userId: user.id });
  const copies = deliveries.filter((delivery) => delivery.copyOf !== undefined);
  expect(copies.length * 2).toBe(deliveries.length);
  const answers = copies.map((copy) => {
    const first = deliveries.find((delivery) => delivery.id === copy.copyOf)!;
    return [first, copy].map((delivery) => `${delivery.attempts.at(-1)!.status} ${JSON.parse(delivery.attempts.at(-1)!.responseBody!).code}`).sort().join(' + ');
  });
  expect(new Set(answers)).toEqual(new Set(['200 duplicate + 200 processed']));
  // One handler call per event of this user: as many as the events the platform sent.
  expect(journey.received.filter(mine).length + journey.transactions.filter((data) => data.userId === user.id).length).toBe(copies.length);
  expect(journey.received.filter(mine).at(-1)!.data).toEqual(await apiUser(client));
}
