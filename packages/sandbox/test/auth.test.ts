import { decodeJwt } from 'jose';
import { SiweMessage } from 'siwe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { callAdmin, callOperation } from './support/sandbox-api.js';
import { getNonce, newAccount, signIn, siweMessage, tokenFor } from './support/sign-in.js';

const registered = newAccount();
const unregistered = newAccount();
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ users: [{ signInWallets: [registered.address] }], whitelist: ['app.partner.example'] });
});
afterAll(() => sandbox.close());

/**
 * An authenticated operation of the older generation, the one this sandbox runs: the SMS
 * verification (the daily limit is the newer generation's, reference 9 and service facts).
 */
const authenticatedCall = (token?: string) => callOperation(sandbox.baseUrl, 'requestLegacyPhoneVerification', { ...(token === undefined ? {} : { token }), body: { phone: '+15555550123' } });

async function challenge(body: unknown) {
  return callOperation(sandbox.baseUrl, 'verifySiweSignature', { body });
}

describe('issues a unique nonce per request, as text/plain', () => {
  it('answers 200 text/plain with an alphanumeric nonce of at least 8 characters, never twice the same', async () => {
    const nonces = await Promise.all(Array.from({ length: 50 }, () => getNonce(sandbox.baseUrl)));
    expect(new Set(nonces).size).toBe(50);
    for (const nonce of nonces) expect(nonce).toMatch(/^[a-zA-Z0-9]{8,}$/);
  });
});

describe('issues a JWT for a valid SIWE signature of a registered EOA', () => {
  it('answers 200 {token} whose lifetime is ttlInSeconds and whose claims name the user and signer', async () => {
    const response = await signIn(sandbox.baseUrl, registered, { ttlInSeconds: 7200 });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['token']);
    const claims = decodeJwt(response.body.token);
    expect(claims.exp! - claims.iat!).toBe(7200);
    expect(claims.signerAddress).toBe(registered.address);
    expect(claims.chainId).toBe('100');
    expect(claims.hasSignedUp).toBe(true);
    expect(claims.userId).toBe(sandbox.users.findByWallet(registered.address)!.id);
  });

  it('accepts localhost with any port and a whitelisted domain', async () => {
    for (const domain of ['localhost', 'localhost:5173', 'app.partner.example', 'app.partner.example:8443']) {
      const response = await signIn(sandbox.baseUrl, registered, { domain, uri: `https://${domain}` });
      expect(response.status, domain).toBe(200);
    }
  });
});

describe('gives exactly one success to concurrent challenges reusing one nonce', () => {
  it('500 concurrent challenges with the same signed nonce: one 200, 499 401', async () => {
    const nonce = await getNonce(sandbox.baseUrl);
    const message = siweMessage(registered, nonce);
    const signature = await registered.signMessage({ message });
    const responses = await Promise.all(
      Array.from({ length: 500 }, () => challenge({ message, signature, ttlInSeconds: 3600 })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 401)).toHaveLength(499);
    expect(responses.find((response) => response.status === 401)!.body.error).toMatch(/already used/);
  });
});

describe('refuses a nonce that is unknown, used or older than 5 minutes', () => {
  it('answers 401 for a nonce the sandbox never issued', async () => {
    const message = siweMessage(registered, 'neverIssued123');
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatch(/unknown or was already used/);
  });

  it('answers 401 for a nonce used after its 5 minutes', async () => {
    const nonce = await getNonce(sandbox.baseUrl);
    sandbox.advanceClock(5 * 60 * 1000 + 1000);
    const message = siweMessage(registered, nonce, { issuedAt: new Date(Date.now() + 5 * 60 * 1000 + 1000) });
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatch(/expired/);
  });
});

describe('spends the nonce of every attempt that names it, refused ones too (reference 5 rule 2: a new nonce per attempt)', () => {
  const send = async (message: string) => challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });

  it.each([
    ['403 DomainNotWhitelisted', 403, (nonce: string) => siweMessage(registered, nonce, { domain: 'evil.example', uri: 'https://evil.example' })],
    ['422 for a message the sandbox refuses (Version 2)', 422, (nonce: string) => siweMessage(registered, nonce).replace('\nVersion: 1\n', '\nVersion: 2\n')],
    ['401 for a message past its expirationTime', 401, (nonce: string) => siweMessage(registered, nonce, { expirationTime: new Date(Date.now() - 1_000) })],
  ])('after %s, a valid message over the same nonce is refused 401 as a used nonce', async (_name, status, refusedMessage) => {
    const nonce = await getNonce(sandbox.baseUrl);
    expect((await send(refusedMessage(nonce))).status).toBe(status);
    const again = await send(siweMessage(registered, nonce));
    expect(again.status).toBe(401);
    expect(again.body.error).toMatch(/unknown or was already used; every sign-in needs a new nonce/);
    // A new nonce signs in.
    expect((await send(siweMessage(registered, await getNonce(sandbox.baseUrl)))).status).toBe(200);
  });
});

describe('answers 401 for a SIWE message outside its validity window (expirationTime, notBefore)', () => {
  it('refuses a message whose expirationTime has passed on the sandbox clock, with a fresh nonce', async () => {
    const message = siweMessage(registered, await getNonce(sandbox.baseUrl), { expirationTime: new Date(Date.now() + 10_000) });
    const signature = await registered.signMessage({ message });
    sandbox.advanceClock(11_000);
    const response = await challenge({ message, signature, ttlInSeconds: 3600 });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatch(/not valid at this time \(check expirationTime and notBefore\); sign a fresh message/);
  });

  it('refuses a message whose notBefore is still ahead, and accepts the same kind of message once it has come', async () => {
    const notYet = siweMessage(registered, await getNonce(sandbox.baseUrl), { notBefore: new Date(Date.now() + 60 * 60 * 1000) });
    const refused = await challenge({ message: notYet, signature: await registered.signMessage({ message: notYet }), ttlInSeconds: 3600 });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatch(/not valid at this time/);
    // The refused attempt used its nonce up: each attempt needs a new one (reference 5 rule 2).
    const replay = await challenge({ message: notYet, signature: await registered.signMessage({ message: notYet }), ttlInSeconds: 3600 });
    expect(replay.body.error).toMatch(/unknown or was already used/);
    const due = siweMessage(registered, await getNonce(sandbox.baseUrl), { notBefore: new Date(Date.now() - 1000) });
    expect((await challenge({ message: due, signature: await registered.signMessage({ message: due }), ttlInSeconds: 3600 })).status).toBe(200);
  });
});

describe('answers 403 WAFForbidden for a SIWE message on 127.0.0.1', () => {
  it('blocks 127.0.0.1 as domain (with or without port) or as URI, before validating anything else', async () => {
    for (const [domain, uri] of [['127.0.0.1', 'http://127.0.0.1'], ['127.0.0.1:3000', 'http://127.0.0.1:3000'], ['localhost:3000', 'http://127.0.0.1:3000/login']]) {
      const message = siweMessage(registered, await getNonce(sandbox.baseUrl), { domain: domain!, uri: uri! });
      // ttlInSeconds out of range too: the firewall answers first.
      const response = await challenge({ message, signature: '0x00', ttlInSeconds: 1 });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('WAFForbidden');
      expect(response.body.message).toMatch(/use localhost/);
    }
  });
});

describe('answers 403 DomainNotWhitelisted for a domain outside the whitelist', () => {
  it('refuses an unknown domain and a whitelisted host on another port than the configured one', async () => {
    const response = await signIn(sandbox.baseUrl, registered, { domain: 'evil.example', uri: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('DomainNotWhitelisted');
    expect(response.body.message).toMatch(/evil\.example/);
  });
});

describe('answers 401 for an invalid signature', () => {
  it('refuses a signature by another wallet and a signature that is not one', async () => {
    const nonce = await getNonce(sandbox.baseUrl);
    const message = siweMessage(registered, nonce);
    const response = await challenge({ message, signature: await unregistered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatch(/does not match/);
    const message2 = siweMessage(registered, await getNonce(sandbox.baseUrl));
    const garbage = await challenge({ message: message2, signature: '0xdeadbeef', ttlInSeconds: 3600 });
    expect(garbage.status).toBe(401);
  });

  it('refuses a message that was changed after signing', async () => {
    const message = siweMessage(registered, await getNonce(sandbox.baseUrl));
    const signature = await registered.signMessage({ message });
    const response = await challenge({ message: message.replace('Sign in with Ethereum to the app.', 'Sign in to something else.'), signature, ttlInSeconds: 3600 });
    expect(response.status).toBe(401);
  });
});

describe('signs in a wallet without an account, which the other routes then refuse (reference 5 rule 1)', () => {
  it('gives a valid signature from an unregistered wallet a token with hasSignedUp false and no userId', async () => {
    const response = await signIn(sandbox.baseUrl, unregistered);
    expect(response.status).toBe(200);
    const claims = decodeJwt(response.body.token);
    expect(claims).toMatchObject({ hasSignedUp: false, signerAddress: unregistered.address, sub: unregistered.address });
    expect(claims.userId).toBeUndefined();
  });

  it('answers 401 on an authenticated route to that token, saying how to register', async () => {
    const token = await tokenFor(sandbox.baseUrl, unregistered);
    const response = await authenticatedCall(token);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'UserNotRegistered', message: expect.stringMatching(/owns no registered account.*register it first/) });
  });
});

describe('refuses an all-lowercase (unchecksummed) SIWE address with 422, as the siwe package does', () => {
  it('answers 422 naming EIP-55, for an address the siwe package also refuses', async () => {
    const message = siweMessage(registered, await getNonce(sandbox.baseUrl)).replace(registered.address, registered.address.toLowerCase());
    expect(() => new SiweMessage(message)).toThrow();
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(422);
    expect(response.body.message).toMatch(/EIP-55 checksummed/);
    // The checksummed form of the same message is accepted by both.
    const checksummed = siweMessage(registered, await getNonce(sandbox.baseUrl));
    expect(new SiweMessage(checksummed).address).toBe(registered.address);
    expect((await challenge({ message: checksummed, signature: await registered.signMessage({ message: checksummed }), ttlInSeconds: 3600 })).status).toBe(200);
  });
});

describe('refuses with 422 a signed message the EIP-4361 grammar (the siwe package) refuses, though viem parses it', () => {
  // Each is signed by a registered wallet over a fresh nonce: only its form is wrong.
  const statement = (text: string) => (message: string) => message.replace('Sign in with Ethereum to the app.', text);
  it.each([
    ['a line slipped in between the statement and the fields', (message: string) => message.replace('\n\nURI: ', '\n\nI approve the transfer of all my funds.\nURI: ')],
    ['text after the last field', (message: string) => `${message}\nI approve the transfer of all my funds.`],
    ['a statement over two lines', statement('Sign in\nand approve')],
    ['a statement with a double quote', statement('Sign in to "the app".')],
    ['a statement with a non-ASCII letter', statement('Anmelden bei Bücher')],
    ['a statement with %', statement('Save 100%')],
  ])('%s', async (_case, corrupt) => {
    const message = corrupt(siweMessage(registered, await getNonce(sandbox.baseUrl)));
    expect(() => new SiweMessage(message)).toThrow();
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(422);
    expect(response.body.message).toMatch(/^message does not follow the EIP-4361 grammar at line \d+ \(".*"\), at (".+"|its end): the statement is one line of letters, digits, spaces and .* Build it with viem's createSiweMessage or the siwe package\.$/);
  });

  it('names the line the grammar stops at', async () => {
    const message = statement('Sign in to "the app".')(siweMessage(registered, await getNonce(sandbox.baseUrl)));
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.body.message).toContain('at line 4 ("Sign in to \\"the app\\"."), at "\\""');
  });

  it('accepts every reserved and unreserved character EIP-4361 allows in a statement', async () => {
    const message = statement("Sign in: a-z A-Z 0-9 -._~:/?#[]@!$&'()*+,;= ok")(siweMessage(registered, await getNonce(sandbox.baseUrl)));
    expect(new SiweMessage(message).statement).toContain('ok');
    expect((await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 })).status).toBe(200);
  });
});

describe('answers 422 for a challenge body that breaks the spec', () => {
  it.each([
    ['ttlInSeconds below one hour', { ttlInSeconds: 3599 }, /ttlInSeconds/],
    ['ttlInSeconds above 24 hours', { ttlInSeconds: 86401 }, /ttlInSeconds/],
    ['ttlInSeconds not an integer', { ttlInSeconds: 3600.5 }, /integer/],
    ['a missing signature', { signature: undefined }, /signature/],
    ['a signature that is not hex', { signature: 'not-hex' }, /signature/],
  ])('%s', async (_name, override, pattern) => {
    const message = siweMessage(registered, await getNonce(sandbox.baseUrl));
    const body = { message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600, ...override };
    const response = await challenge(body);
    expect(response.status).toBe(422);
    expect(response.body.message).toMatch(pattern);
  });

  it('a message that is not an EIP-4361 message', async () => {
    const response = await challenge({ message: 'please let me in', signature: '0x1234', ttlInSeconds: 3600 });
    expect(response.status).toBe(422);
    expect(response.body.message).toMatch(/not a complete EIP-4361/);
  });

  it('a body that is not JSON', async () => {
    const response = await callOperation(sandbox.baseUrl, 'verifySiweSignature', { rawBody: '{"message":', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(422);
    expect(response.body.message).toMatch(/not JSON/);
  });
});

describe('accepts smart-account (EIP-1271) signatures through the pluggable verifier', () => {
  it('signs in a smart wallet whose signature the verifier accepts, and refuses one it rejects', async () => {
    const smartWallet = newAccount().address;
    const owner = newAccount();
    const checked: { address: string; chainId: number }[] = [];
    const smartSandbox = await startSandbox({
      users: [{ smartWallets: [{ address: smartWallet, chainId: '100' }] }],
      // Stands in for a chain: the "contract" accepts signatures its owner made.
      verifySmartAccountSignature: async ({ address, message, signature, chainId }) => {
        checked.push({ address, chainId });
        return owner.signMessage({ message }).then((expected) => expected === signature);
      },
    });
    try {
      const message = siweMessage({ address: smartWallet }, await getNonce(smartSandbox.baseUrl));
      const ok = await callOperation(smartSandbox.baseUrl, 'verifySiweSignature', { body: { message, signature: await owner.signMessage({ message }), ttlInSeconds: 3600 } });
      expect(ok.status).toBe(200);
      expect(checked).toEqual([{ address: smartWallet, chainId: 100 }]);
      const message2 = siweMessage({ address: smartWallet }, await getNonce(smartSandbox.baseUrl));
      const refused = await callOperation(smartSandbox.baseUrl, 'verifySiweSignature', { body: { message: message2, signature: await unregistered.signMessage({ message: message2 }), ttlInSeconds: 3600 } });
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatch(/EIP-1271 verifier/);
    } finally {
      await smartSandbox.close();
    }
  });
});

describe('answers 401 when the EIP-1271 verifier itself fails', () => {
  it('a verifier that throws (a chain call that failed) refuses the signature with 401 {error} naming its message', async () => {
    const smartWallet = newAccount().address;
    const failing = await startSandbox({
      users: [{ smartWallets: [{ address: smartWallet, chainId: '100' }] }],
      verifySmartAccountSignature: async () => {
        throw new Error('RPC timeout');
      },
    });
    try {
      const message = siweMessage({ address: smartWallet }, await getNonce(failing.baseUrl));
      const response = await callOperation(failing.baseUrl, 'verifySiweSignature', { body: { message, signature: await unregistered.signMessage({ message }), ttlInSeconds: 3600 } });
      expect(response.status).toBe(401);
      expect(response.body.error).toMatch(/EIP-1271 verifier \(verifySmartAccountSignature\) failed for .*: RPC timeout; the signature was not accepted/);
    } finally {
      await failing.close();
    }
  });

  it("keeps an RPC URL's path and query (its API key) and the request body out of the answer: the first line, each URL cut to its origin", async () => {
    const smartWallet = newAccount().address;
    // viem's HttpRequestError, as a verifier calling a chain through http('https://rpc.example/v3/KEY') throws it.
    const failing = await startSandbox({
      users: [{ smartWallets: [{ address: smartWallet, chainId: '100' }] }],
      verifySmartAccountSignature: async () => {
        throw Object.assign(new Error('HTTP request failed at https://rpc.example/v3/SECRET-KEY?apikey=SECRET2.\n\nURL: https://rpc.example/v3/SECRET-KEY\nRequest body: {"method":"eth_call"}'), { shortMessage: undefined });
      },
    });
    try {
      const message = siweMessage({ address: smartWallet }, await getNonce(failing.baseUrl));
      const response = await callOperation(failing.baseUrl, 'verifySiweSignature', { body: { message, signature: await unregistered.signMessage({ message }), ttlInSeconds: 3600 } });
      expect(response.status).toBe(401);
      expect(JSON.stringify(response.body)).not.toMatch(/SECRET|eth_call/);
      expect(response.body.error).toMatch(/failed for .*: HTTP request failed at https:\/\/rpc\.example\/…; the signature was not accepted/);
    } finally {
      await failing.close();
    }
  });
});

describe('answers 401 on authenticated routes for a missing, foreign or expired token', () => {
  it('refuses no token, a token of another sandbox run, and a token past its exp', async () => {
    const missing = await authenticatedCall();
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('MissingToken');

    const other = await startSandbox({ users: [{ signInWallets: [registered.address] }] });
    const foreignToken = await tokenFor(other.baseUrl, registered);
    await other.close();
    const foreign = await authenticatedCall(foreignToken);
    expect(foreign.status).toBe(401);
    expect(foreign.body.code).toBe('InvalidToken');

    const token = await tokenFor(sandbox.baseUrl, registered);
    expect((await authenticatedCall(token)).status).toBe(200);
    sandbox.advanceClock(3600 * 1000);
    const expired = await authenticatedCall(token);
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('TokenExpired');
  });

  it('tells an older-generation token that expired to sign in again, never to refresh it (it has no refresh token)', async () => {
    const used = await tokenFor(sandbox.baseUrl, registered);
    expect((await authenticatedCall(used)).status).toBe(200);
    const unused = await tokenFor(sandbox.baseUrl, registered);
    sandbox.advanceClock(3600 * 1000);
    for (const [attempt, token] of [['token checked before', used], ['token never checked', unused]] as const) {
      const expired = await authenticatedCall(token);
      expect(expired.body.code, attempt).toBe('TokenExpired');
      expect(expired.body.message, attempt).toMatch(/sign in again/);
      expect(expired.body.message, attempt).not.toMatch(/refresh it/);
    }
  });

  it('lets the clock be advanced over HTTP too', async () => {
    const token = await tokenFor(sandbox.baseUrl, registered);
    const advanced = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/clock', { advanceSeconds: 3601 });
    expect(advanced.status).toBe(200);
    expect((await authenticatedCall(token)).status).toBe(401);
    const refused = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/clock', { advanceSeconds: -5 });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/only moves forward/);
  });

  it('refuses an advanceClock(ms) that is not a number of milliseconds >= 0, and keeps working', async () => {
    for (const ms of [undefined, Number.NaN, '1000', -1000, Number.POSITIVE_INFINITY]) {
      expect(() => sandbox.advanceClock(ms as number)).toThrow(
        expect.objectContaining({ name: 'SandboxConfigError', code: 'invalid_option', message: expect.stringMatching(/advanceClock\(ms\) takes a number of milliseconds >= 0/) }),
      );
    }
    const token = await tokenFor(sandbox.baseUrl, registered);
    expect((await authenticatedCall(token)).status).toBe(200);
    expect((await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/clock', { advanceSeconds: 0 })).status).toBe(200);
  });
});

describe('newer generation: 15-minute access tokens and 7-day rotating refresh tokens', () => {
  let newer: Sandbox;
  beforeAll(async () => {
    // With its account (a smart wallet), so that the limit answers it (409 before createAccount).
    newer = await startSandbox({ generation: 'newer', users: [{ signInWallets: [registered.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }] });
  });
  afterAll(() => newer.close());

  async function refresh(refreshToken: unknown) {
    return callAdmin(newer.baseUrl, 'POST', '/__sandbox/auth/refresh', { refreshToken });
  }

  it('issues {token, refreshToken}; the access token lives 15 minutes whatever ttlInSeconds says', async () => {
    const response = await signIn(newer.baseUrl, registered, { ttlInSeconds: 86400 });
    expect(response.status).toBe(200);
    expect(typeof response.body.refreshToken).toBe('string');
    const claims = decodeJwt(response.body.token);
    expect(claims.exp! - claims.iat!).toBe(15 * 60);
  });

  it('rotates: a refresh gives a new pair and the new access token works', async () => {
    const first = (await signIn(newer.baseUrl, registered)).body;
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    expect((await callOperation(newer.baseUrl, 'getAccountLimit', { token: second.body.token })).status).toBe(200);
  });

  it('ends the session when a refresh token is used twice: the reuse, the newest refresh token and the access tokens all fail', async () => {
    const first = (await signIn(newer.baseUrl, registered)).body;
    const second = (await refresh(first.refreshToken)).body;
    const reuse = await refresh(first.refreshToken);
    expect(reuse.status).toBe(401);
    expect(reuse.body.code).toBe('RefreshTokenReused');
    expect((await refresh(second.refreshToken)).body.code).toBe('SessionRevoked');
    const limit = await callOperation(newer.baseUrl, 'getAccountLimit', { token: second.token });
    expect(limit.status).toBe(401);
    expect(limit.body.code).toBe('SessionRevoked');
  });

  it('expires access tokens after 15 minutes and refresh tokens after 7 days', async () => {
    const first = (await signIn(newer.baseUrl, registered)).body;
    newer.advanceClock(15 * 60 * 1000);
    const expired = (await callOperation(newer.baseUrl, 'getAccountLimit', { token: first.token })).body;
    expect(expired.code).toBe('TokenExpired');
    expect(expired.message).toMatch(/refresh it/);
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    newer.advanceClock(7 * 24 * 3600 * 1000);
    expect((await refresh(second.body.refreshToken)).body.code).toBe('RefreshTokenExpired');
  });

  it('refuses a refresh without a token, with an unknown one, and in the older generation', async () => {
    expect((await refresh(undefined)).status).toBe(422);
    expect((await refresh('made-up')).body.code).toBe('InvalidRefreshToken');
    const older = await callAdmin(sandbox.baseUrl, 'POST', '/__sandbox/auth/refresh', { refreshToken: 'x' });
    expect(older.status).toBe(404);
    expect(older.body.message).toMatch(/--generation newer/);
  });
});

describe('accepts SIWE messages built by an independent implementation (the siwe package)', () => {
  it('signs in with a message prepared by siwe.SiweMessage', async () => {
    const { SiweMessage } = await import('siwe');
    const message = new SiweMessage({
      domain: 'localhost:8080',
      address: registered.address,
      statement: 'Sign in with Ethereum to the app.',
      uri: 'http://localhost:8080/login',
      version: '1',
      chainId: 100,
      nonce: await getNonce(sandbox.baseUrl),
      issuedAt: new Date().toISOString(),
    }).prepareMessage();
    const response = await challenge({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
    expect(response.status).toBe(200);
    expect(decodeJwt(response.body.token).signerAddress).toBe(registered.address);
  });
});
