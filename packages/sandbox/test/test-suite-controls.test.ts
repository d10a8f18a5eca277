// What a partner's own test suite needs from the sandbox (a helper's partner test-suite trial):
// waits for its own user's deliveries with a time limit, daily limits that sync when the test
// says, the delivery timing to configure a receiver with, the log's reset and the codes sent to
// one address as the admin API has them, and why a SIWE message fails after advanceClock.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryDedupeStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveriesNotSettledError, SandboxConfigError, startSandbox, UserRegistryError, type Sandbox } from '../src/index.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { getNonce, newAccount, siweMessage, tokenFor } from './support/sign-in.js';

const sandboxes: Sandbox[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function start(options: Parameters<typeof startSandbox>[0]): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  sandboxes.push(sandbox);
  return sandbox;
}

/** A receiver that answers 500 to every event about a user in `failing`, 204 to the others. */
async function receiverFailingFor(failing: Set<string>): Promise<string> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id?: string } };
    response.writeHead(failing.has(event.data.id ?? '') ? 500 : 204).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

/**
 * A sandbox at `timeScale` whose receiver answers 500 to every event of one user, who is
 * created and given a KYC change: two deliveries of that user keep retrying.
 */
async function sandboxWithFailingUser(timeScale: number, email: string) {
  const failing = new Set<string>();
  const url = await receiverFailingFor(failing);
  const sandbox = await start({ users: [], timeScale, webhookUrls: [url] });
  const user = sandbox.users.create({ email });
  // Added before the first POST reaches the receiver (deliveries start after signing).
  failing.add(user.id);
  sandbox.users.setKycStatus(user.id, 'processing');
  return { sandbox, url, failing, user };
}

describe('whenDeliveriesSettled waits for the deliveries it is told to, for as long as it is told to', () => {
  it('{ userId } resolves while another user\'s delivery is still retrying', async () => {
    // 60: the first retry waits 1 s, the next 5 s; another test's user keeps retrying meanwhile.
    const { sandbox, url, user: other } = await sandboxWithFailingUser(60, 'other@example.com');
    const mine = sandbox.users.create({ email: 'mine@example.com' });
    sandbox.users.setKycStatus(mine.id, 'approved');
    await sandbox.whenDeliveriesSettled({ userId: mine.id, timeoutMs: 3_000 });
    const deliveries = sandbox.deliveries();
    const of = (id: string) => deliveries.filter((delivery) => (delivery.event as { data: { id: string } }).data.id === id);
    expect(of(mine.id).map((delivery) => delivery.state)).toEqual(['succeeded', 'succeeded']);
    expect(of(other.id).some((delivery) => delivery.state === 'retrying' || delivery.state === 'delivering')).toBe(true);
    // eventType and url filter the same way; a bare origin is compared as the log shows it.
    await sandbox.whenDeliveriesSettled({ eventType: 'user.created', userId: mine.id, url, timeoutMs: 1_000 });
  });

  it('{ timeoutMs } rejects with DeliveriesNotSettledError naming each unsettled delivery: url, kind, state, attempts, last outcome, next attempt', async () => {
    const { sandbox, url, user } = await sandboxWithFailingUser(60, 'stuck@example.com');
    const started = Date.now();
    const error = await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 300 }).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(DeliveriesNotSettledError);
    const notSettled = error as DeliveriesNotSettledError;
    expect(notSettled).toMatchObject({ name: 'DeliveriesNotSettledError', code: 'deliveries_not_settled', timeoutMs: 300 });
    expect(notSettled.unsettled.map((delivery) => delivery.eventType).sort()).toEqual(['kyc.status.changed', 'user.created']);
    expect(notSettled.message).toMatch(/^2 deliveries have not settled within 300 ms:/);
    expect(notSettled.message).toContain(`- kyc.status.changed to ${url}: retrying, 1 attempt, last failed (HTTP 500), next attempt at 20`);
    expect(notSettled.message).toContain(`- user.created to ${url}: retrying, 1 attempt`);
  });

  it('keeps waiting for deliveries the log no longer shows after clearDeliveries(), and refuses options it does not take', async () => {
    const { sandbox, failing, user } = await sandboxWithFailingUser(600, 'cleared@example.com');
    sandbox.clearDeliveries();
    expect(sandbox.deliveries()).toEqual([]);
    await expect(sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 50 })).rejects.toThrow(DeliveriesNotSettledError);
    failing.delete(user.id);
    // Their retries (100 ms at time scale 600) now succeed.
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 3_000 });
    expect(sandbox.deliveries()).toEqual([]);
    expect(() => sandbox.whenDeliveriesSettled({ user: user.id } as never)).toThrow(SandboxConfigError);
    expect(() => sandbox.whenDeliveriesSettled({ user: user.id } as never)).toThrow(/no option "user".*timeoutMs, userId, url, eventType/);
    expect(() => sandbox.whenDeliveriesSettled({ timeoutMs: 0 })).toThrow(/timeoutMs must be a number of milliseconds > 0/);
  });
});

describe('deliveries(filter) keeps one user\'s, one kind\'s or one state\'s deliveries, as GET /__sandbox/deliveries?… does', () => {
  it('{ userId, state, eventType } and the query parameters of the same names list the same deliveries', async () => {
    const { sandbox, user: failing } = await sandboxWithFailingUser(60, 'failing@example.com');
    const mine = sandbox.users.create({ email: 'mine@example.com' });
    sandbox.users.setKycStatus(mine.id, 'approved');
    await sandbox.whenDeliveriesSettled({ userId: mine.id, timeoutMs: 3_000 });

    const ofMine = sandbox.deliveries({ userId: mine.id });
    expect(ofMine.map((delivery) => [delivery.eventType, delivery.state])).toEqual([['user.created', 'succeeded'], ['kyc.status.changed', 'succeeded']]);
    expect(sandbox.deliveries({ userId: mine.id, state: 'failed' })).toEqual([]);
    const failingKyc = sandbox.deliveries({ userId: failing.id, eventType: 'kyc.status.changed' });
    expect(failingKyc).toHaveLength(1);
    expect(['delivering', 'retrying']).toContain(failingKyc[0]!.state);
    expect(sandbox.deliveries({ id: ofMine[0]!.id })).toEqual([ofMine[0]]);
    expect(sandbox.deliveries({})).toEqual(sandbox.deliveries());

    const viaHttp = await callAdmin(sandbox.baseUrl, 'GET', `/__sandbox/deliveries?userId=${mine.id}&state=succeeded`);
    expect(viaHttp).toEqual({ status: 200, body: { deliveries: ofMine } });
  });

  it('refuses a misspelt filter or a state that is none, instead of listing the whole log', async () => {
    const sandbox = await start({ users: [] });
    expect(() => sandbox.deliveries({ userid: 'x' } as never)).toThrow(SandboxConfigError);
    expect(() => sandbox.deliveries({ userid: 'x' } as never)).toThrow(/deliveries has no option "userid"; did you mean userId\? Its options: id, userId, url, eventType, state/);
    expect(() => sandbox.deliveries({ state: 'done' as never })).toThrow(/state must be one of scheduled, delivering, retrying, succeeded, failed; got "done"/);
    expect(() => sandbox.deliveries({ userId: 42 as never })).toThrow(/deliveries's userId must be a string; got 42/);

    const misspelt = await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/deliveries?userid=x');
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.message).toBe('GET /__sandbox/deliveries has no filter "userid". Its filters: id, userId, url, eventType, state.');
    const noSuchState = await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/deliveries?state=done');
    expect(noSuchState.status).toBe(422);
    expect(noSuchState.body.message).toMatch(/state must be one of scheduled, delivering, retrying, succeeded, failed/);
  });

  it('GET /__sandbox names the delivery timeout and the limit sync delay, as the sandbox was started with', async () => {
    const manual = await start({ users: [], deliveryTimeoutMs: 5_000, limitSyncDelayMs: 'manual' });
    expect((await callAdmin(manual.baseUrl, 'GET', '/__sandbox')).body).toMatchObject({ deliveryTimeoutMs: 5_000, limitSyncDelayMs: 'manual' });
    const defaults = await start({ users: [] });
    expect((await callAdmin(defaults.baseUrl, 'GET', '/__sandbox')).body).toMatchObject({ deliveryTimeoutMs: 30_000, limitSyncDelayMs: 2_000 });
  });
});

describe('clearDeliveries() and oneTimePasswords({ sentTo }) do what their admin routes do', () => {
  it('clearDeliveries() empties the log as DELETE /__sandbox/deliveries does', async () => {
    const url = await receiverFailingFor(new Set());
    const sandbox = await start({ users: [], webhookUrls: [url] });
    sandbox.users.create({ email: 'a@example.com' });
    await sandbox.whenDeliveriesSettled({ timeoutMs: 3_000 });
    expect(sandbox.deliveries()).toHaveLength(1);
    sandbox.clearDeliveries();
    expect(sandbox.deliveries()).toEqual([]);
    expect((await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/deliveries')).body).toEqual({ deliveries: [] });
  });

  it('oneTimePasswords({ sentTo }) keeps those sent to that address, ignoring case, as ?sentTo= does', async () => {
    const sandbox = await start({ generation: 'newer', users: [] });
    for (const email of ['Ada@Example.com', 'lin@example.com']) {
      const token = await tokenFor(sandbox.baseUrl, newAccount());
      expect((await callOperation(sandbox.baseUrl, 'requestEmailVerification', { token, body: { email } })).status).toBe(200);
    }
    const filtered = sandbox.oneTimePasswords({ sentTo: 'ada@example.COM' });
    expect(filtered.map((sent) => sent.sentTo)).toEqual(['Ada@Example.com']);
    const overHttp = await callAdmin(sandbox.baseUrl, 'GET', '/__sandbox/one-time-passwords?sentTo=ada%40example.COM');
    expect(overHttp.body).toEqual({ oneTimePasswords: filtered });
    expect(sandbox.oneTimePasswords({})).toHaveLength(2);
    expect(sandbox.oneTimePasswords()).toHaveLength(2);
  });
});

describe("limitSyncDelayMs: 'manual' and syncLimits() put the limit's sync in the test's hands", () => {
  const owner = newAccount();
  const seed = () => ({ signInWallets: [owner.address], smartWallets: [{ address: newAccount().address, chainId: '100' }], cards: [{ id: 'card_1', cardToken: 'tok_1', lastFourDigits: '4242', embossedName: null, activatedAt: null, virtual: true }] });

  it('a change stays pending, out of force, until syncLimits(userId) syncs it', async () => {
    const sandbox = await start({ generation: 'newer', users: [seed()], limitSyncDelayMs: 'manual' });
    const token = await tokenFor(sandbox.baseUrl, owner);
    const userId = sandbox.users.findByWallet(owner.address)!.id;
    expect((await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 5_000, currency: 'USD' } })).body).toMatchObject({ syncStatus: 'pending' });
    await new Promise((resolve) => setTimeout(resolve, 2_300)); // longer than the default 2,000 ms
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toEqual({ amount: 5_000, currency: 'USD', syncStatus: 'pending' });
    expect(sandbox.dailySpending(userId).limitInForceCents).toBe(1_000_000);
    expect(sandbox.syncLimits(userId)).toEqual([userId]);
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toEqual({ amount: 5_000, currency: 'USD', syncStatus: 'synced' });
    expect(sandbox.dailySpending(userId).limitInForceCents).toBe(5_000);
    // Nothing pending: nothing to sync. An unknown user is refused.
    expect(sandbox.syncLimits()).toEqual([]);
    expect(() => sandbox.syncLimits('usr_nobody')).toThrow(UserRegistryError);
  });

  it('syncLimits() syncs every pending change before its timer', async () => {
    const sandbox = await start({ generation: 'newer', users: [seed()], limitSyncDelayMs: 60_000 });
    const token = await tokenFor(sandbox.baseUrl, owner);
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 7_000, currency: 'USD' } });
    expect(sandbox.syncLimits()).toEqual([sandbox.users.findByWallet(owner.address)!.id]);
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toMatchObject({ amount: 7_000, syncStatus: 'synced' });
  });

  it('POST /__sandbox/limits/sync does the same over HTTP (a user, or every account with no body)', async () => {
    const sandbox = await start({ generation: 'newer', users: [seed()], limitSyncDelayMs: 'manual' });
    const token = await tokenFor(sandbox.baseUrl, owner);
    const userId = sandbox.users.findByWallet(owner.address)!.id;
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 6_000, currency: 'USD' } });
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/limits/sync', { userId: 'usr_nobody' })).toMatchObject({ status: 404, body: { code: 'unknown_user' } });
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/limits/sync', { userId: 42 })).toMatchObject({ status: 422 });
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/limits/sync', { userId })).toMatchObject({ status: 200, body: { synced: [userId] } });
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toMatchObject({ amount: 6_000, syncStatus: 'synced' });
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 6_500, currency: 'USD' } });
    expect(await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/limits/sync')).toMatchObject({ status: 200, body: { synced: [userId] } });
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toMatchObject({ amount: 6_500, syncStatus: 'synced' });
  });

  it('refuses Infinity, pointing to "manual"', async () => {
    await expect(startSandbox({ limitSyncDelayMs: Infinity })).rejects.toThrow(/"manual"/);
    await expect(startSandbox({ limitSyncDelayMs: 'later' as never })).rejects.toThrow(/or "manual"/);
  });
});

describe('the delivery timing, to configure a receiver with', () => {
  it('timeScale, deliveryTimeoutMs and receiverOptions() follow the options (the receiver README\'s scaled settings)', async () => {
    const sandbox = await start({ users: [], timeScale: 600, deliveryTimeoutMs: 2_000 });
    expect(sandbox.timeScale).toBe(600);
    expect(sandbox.deliveryTimeoutMs).toBe(2_000);
    expect(sandbox.receiverOptions()).toEqual({ minRetryDelayMs: 100, claimTtlMs: 200, replyWindowMs: 2_000 });
    const defaults = await start({ users: [] });
    expect([defaults.timeScale, defaults.deliveryTimeoutMs]).toEqual([1, 30_000]);
    expect(defaults.receiverOptions()).toEqual({ minRetryDelayMs: 60_000, claimTtlMs: 120_000, replyWindowMs: 30_000 });
    // A time scale that does not divide them: whole ms, which the stores take (they refuse fractions).
    const sevenfold = await start({ users: [], timeScale: 7 });
    expect(sevenfold.receiverOptions()).toEqual({ minRetryDelayMs: 8_571, claimTtlMs: 17_143, replyWindowMs: 30_000 });
    expect(createMemoryDedupeStore({ ...sevenfold.receiverOptions() }).minRetryDelayMs).toBe(8_571);
  });

  it('a @capi/webhook-receiver given receiverOptions() ends on the last KYC state when a failed earlier event is retried after a later one', async () => {
    const sandbox = await start({ users: [], timeScale: 600 });
    const latest = new Map<string, string>();
    let failNext = false;
    const receiver = createWebhookReceiver({
      publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key`, minRefreshIntervalMs: 15_000 / sandbox.timeScale }),
      dedupe: createMemoryDedupeStore({ ...sandbox.receiverOptions() }),
      onError: () => {},
    }).on('kyc.status.changed', (event) => {
      if (failNext) {
        failNext = false;
        throw new Error('partner database unavailable');
      }
      latest.set(event.data.id, event.data.kycStatus);
    });
    const server = createServer(toNodeHandler(receiver));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sandbox.addWebhookEndpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
    const user = sandbox.users.create({ email: 'kyc@example.com' });
    await sandbox.whenDeliveriesSettled({ timeoutMs: 3_000 });
    failNext = true;
    sandbox.users.setKycStatus(user.id, 'pending');
    await new Promise((resolve) => setTimeout(resolve, 20));
    sandbox.users.setKycStatus(user.id, 'approved');
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 5_000 });
    const kyc = sandbox.deliveries().filter((delivery) => delivery.eventType === 'kyc.status.changed');
    expect(kyc[0]!.attempts.map((attempt) => attempt.status)).toEqual([500, expect.any(Number)]);
    expect(latest.get(user.id)).toBe('approved');
  });
});

describe('a SIWE message refused for its times after advanceClock says the sandbox clock is ahead', () => {
  it('names how far ahead it is; without advanceClock the message is unchanged', async () => {
    const account = newAccount();
    const sandbox = await start({ users: [{ signInWallets: [account.address] }] });
    const challenge = async () => {
      const nonce = await getNonce(sandbox.baseUrl);
      const message = siweMessage(account, nonce, { expirationTime: new Date(Date.now() + 10 * 60_000) });
      return callOperation(sandbox.baseUrl, 'verifySiweSignature', { body: { message, signature: await account.signMessage({ message }), ttlInSeconds: 3600 } });
    };
    expect((await challenge()).status).toBe(200);
    sandbox.advanceClock(16 * 60_000);
    const refused = await challenge();
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatch(/sign a fresh message\. The sandbox clock is 16 minutes ahead of real time \(advanceClock/);
    expect(refused.body.error).toMatch(/expirationTime more than 16 minutes away/);
    const fresh = await start({ users: [{ signInWallets: [account.address] }] });
    const nonce = await getNonce(fresh.baseUrl);
    const expired = siweMessage(account, nonce, { expirationTime: new Date(Date.now() - 1_000), issuedAt: new Date(Date.now() - 60_000) });
    const answer = await callOperation(fresh.baseUrl, 'verifySiweSignature', { body: { message: expired, signature: await account.signMessage({ message: expired }), ttlInSeconds: 3600 } });
    expect(answer.body.error).toBe('The SIWE message is not valid at this time (check expirationTime and notBefore); sign a fresh message.');
  });
});
