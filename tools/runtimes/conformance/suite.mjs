// The conformance suite of the published packages, written once for every runtime: it only
// uses web globals (fetch, crypto, Request/Response) and imports the packages by their names,
// so each runtime resolves them through its own export conditions. The runtime's entry point
// (node.mjs, bun.mjs, deno.mjs, worker.mjs) supplies the HTTP server and prints the results.
import { createPartnerClient, signerFromViemAccount, TokenManager } from '@capi/client';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from '@capi/event-types';
import { createTransactionalDedupeStore, createWebhookReceiver } from '@capi/webhook-receiver';
import {
  generateWebhookKeyPair,
  isValidWebhookSignature,
  signWebhook,
  verifyWebhookSignature,
  WebhookSignatureError,
} from '@capi/webhook-signature';
import { validateWebhookEvent } from '@capi/webhook-validator';
import { privateKeyToAccount } from 'viem/accounts';

/** The packages whose resolved entry file each runtime reports. */
export const PACKAGES = ['@capi/webhook-signature', '@capi/webhook-validator', '@capi/event-types', '@capi/webhook-receiver', '@capi/client'];

/** A complete user snapshot, as every user event carries it. */
export function makeUser(id, overrides = {}) {
  return {
    id, email: `${id}@example.com`, phone: null, firstName: 'Ada', lastName: 'Lovelace',
    address1: '1 Main Street', address2: null, city: 'Berlin', postalCode: '10115', state: null,
    country: 'DE', nationalityCountry: 'DE',
    signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }],
    smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }],
    kycStatus: 'approved', availableFeatures: { providerIban: true },
    cards: [{ id: `card-${id}`, cardToken: `tok-${id}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: null, virtual: true }],
    bankingDetails: null, isSourceOfFundsAnswered: true, isPhoneValidated: false,
    ...overrides,
  };
}

/** A `kyc.status.changed` body: the user `id` with that `kycStatus` (not checked: a drifted one too). */
export const kycEventBody = (id, kycStatus) => JSON.stringify({ eventType: 'kyc.status.changed', data: makeUser(id, { kycStatus }) });

const kycBody = (kycStatus) => kycEventBody('usr_conformance', kycStatus);

async function errorCode(promise) {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error instanceof WebhookSignatureError ? error.code : `${error?.name}: ${error?.message}`;
  }
}

/** Sign and verify, and refuse what must be refused (@capi/webhook-signature). */
export async function signatureChecks() {
  const { publicKey, privateKey } = await generateWebhookKeyPair();
  const other = await generateWebhookKeyPair();
  const rawBody = kycBody('approved');
  const signed = await signWebhook({ rawBody, privateKey });
  const again = await signWebhook({ rawBody, privateKey, timestamp: signed.timestamp });
  const verify = (overrides) => verifyWebhookSignature({ rawBody, timestamp: signed.timestamp, signature: signed.signature, publicKey, ...overrides });
  const old = await signWebhook({ rawBody, privateKey, timestamp: Math.floor(Date.now() / 1000) - 3600 });
  return {
    verifies: await errorCode(verify({})),
    verifiesBytes: await errorCode(verify({ rawBody: new TextEncoder().encode(rawBody) })),
    deterministic: again.signature === signed.signature,
    tamperedBody: await errorCode(verify({ rawBody: rawBody.replace('approved', 'rejected') })),
    otherKey: await errorCode(verify({ publicKey: other.publicKey })),
    tooOld: await errorCode(verify({ timestamp: old.timestamp, signature: old.signature })),
    missingSignature: await errorCode(verify({ signature: null })),
    // The all-zero key of an .env template: refused, never a verifying key (issue 14).
    zeroKey: await errorCode(verify({ publicKey: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' })),
    isValidFalse: await isValidWebhookSignature({ rawBody: 'other', timestamp: signed.timestamp, signature: signed.signature, publicKey }),
  };
}

/** Validate events and refuse invalid ones (@capi/webhook-validator, @capi/event-types). */
export function validatorChecks() {
  const valid = validateWebhookEvent(JSON.parse(kycBody('approved')));
  const badEnum = validateWebhookEvent(JSON.parse(kycBody('no_such_status')));
  const missing = JSON.parse(kycBody('approved'));
  delete missing.data.email;
  const missingField = validateWebhookEvent(missing);
  const unknown = validateWebhookEvent({ eventType: 'no.such.event', data: {} });
  return {
    valid: valid.ok,
    badEnum: { ok: badEnum.ok, paths: badEnum.ok ? [] : badEnum.errors.map((error) => error.path) },
    missingField: missingField.ok,
    unknownEventType: unknown.ok === false && unknown.unknownEventType === true,
    eventTypes: WEBHOOK_EVENT_TYPES.length,
    isKnown: isWebhookEventType('kyc.status.changed'),
    isUnknown: isWebhookEventType('no.such.event'),
  };
}

/**
 * A receiver whose handlers count dispatches per KYC status, and which keeps what its onError
 * hears (`<code> <outcome>`; the default would print to stderr, which fails the run), for
 * `receiveChecks`. Its dedupe store: the default memory store, or `dedupe`.
 * @param {string} publicKey
 * @param {import('@capi/webhook-receiver').DedupeStore} [dedupe]
 */
export function createCountingReceiver(publicKey, dedupe) {
  const dispatched = [];
  const reported = [];
  const receiver = createWebhookReceiver({ publicKey, ...(dedupe ? { dedupe } : {}), onError: (error, { outcome }) => { reported.push(`${error?.code} ${outcome}`); } })
    .on('kyc.status.changed', (event) => { dispatched.push(event.data.kycStatus); });
  return { receiver, dispatched, reported };
}

/**
 * The transactional store (`createTransactionalDedupeStore`) over a `transact` that keeps the
 * values in a Map, one key at a time, with a pause between the read and the write as a
 * database's round trips make: the store's own code (its JSON records, its tokens from
 * `crypto.randomUUID`) run on each runtime, as a partner's database client would drive it.
 */
export function createMapTransactionalStore() {
  const rows = new Map();
  const turns = new Map();
  return createTransactionalDedupeStore({
    async transact(key, change) {
      const before = turns.get(key) ?? Promise.resolve();
      let done;
      turns.set(key, before.then(() => new Promise((resolve) => { done = resolve; })));
      await before;
      try {
        await new Promise((resolve) => setTimeout(resolve, 1));
        const next = change(rows.get(key));
        if (next.value === undefined) rows.delete(key);
        else if (next.changed) rows.set(key, next.value);
      } finally {
        done();
      }
    },
  });
}

/**
 * A receiver with `acknowledgeEarly`, served by the runtime's server WITHOUT `waitUntil`, whose
 * handler takes 50 ms: on a long-lived server (Node, Bun, Deno) it answers 202 and the handler
 * runs after the reply; on workerd, which cancels a request's work after its Response, it
 * answers after the handler (200) and reports `wait_until_missing` once. For `earlyChecks`.
 * @param {string} publicKey
 */
export function createEarlyReceiver(publicKey) {
  const dispatched = [];
  const reported = [];
  const receiver = createWebhookReceiver({ publicKey, acknowledgeEarly: true, onError: (error, { outcome }) => { reported.push(`${error?.code} ${outcome}`); } })
    .on('kyc.status.changed', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      dispatched.push(event.data.kycStatus);
    });
  return { receiver, dispatched, reported };
}

/**
 * Two signed events of one user to the receiver of `createEarlyReceiver` at `url`: how each was
 * answered, and what its handler and onError saw within 2 s after.
 * @param {{ url: string, privateKey: string, dispatched: () => Promise<string[]> | string[], reported: () => Promise<string[]> | string[] }} options
 */
export async function earlyChecks({ url, privateKey, dispatched, reported }) {
  const deliver = async (rawBody) => {
    const signed = await signWebhook({ rawBody, privateKey });
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signed.headers }, body: rawBody });
    return `${response.status} ${(await response.json()).code}`;
  };
  const replies = [await deliver(kycEventBody('usr_early', 'pending')), await deliver(kycEventBody('usr_early', 'approved'))];
  for (let waited = 0; waited < 2_000 && (await dispatched()).length < 2; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
  return { replies, dispatched: [...(await dispatched())], reported: [...(await reported())] };
}

/**
 * Signed deliveries over HTTP to a receiver at `url`: A -> B -> A is dispatched three times,
 * a retry of the latest (re-signed, same body) not at all, a forgery is refused (and reported
 * to onError, as a wrong key would be).
 * @param {{ url: string, privateKey: string, dispatched: () => Promise<string[]> | string[], reported: () => Promise<string[]> | string[] }} options
 */
export async function receiveChecks({ url, privateKey, dispatched, reported }) {
  const deliver = async (rawBody, signature) => {
    const signed = await signWebhook({ rawBody, privateKey });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signed.headers, ...(signature ? { 'X-Webhook-Signature': signature } : {}) },
      body: rawBody,
    });
    const body = await response.json();
    return `${response.status} ${body.code}`;
  };
  const replies = {
    first: await deliver(kycBody('pending')),
    second: await deliver(kycBody('resubmissionRequested')),
    third: await deliver(kycBody('pending')),
    retryOfLatest: await deliver(kycBody('pending')),
    forged: await deliver(kycBody('approved'), btoa(String.fromCharCode(...new Uint8Array(64)))),
  };
  return { replies, dispatched: [...(await dispatched())], reported: [...(await reported())] };
}

/**
 * A signed-in call against the sandbox (started on Node) from this runtime (@capi/client).
 * @param {{ baseUrl: string, webhooksUrl: string, walletPrivateKey: `0x${string}` }} sandbox
 */
export async function clientChecks(sandbox) {
  const client = createPartnerClient({ baseUrl: sandbox.baseUrl, webhooksUrl: sandbox.webhooksUrl });
  const session = await client.signInWithEthereum({
    ...signerFromViemAccount(privateKeyToAccount(sandbox.walletPrivateKey)),
    domain: 'localhost', uri: 'http://localhost/', chainId: 100,
  });
  const limit = await client.getDailyLimit();
  const { publicKey } = await client.getWebhookPublicKey();
  let unauthenticated;
  try {
    await client.getDailyLimit({ auth: false });
    unauthenticated = 'resolved';
  } catch (error) {
    unauthenticated = `${error?.name} ${error?.status}`;
  }
  return { signedIn: typeof session.token === 'string' && session.expiresAt > Date.now(), limitAmount: limit.amount, publicKey, unauthenticated };
}

/**
 * Deno only, run with --allow-net=127.0.0.1: a host it may not reach (`localhost`) is refused
 * by the runtime (NotCapable), before anything is sent. The client says so without retrying,
 * and a `refresh` callback refused that way keeps its refresh token (nothing reached the service).
 * @param {{ baseUrl: string }} sandbox
 */
export async function denoPermissionChecks(sandbox) {
  const deniedUrl = sandbox.baseUrl.replace('127.0.0.1', 'localhost');
  let attempts = 0;
  const counting = (/** @type {Parameters<typeof fetch>} */ ...args) => ((attempts += 1), fetch(...args));
  const denied = await createPartnerClient({ baseUrl: deniedUrl, fetch: counting, retries: { count: 2, baseDelayMs: 1 } })
    .getDailyLimit({ auth: false })
    .catch((error) => error);
  const offered = [];
  const tokenManager = new TokenManager({
    tokens: { token: 'expired.access.token', refreshToken: 'kept-refresh-token', expiresAt: new Date(Date.now() - 1000) },
    refresh: async (refreshToken) => {
      offered.push(refreshToken);
      await fetch(`${deniedUrl}/auth/refresh`, { method: 'POST' });
      throw new Error('unreachable: the fetch above is refused');
    },
  });
  const client = createPartnerClient({ baseUrl: sandbox.baseUrl, tokenManager });
  const refreshErrors = [];
  for (let call = 0; call < 2; call++) refreshErrors.push(await client.getDailyLimit().catch((error) => `${error?.name} ${error?.code} ${error?.cause?.name}`));
  return {
    request: { name: denied?.name, code: denied?.code, causeName: denied?.cause?.name, attempts, namesFlag: /--allow-net/.test(denied?.message ?? '') },
    refresh: { errors: refreshErrors, offered },
  };
}

/**
 * Everything but the HTTP server: the runtime-independent part of the suite.
 * @param {{ sandbox: { baseUrl: string, webhooksUrl: string, walletPrivateKey: `0x${string}` } }} input
 */
export async function runChecks({ sandbox }) {
  return { signature: await signatureChecks(), validator: validatorChecks(), client: await clientChecks(sandbox) };
}
