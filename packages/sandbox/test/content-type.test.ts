// Reference 4.2 and 4.4: the body is sent with `Content-Type: application/json`. The spec
// answers any other type, or none, 415 (`UnsupportedMediaType`, an x-assumption), so that a
// partner who forgets the header finds out against the sandbox rather than in production.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { assertResponseMatchesSpec } from './support/spec-responses.js';
import { getNonce, newAccount, siweMessage, tokenFor } from './support/sign-in.js';

const registered = newAccount();
const accountHolder = newAccount();
const kycDone = newAccount();
let older: Sandbox;
let newer: Sandbox;

beforeAll(async () => {
  [older, newer] = await Promise.all([
    startSandbox({ users: [{ signInWallets: [registered.address] }] }),
    startSandbox({
      generation: 'newer',
      users: [
        { signInWallets: [accountHolder.address], kycStatus: 'approved', isSourceOfFundsAnswered: true, smartWallets: [{ address: newAccount().address, chainId: '100' }] },
        { signInWallets: [kycDone.address], kycStatus: 'approved', isSourceOfFundsAnswered: true },
      ],
    }),
  ]);
});
afterAll(() => Promise.all([older.close(), newer.close()]));

/**
 * One request over node:http, so that the Content-Type is exactly what the test says (fetch
 * adds `text/plain;charset=UTF-8` to a string body); checked against the spec's answer for
 * `operationId`.
 */
function send(base: string, operationId: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const framed = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const outgoing = httpRequest(base + path, { method, headers: framed }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const contentType = response.headers['content-type'] ?? null;
        const parsed = contentType?.startsWith('application/json') ? JSON.parse(text) : text;
        assertResponseMatchesSpec(operationId, response.statusCode!, contentType, parsed);
        resolve({ status: response.statusCode!, body: parsed });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function signedChallenge() {
  const message = siweMessage(registered, await getNonce(older.baseUrl));
  return JSON.stringify({ message, signature: await registered.signMessage({ message }), ttlInSeconds: 3600 });
}

const challenge = (headers: Record<string, string>, body: string) => send(older.baseUrl, 'verifySiweSignature', 'POST', '/api/v1/auth/challenge', headers, body);

describe('POST /api/v1/auth/challenge takes application/json only (reference 4.2)', () => {
  it.each([
    ['text/plain', 'text/plain', /sent with Content-Type "text\/plain"; send it as JSON with Content-Type: application\/json\./],
    ['form-urlencoded', 'application/x-www-form-urlencoded', /sent with Content-Type "application\/x-www-form-urlencoded"; send it as JSON with Content-Type: application\/json\./],
    ['no Content-Type', undefined, /sent without a Content-Type; send it as JSON with Content-Type: application\/json\./],
  ])('answers 415 {message} to a JSON body sent as %s, and consumes nothing', async (_name, contentType, pattern) => {
    const body = await signedChallenge();
    const refused = await challenge(contentType === undefined ? {} : { 'content-type': contentType }, body);
    expect(refused.status).toBe(415);
    // The older generation's sign-in words its refusals as {message}, as its 422s.
    expect(Object.keys(refused.body)).toEqual(['message']);
    expect(refused.body.message).toMatch(pattern);
    // The body was not read: the same signed message, sent as JSON, still signs in.
    expect((await challenge({ 'content-type': 'application/json' }, body)).status).toBe(200);
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json ; charset=UTF-8'])('accepts %s', async (contentType) => {
    expect((await challenge({ 'content-type': contentType }, await signedChallenge())).status).toBe(200);
  });

  it('says what was sent, shortened when it is long', async () => {
    const refused = await challenge({ 'content-type': `text/${'x'.repeat(300)}` }, await signedChallenge());
    expect(refused.status).toBe(415);
    expect(refused.body.message.length).toBeLessThan(250);
    expect(refused.body.message).toMatch(/…"; send it as JSON/);
  });
});

describe('PUT /user-api/user/account/limit takes application/json only (reference 4.4)', () => {
  const put = async (headers: Record<string, string>, body?: string) =>
    send(newer.baseUrl, 'setAccountLimit', 'PUT', '/user-api/user/account/limit', { authorization: `Bearer ${await tokenFor(newer.baseUrl, accountHolder)}`, ...headers }, body);
  const body = JSON.stringify({ amount: 250_000, currency: 'USD' });

  it('answers 415 {code: UnsupportedMediaType} to text/plain, form-urlencoded and no Content-Type, and stores nothing', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}] as Record<string, string>[]) {
      const refused = await put(headers, body);
      expect(refused).toMatchObject({ status: 415, body: { code: 'UnsupportedMediaType', message: expect.stringMatching(/send it as JSON with Content-Type: application\/json/) } });
    }
    const token = await tokenFor(newer.baseUrl, accountHolder);
    expect((await send(newer.baseUrl, 'getAccountLimit', 'GET', '/user-api/user/account/limit', { authorization: `Bearer ${token}` })).body.amount).toBe(1_000_000);
  });

  it('accepts application/json with a charset parameter', async () => {
    expect((await put({ 'content-type': 'application/json; charset=utf-8' }, body)).body).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'pending' });
  });

  it('checks the token first (401), and a request without a body is answered as before (400 InvalidJson: the body is required)', async () => {
    const anonymous = await send(newer.baseUrl, 'setAccountLimit', 'PUT', '/user-api/user/account/limit', { 'content-type': 'text/plain' }, body);
    expect(anonymous.status).toBe(401);
    const empty = await put({});
    expect(empty).toMatchObject({ status: 400, body: { code: 'InvalidJson' } });
  });
});

describe('the onboarding operations and the older SMS verification take application/json only', () => {
  it('a newer-generation write answers 415 {code, message} to text/plain and to a body without Content-Type', async () => {
    const token = await tokenFor(newer.baseUrl, newAccount());
    const email = JSON.stringify({ email: 'ada@example.com' });
    for (const headers of [{ 'content-type': 'text/plain;charset=UTF-8' }, {}] as Record<string, string>[]) {
      const refused = await send(newer.baseUrl, 'requestEmailVerification', 'POST', '/email/verification', { authorization: `Bearer ${token}`, ...headers }, email);
      expect(refused).toMatchObject({ status: 415, body: { code: 'UnsupportedMediaType' } });
    }
    expect(newer.oneTimePasswords().filter((sent) => sent.sentTo === 'ada@example.com')).toEqual([]);
    const accepted = await send(newer.baseUrl, 'requestEmailVerification', 'POST', '/email/verification', { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' }, email);
    expect(accepted.status).toBe(200);
  });

  it('POST /account, which takes no body, is not concerned: it answers 200 without a Content-Type', async () => {
    const created = await send(newer.baseUrl, 'createAccount', 'POST', '/account', { authorization: `Bearer ${await tokenFor(newer.baseUrl, kycDone)}` });
    expect(created.status).toBe(200);
    expect(created.body.smartWallets).toHaveLength(1);
  });

  it('the older generation SMS verification answers 415 {code, message} to form-urlencoded', async () => {
    const token = await tokenFor(older.baseUrl, registered);
    const refused = await send(older.baseUrl, 'requestLegacyPhoneVerification', 'POST', '/api/v1/verification', { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' }, 'phone=%2B15555550123');
    expect(refused).toMatchObject({ status: 415, body: { code: 'UnsupportedMediaType', message: expect.stringContaining('"application/x-www-form-urlencoded"') } });
  });
});
