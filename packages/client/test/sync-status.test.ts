// syncStatus is the spec's closed SyncStatus (pending or synced; a PUT answers pending): the
// client's types say so, and its checks hold answers to it, over loopback HTTP against the test
// service's scripted answers.
import { afterEach, describe, expect, it } from 'vitest';
import { createPartnerClient, signerFromViemAccount, UnexpectedResponseError, type PartnerClient } from '../src/index.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE } from './support/wallet.js';

const LIMIT_PATH = '/user-api/user/account/limit';
let service: PartnerService;
afterEach(() => service?.close());

/** A client signed in on the newer generation, the limit's (the older one answers it 404). */
async function signedInClient(): Promise<PartnerClient> {
  service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
  const client = createPartnerClient({ baseUrl: service.url });
  await client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE });
  return client;
}

describe('a syncStatus outside pending and synced is an UnexpectedResponseError that names it', () => {
  it('getDailyLimit', async () => {
    const client = await signedInClient();
    service.script('GET', LIMIT_PATH, { status: 200, body: { amount: 50_000, currency: 'USD', syncStatus: 'failed' } });
    const error = await client.getDailyLimit().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_limit_body', message: expect.stringContaining('syncStatus is "failed", not "pending" or "synced"') });
  });

  it('waitForLimitSync stops at the first such answer instead of polling until timeoutMs', async () => {
    const client = await signedInClient();
    service.script('GET', LIMIT_PATH, { status: 200, body: { amount: 50_000, syncStatus: 'pending' } }, { status: 200, body: { amount: 50_000, syncStatus: 'rejected' } });
    const error = await client.waitForLimitSync({ timeoutMs: 600_000, pollIntervalMs: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_limit_body', message: expect.stringContaining('"rejected"') });
    expect(service.count('GET', LIMIT_PATH)).toBe(2);
  });

  it('setDailyLimit, whose answer is typed pending, checks that it is', async () => {
    const client = await signedInClient();
    service.script('PUT', LIMIT_PATH, { status: 200, body: { amount: 50_000, syncStatus: 'synced' } });
    const error = await client.setDailyLimit({ amount: 50_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_limit_body', message: expect.stringContaining('syncStatus is "synced", not "pending" as a PUT answers (the new limit may have been set: read it with getDailyLimit())') });
    await expect(client.setDailyLimit({ amount: 50_000 })).resolves.toEqual({ amount: 50_000, currency: 'USD', syncStatus: 'pending' });
  });
});
