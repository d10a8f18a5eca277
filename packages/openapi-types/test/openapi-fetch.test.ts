import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountLimit, ErrorBody, SetAccountLimitRequest, paths } from '../src/index.js';

// A real HTTP server on loopback that answers like the service (reference 4.1, 4.3, 4.4),
// so the types are exercised the way a partner's openapi-fetch client uses them.
let server: Server;
let baseUrl: string;
let currentLimit: AccountLimit = { amount: 1_000_000, currency: 'USD', syncStatus: 'synced' };

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => { body += chunk; });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    if (request.url === '/api/v1/auth/nonce') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('a1b2c3d4e5f6');
      return;
    }
    if (request.url !== '/user-api/user/account/limit') return json(response, 404, { message: 'Not found' });
    if (request.headers.authorization !== 'Bearer test-token') return json(response, 401, { error: 'Unauthorized' });
    if (request.method === 'GET') return json(response, 200, currentLimit);
    const body = JSON.parse(await readBody(request)) as SetAccountLimitRequest;
    if (!Number.isInteger(body.amount) || body.amount <= 0 || body.amount > 1_000_000 || body.currency !== 'USD') {
      return json(response, 422, { code: 'ValidationError', message: 'amount must be 1..1000000 cents and currency USD' });
    }
    currentLimit = { amount: body.amount, currency: body.currency, syncStatus: 'pending' };
    return json(response, 200, currentLimit);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

const api = () => createClient<paths>({ baseUrl, headers: { authorization: 'Bearer test-token' } });

describe('openapi-fetch works with createClient<paths>() against the limit endpoints', () => {
  it('reads the limit (4.3)', async () => {
    const { data, error, response } = await api().GET('/user-api/user/account/limit');
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    expect(data).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
  });

  it('sets the limit and gets it back pending (4.4, 3.1)', async () => {
    const { data } = await api().PUT('/user-api/user/account/limit', { body: { amount: 250_000, currency: 'USD' } });
    expect(data).toEqual({ amount: 250_000, currency: 'USD', syncStatus: 'pending' });
  });

  it('gives an out-of-range amount back as an ErrorBody error', async () => {
    const { data, error, response } = await api().PUT('/user-api/user/account/limit', { body: { amount: 1_000_001, currency: 'USD' } });
    expect(response.status).toBe(422);
    expect(data).toBeUndefined();
    const body: ErrorBody | undefined = error;
    expect(body?.code).toBe('ValidationError');
  });

  it('gives a missing token back as a 401 ErrorBody', async () => {
    const { error, response } = await createClient<paths>({ baseUrl }).GET('/user-api/user/account/limit');
    expect(response.status).toBe(401);
    expect(error).toEqual({ error: 'Unauthorized' });
  });

  it('reads the nonce as the bare text body (4.1)', async () => {
    const { data } = await api().GET('/api/v1/auth/nonce', { parseAs: 'text' });
    expect(data).toBe('a1b2c3d4e5f6');
  });
});
