// What both journeys share: a sandbox of the newer generation, a partner's real webhook
// receiver on loopback HTTP, and a client per wallet. Nothing is mocked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPartnerClient, signerFromViemAccount, type PartnerClient } from '@capi/client';
import { acceptTerms, createAccount, createCard, getUser, registerUser, requestEmailVerification, submitSourceOfFunds } from '@capi/client/onboarding';
import { startSandbox, type Sandbox, type SandboxOptions, type User } from '@capi/sandbox';
import { createMemoryDedupeStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { parseWebhookEvent } from '@capi/webhook-validator';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { expect } from 'vitest';

/** The page a partner's front end signs in from (localhost is always whitelisted). */
export const SIGN_IN_PAGE = { domain: 'localhost:3000', uri: 'http://localhost:3000/login', chainId: 100 } as const;

export interface ReceivedEvent {
  eventType: string;
  data: User;
}

export interface Journey {
  sandbox: Sandbox;
  /** Every event the receiver's handlers got, in order. */
  received: ReceivedEvent[];
  /** Where the partner's receiver listens (loopback HTTP). */
  receiverUrl: string;
  /** Makes the receiver's handler throw for the next event of `eventType` (an outage of the partner's own code). */
  failNextHandler(eventType: string): void;
  /** What the receiver gave its `onError`, in order: the error's message and the outcome it answered. */
  reported: { message: string; outcome: string }[];
  /** How many deliveries the receiver has parsed: each takes its place in its subject's line right after. */
  parsedCount(): number;
  /** Makes every handler wait until the returned function is called (a slow partner database). */
  holdHandlers(): () => void;
  close(): Promise<void>;
}

/** Starts a newer-generation sandbox and a receiver registered as its webhook endpoint. */
export async function startJourney(options: SandboxOptions): Promise<Journey> {
  const timeScale = options.timeScale ?? 600;
  const sandbox = await startSandbox({ generation: 'newer', users: [], limitSyncDelayMs: 50, ...options, timeScale });
  // The receiver trusts the key the webhook key service serves, fetched as a partner would.
  const { publicKey } = await createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl }).getWebhookPublicKey();
  const received: ReceivedEvent[] = [];
  const failing = new Set<string>();
  let held: Promise<void> | undefined;
  let parsed = 0;
  const record = async (event: { eventType: string; data: unknown }) => {
    await held;
    if (failing.delete(event.eventType)) throw new Error(`the partner's ${event.eventType} handler failed`);
    received.push({ eventType: event.eventType, data: event.data as User });
  };
  const reported: Journey['reported'] = [];
  const receiver = createWebhookReceiver({
    publicKey,
    // The sandbox's retries come after 1, 5 and 15 minutes divided by its time scale: so does
    // the least wait the store expects before a retry (a sooner copy is a newer event).
    dedupe: createMemoryDedupeStore({ minRetryDelayMs: Math.round(60_000 / timeScale) }),
    onError: (error, { outcome }) => void reported.push({ message: (error as Error).message, outcome }),
    validator: (rawBody, options) => {
      parsed += 1;
      return parseWebhookEvent(rawBody, options);
    },
  })
    .on('user.created', record)
    .on('kyc.status.changed', record)
    .on('kyc.source-of-funds.changed', record)
    .on('kyc.phone-validation.changed', record);
  const server: Server = createServer(toNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  sandbox.addWebhookEndpoint(receiverUrl);
  return {
    sandbox,
    received,
    receiverUrl,
    failNextHandler: (eventType) => void failing.add(eventType),
    reported,
    parsedCount: () => parsed,
    holdHandlers: () => {
      let release!: () => void;
      held = new Promise<void>((resolve) => { release = resolve; });
      return () => { held = undefined; release(); };
    },
    close: async () => {
      await sandbox.whenDeliveriesSettled();
      await sandbox.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
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
