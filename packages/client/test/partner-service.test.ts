// The HTTP test double (support/partner-service.ts) against @capi/sandbox, the repository's
// stand-in for the live service: where the other tests lean on the double, it must answer as
// the sandbox does. Each operation exists on its generation only (the spec's x-generation: the
// daily limit on the newer one, the SMS phone verification on the older one), and a wallet
// that has not registered signs in all the same, then is refused where a user is needed.
import { startSandbox, type Sandbox } from '@capi/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { createPartnerClient, signerFromViemAccount } from '../src/index.js';
import { LEGACY_PHONE_VERIFICATION_PATH, LIMIT_PATH, startPartnerService, type Generation, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE, unregisteredAccount } from './support/wallet.js';

/** The smart account of the registered wallet's user: on the newer generation it has its account (and so a limit). */
const SMART_ACCOUNT = { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' };

let sandbox: Sandbox | undefined;
let service: PartnerService | undefined;
afterEach(async () => {
  await sandbox?.close();
  await service?.close();
  sandbox = undefined;
  service = undefined;
});

/** What a deployment answers a wallet: its token's claims about registration, then each operation's status and body (the keys of a 200's). */
async function answersTo(baseUrl: string, account: typeof registeredAccount) {
  const client = createPartnerClient({ baseUrl, retries: 0 });
  const { token } = await client.signInWithEthereum({ ...signerFromViemAccount(account), ...SIGN_IN_PAGE });
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  const call = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await response.json()) as Record<string, unknown>;
    return { status: response.status, body: response.ok ? Object.keys(json).sort() : json };
  };
  return {
    claims: { hasSignedUp: claims.hasSignedUp, hasUserId: 'userId' in claims },
    getLimit: await call('GET', LIMIT_PATH),
    setLimit: await call('PUT', LIMIT_PATH, { amount: 50_000, currency: 'USD' }),
    legacyPhoneVerification: await call('POST', LEGACY_PHONE_VERIFICATION_PATH, { phone: '+15555550123' }),
  };
}

describe.each(['older', 'newer'] as const)('the %s generation', (generation: Generation) => {
  it.each([
    ['a registered wallet', registeredAccount],
    ['a wallet that has not registered', unregisteredAccount],
  ])('%s: the same claims, statuses and refusals as the sandbox', async (_wallet, account) => {
    sandbox = await startSandbox({ generation, users: [{ signInWallets: [registeredAccount.address], ...(generation === 'newer' ? { smartWallets: [SMART_ACCOUNT] } : {}) }] });
    service = await startPartnerService({ generation, registeredAddresses: [registeredAccount.address] });
    const expected = await answersTo(sandbox.baseUrl, account);
    expect(await answersTo(service.url, account)).toEqual(expected);

    // What the sandbox answers, so that the comparison above is known to cover it.
    const registered = account === registeredAccount;
    expect(expected.claims).toEqual({ hasSignedUp: registered, hasUserId: registered });
    const notHere = (other: Generation) => ({ status: 404, body: { code: 'NotFound', message: expect.stringContaining(`exists only on the ${other} generation`) } });
    const notRegistered = { status: 401, body: { code: 'UserNotRegistered', message: expect.stringContaining('hasSignedUp: false') } };
    if (generation === 'older') {
      expect(expected).toMatchObject({ getLimit: notHere('newer'), setLimit: notHere('newer'), legacyPhoneVerification: registered ? { status: 200 } : notRegistered });
    } else {
      expect(expected).toMatchObject({ getLimit: registered ? { status: 200 } : notRegistered, setLimit: registered ? { status: 200 } : notRegistered, legacyPhoneVerification: notHere('older') });
    }
  });
});
