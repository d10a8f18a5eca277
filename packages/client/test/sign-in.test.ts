import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWalletClient, custom } from 'viem';
import { gnosis } from 'viem/chains';
import { SiweMessage } from 'siwe';
import {
  AbortError,
  AuthenticationError,
  createPartnerClient,
  ForbiddenError,
  InvalidArgumentError,
  signerFromViemAccount,
  signerFromWalletClient,
  TimeoutError,
  UnexpectedResponseError,
  WafForbiddenError,
  type PartnerClient,
} from '../src/index.js';
import { buildSiweMessage } from '../src/siwe.js';
import { startPartnerService, type PartnerService } from './support/partner-service.js';
import { registeredAccount, SIGN_IN_PAGE, unregisteredAccount } from './support/wallet.js';

let service: PartnerService;
let client: PartnerClient;

beforeEach(async () => {
  service = await startPartnerService({ registeredAddresses: [registeredAccount.address], whitelistedDomains: ['app.example.com'] });
  client = createPartnerClient({ baseUrl: service.url, retries: { baseDelayMs: 1 } });
});
afterEach(() => service.close());

const signIn = (overrides: Record<string, unknown> = {}) =>
  client.signInWithEthereum({ ...signerFromViemAccount(registeredAccount), ...SIGN_IN_PAGE, ...overrides } as Parameters<PartnerClient['signInWithEthereum']>[0]);

describe('signs in with a wallet: nonce, EIP-4361 message, signature, challenge', () => {
  it('sends a message the independent siwe parser reads with the right nonce, domain, address and chain id', async () => {
    const before = Date.now();
    const result = await signIn({ ttlInSeconds: 7200 });

    const issuedNonce = service.requests.find((request) => request.path === '/api/v1/auth/nonce');
    expect(issuedNonce).toBeDefined();
    expect(service.siweMessages).toHaveLength(1);
    const message = service.siweMessages[0]!;
    expect(message.domain).toBe('localhost:3000');
    expect(message.address).toBe(registeredAccount.address);
    expect(message.chainId).toBe(100);
    expect(message.uri).toBe('http://localhost:3000/login');
    expect(message.version).toBe('1');
    expect(message.statement).toBe('Sign in with Ethereum to the app.');
    expect(message.nonce).toMatch(/^[0-9a-f]{12}$/);
    const challenge = JSON.parse(service.requests.find((request) => request.path === '/api/v1/auth/challenge')!.body) as { message: string; signature: string; ttlInSeconds: number };
    expect(challenge.ttlInSeconds).toBe(7200);
    // The siwe package also verifies the EIP-191 signature (through ethers), independently of viem.
    const verified = await new SiweMessage(challenge.message).verify({ signature: challenge.signature, domain: 'localhost:3000', nonce: message.nonce });
    expect(verified.success).toBe(true);

    expect(result.token.split('.')).toHaveLength(3);
    expect(result.refreshToken).toBeUndefined();
    // expiresAt is the JWT's exp, which the service set to now + ttlInSeconds.
    expect(result.expiresAt.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7_200_000);
    expect(result.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 7_200_000);
  });

  it('sends no bearer token to the nonce and challenge endpoints', async () => {
    await signIn();
    expect(service.requests.map((request) => request.authorization)).toEqual([undefined, undefined]);
  });

  it('asks the nonce endpoint for text/plain (what it answers), the challenge for JSON', async () => {
    await signIn();
    expect(service.requests.map((request) => [request.path, request.accept])).toEqual([
      ['/api/v1/auth/nonce', 'text/plain'],
      ['/api/v1/auth/challenge', 'application/json'],
    ]);
  });

  it('uses a custom statement', async () => {
    await signIn({ statement: 'Sign in to Example Pay.' });
    expect(service.siweMessages[0]!.statement).toBe('Sign in to Example Pay.');
  });

  it('defaults ttlInSeconds to 86400 (24 hours)', async () => {
    await signIn();
    const challenge = JSON.parse(service.requests.at(-1)!.body) as { ttlInSeconds: number };
    expect(challenge.ttlInSeconds).toBe(86_400);
  });
});

describe('runs one sign-in at a time', () => {
  it('joins a second identical call to the one in flight: one nonce, one wallet prompt, one token', async () => {
    let prompts = 0;
    const signer = signerFromViemAccount(registeredAccount);
    const countingSigner = { ...signer, signMessage: (message: string) => { prompts += 1; return signer.signMessage(message); } };
    const [first, second] = await Promise.all([signIn(countingSigner), signIn(countingSigner)]);
    expect(second).toBe(first);
    expect(prompts).toBe(1);
    expect(service.count('GET', '/api/v1/auth/nonce')).toBe(1);
    expect(service.count('POST', '/api/v1/auth/challenge')).toBe(1);
  });

  it('refuses another sign-in while one is in flight with sign_in_in_progress, and allows it once that one settled', async () => {
    const first = signIn();
    const error = await signIn({ ...signerFromViemAccount(unregisteredAccount) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'sign_in_in_progress' });
    expect((error as Error).message).toMatch(/still in flight: only one runs at a time/);
    await first;
    expect(service.count('GET', '/api/v1/auth/nonce')).toBe(1);
    // The other wallet has not registered: it signs in all the same (hasSignedUp: false).
    await expect(signIn({ ...signerFromViemAccount(unregisteredAccount) })).resolves.toMatchObject({ token: expect.any(String) });
    expect(client.tokenManager.hasSignedUp).toBe(false);
    expect(service.count('GET', '/api/v1/auth/nonce')).toBe(2);
  });
});

describe('a call that joins a sign-in in flight waits under its own signal', () => {
  // A signer whose wallet prompt stays open until `answer()`.
  function heldSigner() {
    const shown: { open: () => void; opened: Promise<void> } = { open: () => undefined, opened: Promise.resolve() };
    shown.opened = new Promise<void>((resolve) => (shown.open = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const signer = signerFromViemAccount(registeredAccount);
    let prompts = 0;
    const held = { ...signer, signMessage: async (message: string) => (prompts++, shown.open(), await answered, signer.signMessage(message)) };
    return { held, shown: shown.opened, answer, prompts: () => prompts };
  }

  it('a call whose signal has already aborted sends nothing (no nonce spent) and joins nothing', async () => {
    const { held, prompts } = heldSigner();
    const nonces = service.count('GET', '/api/v1/auth/nonce');
    expect(await signIn({ ...held, signal: AbortSignal.abort() }).catch((error: unknown) => error)).toBeInstanceOf(AbortError);
    expect(service.count('GET', '/api/v1/auth/nonce')).toBe(nonces);
    expect(prompts()).toBe(0);
  });

  it("the first call's signal ends its own wait only: the joining call still gets the tokens", async () => {
    const { held, shown, answer, prompts } = heldSigner();
    const controller = new AbortController();
    const first = signIn({ ...held, signal: controller.signal }).catch((error: unknown) => error);
    const second = signIn(held);
    await shown;
    controller.abort();
    expect(await first).toBeInstanceOf(AbortError);
    answer();
    await expect(second).resolves.toMatchObject({ token: expect.any(String) });
    expect(client.tokenManager.hasToken).toBe(true);
    expect(prompts()).toBe(1);
    expect(service.count('GET', '/api/v1/auth/nonce')).toBe(1);
  });

  it("a joining call's own signal ends its wait at once, and the first call goes on", async () => {
    const { held, shown, answer } = heldSigner();
    const first = signIn(held);
    const controller = new AbortController();
    const second = signIn({ ...held, signal: controller.signal }).catch((error: unknown) => error);
    await shown;
    controller.abort();
    const error = await second; // before the wallet answers
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).message).toMatch(/continues for the other calls/);
    answer();
    await expect(first).resolves.toMatchObject({ token: expect.any(String) });
  });

  it("a joining call's timeoutMs (for requests) does not end its wait while the person is at the wallet", async () => {
    const { held, shown, answer } = heldSigner();
    const first = signIn(held);
    await shown;
    const second = signIn({ ...held, timeoutMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    answer();
    await expect(second).resolves.toMatchObject({ token: expect.any(String) });
    await expect(first).resolves.toMatchObject({ token: expect.any(String) });
  });

  it('once every call has given up, the sign-in is cancelled and stores nothing', async () => {
    const { held, shown, answer } = heldSigner();
    const controllers = [new AbortController(), new AbortController()];
    const calls = controllers.map((controller) => signIn({ ...held, signal: controller.signal }).catch((error: unknown) => error));
    await shown;
    for (const controller of controllers) controller.abort();
    for (const outcome of await Promise.all(calls)) expect(outcome).toBeInstanceOf(AbortError);
    expect(client.tokenManager.hasToken).toBe(false);
    // Cancelled, so it holds up no other sign-in; the wallet's late answer is dropped.
    await expect(signIn({ statement: 'Another sign-in.' })).resolves.toMatchObject({ token: expect.any(String) });
    answer();
    expect(service.count('POST', '/api/v1/auth/challenge')).toBe(1);
  });
});

describe('sends the bearer token on later requests', () => {
  it('authorizes the limit request with the token from sign-in', async () => {
    // The limit is the newer generation's (the older one answers it 404).
    await service.close();
    service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    client = createPartnerClient({ baseUrl: service.url, retries: { baseDelayMs: 1 } });
    const { token } = await signIn();
    await client.getDailyLimit();
    const limitRequest = service.requests.find((request) => request.path === '/user-api/user/account/limit');
    expect(limitRequest?.authorization).toBe(`Bearer ${token}`);
    expect(client.tokenManager.hasToken).toBe(true);
  });
});

describe('reads the nonce tolerantly (text/plain, a JSON string or {nonce})', () => {
  it.each([
    ['a JSON string', '"abcdef123456"'],
    ['a JSON object', '{"nonce":"abcdef123456"}'],
    ['text with whitespace', '  abcdef123456\n'],
  ])('accepts %s', async (_shape, body) => {
    service.script('GET', '/api/v1/auth/nonce', { status: 200, headers: { 'content-type': 'text/plain' }, body });
    // The scripted nonce was never issued, so the service refuses it: proof it reached the message.
    await expect(signIn()).rejects.toBeInstanceOf(AuthenticationError);
    expect(service.siweMessages[0]!.nonce).toBe('abcdef123456');
  });

  it('rejects a nonce that is not 8+ letters and digits with UnexpectedResponseError', async () => {
    service.script('GET', '/api/v1/auth/nonce', { status: 200, body: '<html>login</html>' });
    const error = await signIn().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as UnexpectedResponseError).code).toBe('invalid_nonce');
    expect(service.count('POST', '/api/v1/auth/challenge')).toBe(0);
  });
});

describe('checks sign-in arguments before any request', () => {
  it.each([
    ['a 127.0.0.1 domain', { domain: '127.0.0.1:3000' }, 'domain', 'domain_blocked_by_waf', /firewall.*localhost/],
    ['a 127.0.0.1 uri', { uri: 'http://127.0.0.1:3000/login' }, 'uri', 'domain_blocked_by_waf', /firewall.*localhost/],
    ['ttlInSeconds below 1 hour', { ttlInSeconds: 3599 }, 'ttlInSeconds', 'ttl_out_of_range', /3600.*86400/],
    ['ttlInSeconds above 24 hours', { ttlInSeconds: 86_401 }, 'ttlInSeconds', 'ttl_out_of_range', /3600.*86400/],
    ['a fractional ttlInSeconds', { ttlInSeconds: 3600.5 }, 'ttlInSeconds', 'ttl_out_of_range', /whole number/],
    ['a domain with a scheme', { domain: 'https://app.example.com' }, 'domain', 'invalid_domain', /without scheme/],
    ['a malformed address', { address: '0x1234' }, 'address', 'invalid_address', /20-byte/],
    ['a non-integer chain id', { chainId: 1.5 }, 'chainId', 'invalid_chain_id', /positive integer/],
    ['a missing signer', { signMessage: undefined }, 'signMessage', 'invalid_signer', /signerFromViemAccount/],
    ['a multi-line statement', { statement: 'a\nb' }, 'statement', 'invalid_statement', /single line/],
    // The EIP-4361 grammar (the siwe package's parser) refuses them; viem builds them.
    ['a statement with a double quote', { statement: 'Sign in to "the app".' }, 'statement', 'invalid_statement', /EIP-4361 allows .*"\\"" at position 11 is not one of them/],
    ['a statement with a non-ASCII letter', { statement: 'Anmelden bei Bücher' }, 'statement', 'invalid_statement', /"ü" at position 14/],
    ['a statement with %', { statement: 'Save 100%' }, 'statement', 'invalid_statement', /"%" at position 8.*Rephrase the statement/],
    ['a statement with a carriage return', { statement: 'a\rb' }, 'statement', 'invalid_statement', /"\\r" at position 1/],
    ['a statement that mentions 127.0.0.1', { statement: 'Sign in at 127.0.0.1' }, 'statement', 'domain_blocked_by_waf', /firewall.*127\.0\.0\.1/],
    ['a uri whose query mentions 127.0.0.1', { uri: 'http://localhost:3000/?return=http://127.0.0.1:3000/' }, 'uri', 'domain_blocked_by_waf', /firewall.*localhost/],
    ['an IPv4-mapped IPv6 127.0.0.1 uri', { uri: 'http://[::ffff:127.0.0.1]/' }, 'uri', 'domain_blocked_by_waf', /firewall/],
    ['a relative uri', { uri: '/login' }, 'uri', 'invalid_uri', /absolute/],
    ['a domain viem refuses', { domain: 'not a domain' }, 'domain', 'invalid_siwe_field', /domain/],
    ['an IPv6 domain', { domain: '[::1]:3000' }, 'domain', 'invalid_siwe_field', /host name with a dot \(app\.example\.com\) or localhost.*IP literal.*got "\[::1\]:3000"/],
    ['a single-label domain', { domain: 'devbox:3000' }, 'domain', 'invalid_siwe_field', /single-label host such as devbox \(got "devbox:3000"\)/],
  ])('rejects %s with InvalidArgumentError', async (_case, overrides, argument, code, message) => {
    const error = await signIn(overrides).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument, code });
    expect((error as Error).message).toMatch(message);
    expect(service.requests).toHaveLength(0);
  });

  it('rejects missing parameters with InvalidArgumentError', async () => {
    const error = await client.signInWithEthereum(undefined as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument: 'params', code: 'invalid_option' });
    expect(service.requests).toHaveLength(0);
  });

  it('rejects a signer that does not return a hex signature', async () => {
    const error = await signIn({ signMessage: async () => 'not hex' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'InvalidArgumentError', code: 'invalid_signature' });
    expect(service.count('POST', '/api/v1/auth/challenge')).toBe(0);
  });
  it('passes what the wallet throws (the user rejected the prompt) through unchanged, storing nothing', async () => {
    class UserRejectedRequestError extends Error {}
    const refusal = new UserRejectedRequestError('User rejected the request.');
    const error = await signIn({ signMessage: () => Promise.reject(refusal) }).catch((caught: unknown) => caught);
    expect(error).toBe(refusal);
    expect(service.count('POST', '/api/v1/auth/challenge')).toBe(0);
    expect(client.tokenManager.hasToken).toBe(false);
  });
});

describe('signs in a wallet that has not registered (reference 5 rule 1: it is refused later, on the routes that need a user)', () => {
  it.each(['older', 'newer'] as const)('%s generation: a token whose claims say hasSignedUp false, without userId', async (generation) => {
    await service.close();
    service = await startPartnerService({ generation, registeredAddresses: [registeredAccount.address] });
    client = createPartnerClient({ baseUrl: service.url });
    const result = await client.signInWithEthereum({ ...signerFromViemAccount(unregisteredAccount), ...SIGN_IN_PAGE });
    const claims = JSON.parse(Buffer.from(result.token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims).toMatchObject({ signerAddress: unregisteredAccount.address, hasSignedUp: false });
    expect(claims).not.toHaveProperty('userId');
    expect([client.tokenManager.hasToken, client.tokenManager.hasSignedUp, client.tokenManager.generation]).toEqual([true, false, generation]);
    expect(result.refreshToken === undefined).toBe(generation === 'older');
  });
});

describe('reports refused sign-ins with typed errors', () => {
  it('answers a refused challenge (a signature by another key) with AuthenticationError (401), advising a new sign-in and a signer check, never registration', async () => {
    // A signature that does not match the address is refused at the challenge; a wallet that has not registered is not (it gets a token).
    const impostor = { address: registeredAccount.address, signMessage: (message: string) => unregisteredAccount.signMessage({ message }) };
    const error = await client
      .signInWithEthereum({ ...impostor, ...SIGN_IN_PAGE })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect((error as Error).message).toMatch(/call signInWithEthereum again, which gets a new nonce .*signMessage signs `message` exactly as given, with the key of `address`/);
    expect((error as Error).message).not.toMatch(/registered account/);
    expect(client.tokenManager.hasToken).toBe(false);
  });

  it('answers a domain that is not whitelisted with ForbiddenError code DomainNotWhitelisted', async () => {
    const error = await signIn({ domain: 'evil.example.org', uri: 'https://evil.example.org' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).not.toBeInstanceOf(WafForbiddenError);
    expect((error as ForbiddenError).code).toBe('DomainNotWhitelisted');
    expect((error as Error).message).toMatch(/partner dashboard/);
  });

  it('accepts a whitelisted domain', async () => {
    await expect(signIn({ domain: 'app.example.com', uri: 'https://app.example.com' })).resolves.toMatchObject({ token: expect.any(String) });
  });

  it('accepts a statement with every character EIP-4361 allows, and the siwe package parses the message', async () => {
    const statement = "Sign in: a-z A-Z 0-9 -._~:/?#[]@!$&'()*+,;= ok";
    await expect(signIn({ statement })).resolves.toMatchObject({ token: expect.any(String) });
    const message = service.requests.find((request) => request.method === 'POST')!.body;
    expect(new SiweMessage(JSON.parse(message).message).statement).toBe(statement);
  });

  it('answers a 403 with no code (a firewall or proxy page) naming both refusals it may be, the page kept in serviceMessage', async () => {
    service.script('POST', '/api/v1/auth/challenge', { status: 403, body: '<html><body>403 Forbidden</body></html>' });
    const error = await signIn().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as Error).message).toMatch(/^The service refused the request \(HTTP 403\): the sign-in was refused with no error code .*not whitelisted.*partner dashboard.*127\.0\.0\.1/);
    expect((error as Error).message).not.toContain('<html>');
    expect((error as ForbiddenError).serviceMessage).toContain('403 Forbidden');
  });

  it('answers a WAF block with WafForbiddenError', async () => {
    service.script('POST', '/api/v1/auth/challenge', { status: 403, body: { code: 'WAFForbidden', message: 'Request blocked' } });
    const error = await signIn().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WafForbiddenError);
    expect((error as Error).message).toMatch(/use localhost/);
  });

  it('rejects a 200 challenge answer without a token with UnexpectedResponseError', async () => {
    service.script('POST', '/api/v1/auth/challenge', { status: 200, body: { ok: true } });
    await expect(signIn()).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'missing_token' });
  });
});

describe('adapts viem accounts and wallet clients as signers', () => {
  it('signs in through a viem wallet client', async () => {
    const walletClient = createWalletClient({
      account: registeredAccount,
      chain: gnosis,
      // A local account signs without the transport; reaching it would be a bug.
      transport: custom({ request: async () => { throw new Error('no RPC expected'); } }),
    });
    const result = await client.signInWithEthereum({ ...signerFromWalletClient(walletClient), ...SIGN_IN_PAGE });
    expect(result.token).toEqual(expect.any(String));
  });

  it('signs in through a browser-style wallet (EIP-1193 personal_sign) by address', async () => {
    const methods: string[] = [];
    const injectedWallet = custom({
      request: async ({ method, params }: { method: string; params?: unknown }) => {
        methods.push(method);
        if (method !== 'personal_sign') throw new Error(`unexpected ${method}`);
        const [hexMessage] = params as [`0x${string}`, string];
        return registeredAccount.signMessage({ message: { raw: hexMessage } });
      },
    });
    const walletClient = createWalletClient({ chain: gnosis, transport: injectedWallet });
    const result = await client.signInWithEthereum({ ...signerFromWalletClient(walletClient, registeredAccount.address), ...SIGN_IN_PAGE });
    expect(result.token).toEqual(expect.any(String));
    expect(methods).toEqual(['personal_sign']);
  });

  it.each([
    ['a private key instead of an account', () => signerFromViemAccount(registeredAccount.address as never), 'account'],
    ['no account', () => signerFromViemAccount(undefined as never), 'account'],
    ['no wallet client', () => signerFromWalletClient(undefined as never, registeredAccount.address), 'walletClient'],
    ['a wallet client that cannot sign', () => signerFromWalletClient({ account: registeredAccount } as never), 'walletClient'],
  ])('refuses %s with InvalidArgumentError invalid_signer', (_case, make, argument) => {
    expect(make).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', code: 'invalid_signer', argument, message: expect.stringMatching(/privateKeyToAccount|createWalletClient/) }));
  });

  it('asks for an address when the wallet client has none', () => {
    const walletClient = createWalletClient({ chain: gnosis, transport: custom({ request: async () => null }) });
    expect(() => signerFromWalletClient(walletClient)).toThrow(InvalidArgumentError);
  });
});

describe('builds EIP-4361 messages from @capi/client/siwe', () => {
  it('checksums the address and names a refused field', () => {
    const message = buildSiweMessage({ address: registeredAccount.address.toLowerCase(), chainId: 100, domain: 'localhost', uri: 'http://localhost', nonce: 'abcdefgh1', issuedAt: new Date('2026-01-01T00:00:00Z') });
    expect(message).toContain(`\n${registeredAccount.address}\n`);
    expect(message).toContain('Issued At: 2026-01-01T00:00:00.000Z');
    expect(() => buildSiweMessage({ address: registeredAccount.address, chainId: 100, domain: 'localhost', uri: 'http://localhost', nonce: 'short' })).toThrow(
      expect.objectContaining({ argument: 'nonce', code: 'invalid_siwe_field' }),
    );
  });

  it('refuses a statement character exactly when the siwe package cannot parse the message (every Latin-1 character, and beyond)', () => {
    const fields = { address: registeredAccount.address, chainId: 100, domain: 'localhost', uri: 'http://localhost', nonce: 'abcdefgh1' };
    const characters = [...Array.from({ length: 256 }, (_, code) => String.fromCharCode(code)), '€', '😀', '\u2028'];
    const disagreements = characters.flatMap((character) => {
      const statement = `Sign${character}in`;
      let built: string | undefined;
      try {
        built = buildSiweMessage({ ...fields, statement });
      } catch (error) {
        // Refused: the only refusals are this one (and viem's for a line break it checks too).
        if (!(error instanceof InvalidArgumentError && error.argument === 'statement')) return [`${JSON.stringify(character)}: ${String(error)}`];
      }
      let parses = true;
      try {
        new SiweMessage(built ?? buildSiweMessage({ ...fields, statement: 'x' }).replace('\nx\n', `\n${statement}\n`));
      } catch {
        parses = false;
      }
      return (built !== undefined) === parses ? [] : [`${JSON.stringify(character)}: built ${built !== undefined}, siwe parses ${parses}`];
    });
    expect(disagreements).toEqual([]);
  });
});
