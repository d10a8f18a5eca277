// A small, real HTTP service on loopback that behaves like the partner interface as the
// reference and service-facts.md describe it: text/plain nonces, SIWE challenge verified with
// viem, HS256 JWTs, the daily limit with its sync status, the error body shapes the live service
// uses, plus scripted answers (statuses, Retry-After, hangs, dropped sockets) for failure tests.
// Where the sandbox (@capi/sandbox) decides what the live service leaves open, it answers as the
// sandbox does (partner-service.test.ts checks it against the sandbox):
// - Each operation is answered on its generation only (the spec's `x-generation`): the daily
//   limit on the newer one, the SMS phone verification (the older generation's authenticated
//   operation) on the older one. On the other generation: 404 `NotFound`, before the token is read.
// - Any wallet that signs a valid message gets a token (reference 5 rule 1); `hasSignedUp` (and
//   `userId`) say whether it has registered. A wallet that has not is answered 401
//   `UserNotRegistered` on the routes that need a user.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SiweMessage } from 'siwe';
import { verifyMessage } from 'viem';

export type Generation = 'older' | 'newer';

/** One scripted answer, served instead of the normal behaviour. */
export type ScriptedAnswer =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { hang: true }
  | { dropConnection: true };

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  /** The request's Accept header. */
  accept: string | undefined;
  body: string;
  /** When the request arrived (`Date.now()`). */
  at: number;
}

export interface PartnerServiceOptions {
  /**
   * The generation it runs (default `older`): which operations it answers (the limit is the
   * newer one's, the SMS phone verification the older one's), and whether sign-in also issues a
   * refresh token (newer).
   */
  generation?: Generation;
  /**
   * Wallets (any case) whose user has registered and has its account. Any other wallet still
   * signs in, with a token that says `hasSignedUp: false`, and is refused on the limit with 401
   * `UserNotRegistered`.
   */
  registeredAddresses?: string[];
  /** Whitelisted SIWE domains besides localhost. */
  whitelistedDomains?: string[];
  /** Lifetime of access tokens; default ttlInSeconds (older) or 900 s (newer). */
  accessTokenLifetimeSeconds?: number;
  /** GET polls answered `pending` after a PUT before the limit turns `synced`. */
  pendingPollsAfterUpdate?: number;
}

export interface PartnerService {
  url: string;
  /** The SIWE messages the challenge accepted or refused, parsed by the `siwe` package. */
  siweMessages: SiweMessage[];
  requests: RecordedRequest[];
  count(method: string, path: string): number;
  script(method: string, path: string, ...answers: ScriptedAnswer[]): void;
  /** Makes every access token issued so far invalid (as if expired). */
  revokeAccessTokens(): void;
  /** Issues an access token directly, as the challenge would (`hasSignedUp` as the wallet has registered). */
  issueAccessToken(address: string, lifetimeSeconds: number): string;
  limit: { amount: number; currency: string; syncStatus: 'pending' | 'synced' };
  close(): Promise<void>;
}

export const REFRESH_PATH = '/test-only/refresh';
export const LIMIT_PATH = '/user-api/user/account/limit';
/** `requestLegacyPhoneVerification`: the older generation's authenticated operation here. */
export const LEGACY_PHONE_VERIFICATION_PATH = '/api/v1/verification';

interface AccessTokenClaims {
  iat: number;
  exp: number;
  signerAddress: string;
  chainId: string;
  hasSignedUp: boolean;
  userId?: string;
  serial: number;
}

/**
 * The refusal of an operation on the generation that lacks it, word for word the sandbox's
 * (packages/sandbox/src/routes/operation-generation.ts): `404 NotFound`, naming the generation
 * that has the operation and, where the reference says it, what the other one does instead.
 */
function otherGenerationRefusal(operation: { operationId: string; method: string; path: string; generation: Generation }, running: Generation, instead?: string): { code: 'NotFound'; message: string } {
  return {
    code: 'NotFound',
    message:
      `${operation.method} ${operation.path} (${operation.operationId}) exists only on the ${operation.generation} generation; this sandbox runs the ${running} one (start it with --generation ${operation.generation})` +
      (instead === undefined ? '.' : `: ${instead}.`),
  };
}

// Reference 9: "Onchain daily limit | Set by user with an onchain signature" (older generation).
const LIMIT_INSTEAD = 'on the older generation the user sets the daily limit onchain, with an onchain signature';

/** The 401 for a signed-in wallet without a user, word for word the sandbox's (routes/bearer-auth.ts). */
function userNotRegistered(generation: Generation): { code: 'UserNotRegistered'; message: string } {
  return {
    code: 'UserNotRegistered',
    message:
      generation === 'newer'
        ? 'This wallet has no user yet (token claim hasSignedUp: false); register first: POST /email/verification, then POST /user with the email and its one-time password.'
        : 'This wallet owns no registered account (token claim hasSignedUp: false); register it first (sandbox: --user ADDRESS or POST /__sandbox/users).',
  };
}

export async function startPartnerService(options: PartnerServiceOptions = {}): Promise<PartnerService> {
  const generation = options.generation ?? 'older';
  const registered = new Set((options.registeredAddresses ?? []).map((address) => address.toLowerCase()));
  const whitelist = new Set(options.whitelistedDomains ?? []);
  const secret = randomBytes(32);
  const issuedNonces = new Set<string>();
  const scripts = new Map<string, ScriptedAnswer[]>();
  const requests: RecordedRequest[] = [];
  const siweMessages: SiweMessage[] = [];
  const refreshTokens = new Map<string, { address: string; used: boolean; session: string }>();
  const endedSessions = new Set<string>();
  let tokensValidAfter = 0;
  let tokenSerial = 0;
  let pendingPolls = 0;
  const limit = { amount: 1_000_000, currency: 'USD', syncStatus: 'synced' as 'pending' | 'synced' };

  function issueAccessToken(address: string, lifetimeSeconds: number): string {
    const now = Math.floor(Date.now() / 1000);
    // A wallet without a user gets a token too, without `userId` (service-facts.md, reference 5).
    const user = registered.has(address.toLowerCase()) ? { hasSignedUp: true, userId: `user-${address.slice(2, 10)}` } : { hasSignedUp: false };
    const claims: AccessTokenClaims = { iat: now, exp: now + lifetimeSeconds, signerAddress: address, chainId: '100', ...user, serial: ++tokenSerial };
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
    return `${header}.${payload}.${signature}`;
  }

  function issueRefreshToken(address: string, session: string): string {
    const refreshToken = randomBytes(24).toString('hex');
    refreshTokens.set(refreshToken, { address, used: false, session });
    return refreshToken;
  }

  /** The claims of a valid bearer token (signature, expiry, not revoked), else undefined. */
  function verifiedClaims(authorization: string | undefined): AccessTokenClaims | undefined {
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!token) return undefined;
    const [header, payload, signature] = token.split('.');
    if (!header || !payload || !signature) return undefined;
    const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
    if (expected !== signature) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as AccessTokenClaims;
    return claims.exp * 1000 > Date.now() && claims.serial > tokensValidAfter ? claims : undefined;
  }

  /** Whether the signer has a user: the token's `userId`, else its wallet's (as the sandbox reads it). */
  const hasUser = (claims: AccessTokenClaims) => claims.userId !== undefined || registered.has(claims.signerAddress.toLowerCase());

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', 'x-request-id': `req-${requests.length}`, ...headers });
    res.end(text);
  };

  async function handle(req: IncomingMessage, res: ServerResponse, path: string, body: string): Promise<void> {
    const route = `${req.method} ${path}`;
    if (route === 'GET /api/v1/auth/nonce') {
      const nonce = randomBytes(6).toString('hex');
      issuedNonces.add(nonce);
      return send(res, 200, nonce);
    }
    if (route === 'POST /api/v1/auth/challenge') return challenge(res, body);
    if (route === `POST ${REFRESH_PATH}`) return refresh(res, body);
    if (path === LIMIT_PATH && (req.method === 'GET' || req.method === 'PUT')) {
      // Newer generation only (x-generation: newer): on the older one a 404, before the token is read.
      if (generation !== 'newer') {
        const operationId = req.method === 'GET' ? 'getAccountLimit' : 'setAccountLimit';
        return send(res, 404, otherGenerationRefusal({ operationId, method: req.method, path, generation: 'newer' }, generation, LIMIT_INSTEAD));
      }
      const claims = verifiedClaims(req.headers.authorization);
      if (!claims) return send(res, 401, { message: 'Unauthorized' });
      // The limit is the user's account's: a wallet without a user is refused (before the body is read).
      if (!hasUser(claims)) return send(res, 401, userNotRegistered(generation));
      if (req.method === 'GET') {
        if (limit.syncStatus === 'pending' && pendingPolls-- <= 0) limit.syncStatus = 'synced';
        return send(res, 200, limit);
      }
      return putLimit(res, body);
    }
    if (route === `POST ${LEGACY_PHONE_VERIFICATION_PATH}`) return legacyPhoneVerification(req, res, body);
    return send(res, 404, { error: `No route ${route}` });
  }

  /**
   * `requestLegacyPhoneVerification`: the older generation's authenticated operation (x-generation:
   * older), in the sandbox's order: generation, token, body, then the user. Sends no SMS.
   */
  function legacyPhoneVerification(req: IncomingMessage, res: ServerResponse, body: string): void {
    if (generation !== 'older') {
      return send(res, 404, otherGenerationRefusal({ operationId: 'requestLegacyPhoneVerification', method: 'POST', path: LEGACY_PHONE_VERIFICATION_PATH, generation: 'older' }, generation));
    }
    const claims = verifiedClaims(req.headers.authorization);
    if (!claims) return send(res, 401, { message: 'Unauthorized' });
    let input: { phone?: unknown };
    try {
      input = JSON.parse(body);
    } catch {
      return send(res, 400, { code: 'InvalidJson', message: 'The body is not JSON; send a JSON object.' });
    }
    if (typeof input?.phone !== 'string' || input.phone === '') return send(res, 422, { code: 'ValidationError', message: 'phone is required.' });
    if (!hasUser(claims)) return send(res, 401, userNotRegistered(generation));
    return send(res, 200, { sentTo: input.phone, expiresAt: new Date(Date.now() + 10 * 60_000).toISOString() });
  }

  async function challenge(res: ServerResponse, body: string): Promise<void> {
    let input: { message?: unknown; signature?: unknown; ttlInSeconds?: unknown };
    try {
      input = JSON.parse(body);
    } catch {
      return send(res, 400, { error: 'Body must be JSON' });
    }
    const { message, signature, ttlInSeconds } = input;
    if (typeof message !== 'string' || typeof signature !== 'string' || typeof ttlInSeconds !== 'number') {
      return send(res, 422, { message: 'message, signature and ttlInSeconds are required' });
    }
    if (!Number.isInteger(ttlInSeconds) || ttlInSeconds < 3600 || ttlInSeconds > 86400) {
      return send(res, 422, { message: 'ttlInSeconds must be between 3600 and 86400' });
    }
    if (/127\.0\.0\.1/.test(message)) return send(res, 403, { code: 'WAFForbidden', message: 'Request blocked' });
    let siwe: SiweMessage;
    try {
      siwe = new SiweMessage(message);
    } catch {
      return send(res, 422, { message: 'message is not an EIP-4361 message' });
    }
    siweMessages.push(siwe);
    if (!/^localhost(:\d+)?$/.test(siwe.domain) && !whitelist.has(siwe.domain)) {
      return send(res, 403, { code: 'DomainNotWhitelisted', message: `Domain ${siwe.domain} is not whitelisted` });
    }
    if (!issuedNonces.delete(siwe.nonce)) return send(res, 401, { error: 'Invalid nonce' });
    const valid = await verifyMessage({ address: siwe.address as `0x${string}`, message, signature: signature as `0x${string}` }).catch(() => false);
    if (!valid) return send(res, 401, { error: 'Invalid signature' });
    // Any wallet that signs a valid message gets a token, registered or not: its claims say which.
    if (generation === 'older') {
      return send(res, 200, { token: issueAccessToken(siwe.address, options.accessTokenLifetimeSeconds ?? ttlInSeconds) });
    }
    const session = randomBytes(8).toString('hex');
    return send(res, 200, {
      token: issueAccessToken(siwe.address, options.accessTokenLifetimeSeconds ?? 900),
      refreshToken: issueRefreshToken(siwe.address, session),
    });
  }

  function refresh(res: ServerResponse, body: string): void {
    const { refreshToken } = JSON.parse(body) as { refreshToken: string };
    const record = refreshTokens.get(refreshToken);
    if (!record || endedSessions.has(record.session)) return send(res, 401, { code: 'InvalidRefreshToken', message: 'Refresh token is not valid' });
    if (record.used) {
      // Reuse of a rotated refresh token ends the whole session (service-facts.md).
      endedSessions.add(record.session);
      return send(res, 401, { code: 'RefreshTokenReused', message: 'Session ended' });
    }
    record.used = true;
    return send(res, 200, {
      token: issueAccessToken(record.address, options.accessTokenLifetimeSeconds ?? 900),
      refreshToken: issueRefreshToken(record.address, record.session),
    });
  }

  function putLimit(res: ServerResponse, body: string): void {
    let input: { amount?: unknown; currency?: unknown };
    try {
      input = JSON.parse(body);
    } catch {
      return send(res, 400, { error: 'Body must be JSON' });
    }
    const { amount, currency } = input;
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0 || amount > 1_000_000) {
      return send(res, 422, { code: 'ValidationError', message: 'amount must be an integer between 1 and 1000000' });
    }
    if (currency !== 'USD') return send(res, 422, { message: 'currency must be USD' });
    limit.amount = amount;
    limit.syncStatus = 'pending';
    pendingPolls = options.pendingPollsAfterUpdate ?? 2;
    return send(res, 200, limit);
  }

  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, accept: req.headers.accept, body, at });
      const answer = scripts.get(`${req.method} ${path}`)?.shift();
      if (answer && 'hang' in answer) {
        hanging.add(res);
        return;
      }
      if (answer && 'dropConnection' in answer) {
        req.socket.destroy();
        return;
      }
      if (answer) return send(res, answer.status, answer.body ?? '', answer.headers);
      handle(req, res, path, body).catch((error: Error) => send(res, 500, { error: error.message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    siweMessages,
    requests,
    limit,
    count: (method, path) => requests.filter((request) => request.method === method && request.path === path).length,
    script: (method, path, ...answers) => {
      const key = `${method} ${path}`;
      scripts.set(key, [...(scripts.get(key) ?? []), ...answers]);
    },
    revokeAccessTokens: () => {
      tokensValidAfter = tokenSerial;
    },
    issueAccessToken,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The webhook key service (4.5): answers the Ed25519 public key as a PEM string. */
export async function startWebhookKeyService(answer?: { status: number; body: unknown }): Promise<{ url: string; publicKey: string; close: () => Promise<void> }> {
  const { publicKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api/v1/public-key') {
      res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer?.body ?? { success: true, publicKey: pem }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'Not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    publicKey: pem,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
