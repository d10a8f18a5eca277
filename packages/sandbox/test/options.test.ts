import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_WALLET, SandboxConfigError, startSandbox, UserRegistryError } from '../src/index.js';

describe('refuses unusable options with a SandboxConfigError that names the option', () => {
  it.each([
    [{ timeScale: 0 }, 'invalid_option', /timeScale must be a number greater than 0/],
    [{ timeScale: Number.NaN }, 'invalid_option', /timeScale/],
    [{ deliveryTimeoutMs: -1 }, 'invalid_option', /deliveryTimeoutMs/],
    [{ limitSyncDelayMs: -1 }, 'invalid_option', /limitSyncDelayMs must be a number of milliseconds >= 0/],
    // Longer than a Node timer holds: the timer would fire after 1 ms (every delivery timed out at once).
    [{ deliveryTimeoutMs: 3e9 }, 'invalid_option', /deliveryTimeoutMs must be at most 2147483647 ms .*got 3000000000/],
    [{ limitSyncDelayMs: 2 ** 31 }, 'invalid_option', /limitSyncDelayMs must be at most 2147483647 ms/],
    [{ timeScale: 1e-4 }, 'invalid_option', /timeScale must be at least 0\.00042, or the 15-minute retry wait would outgrow/],
    [{ port: 1.5 }, 'invalid_option', /port must be an integer port/],
    [{ generation: 'newest' as 'newer' }, 'invalid_option', /generation must be "older" or "newer"/],
    [{ webhookUrls: ['mailto:ops@example.com'] }, 'invalid_option', /webhookUrls: .*not an http\(s\) URL/],
    [{ users: [{ signInWallets: ['nope'] }] }, 'invalid_user', /User 1 of the seeded users is unusable: .*signInWallets.0.address must match pattern/],
    [{ users: [{ signInWallets: [DEV_WALLET.address] }, { signInWallets: [DEV_WALLET.address] }] }, 'invalid_user', /User 2 .*already belongs/],
    [{ usersFile: '/nonexistent.json' }, 'invalid_users_file', /Cannot read the users file/],
    [{ users: [{ signInWallets: [DEV_WALLET.address], kyc: 'approved' }] as never }, 'invalid_user', /User 1 of the seeded users is unusable: .*unknown User field "kyc"/],
    [{ whitelist: [123 as unknown as string] }, 'invalid_option', /whitelist entries must be domains such as "app.example.com"/],
    [{ whitelist: ['https://app.example.com'] }, 'invalid_option', /whitelist entries must be .*without a scheme or path; got "https:\/\/app.example.com"/],
    [{ whitelist: ['app.example.com/login'] }, 'invalid_option', /without a scheme or path/],
    [{ host: '' }, 'invalid_option', /host must be the interface to listen on/],
    [{ now: 'Date.now' as unknown as () => number }, 'invalid_option', /now must be a function returning milliseconds/],
    // Added to, not compared: a Date or a string was concatenated into every nonce expiry and clock answer.
    [{ now: (() => new Date()) as unknown as () => number }, 'invalid_option', /now must return milliseconds .*it returned a Date \(return date.getTime\(\)\)/],
    [{ now: (() => '1700000000000') as unknown as () => number }, 'invalid_option', /it returned the string "1700000000000"/],
    [{ now: () => Number.NaN }, 'invalid_option', /it returned NaN/],
    [{ verifySmartAccountSignature: true as never }, 'invalid_option', /verifySmartAccountSignature must be a function/],
    // A misspelt name kept its default silently: real 1/5/15-minute retries, no delivery at all, a 2 s sync.
    [{ timescale: 600 } as never, 'invalid_option', /^startSandbox has no option "timescale"; did you mean timeScale\? Its options: port, webhooksPort, .*webhookPrivateKey\.$/],
    [{ webhookUrl: ['http://localhost:1/'] } as never, 'invalid_option', /has no option "webhookUrl"; did you mean webhookUrls\?/],
    [{ limitSyncDelay: 10 } as never, 'invalid_option', /has no option "limitSyncDelay"; did you mean limitSyncDelayMs\?/],
    [{ verbose: true } as never, 'invalid_option', /^startSandbox has no option "verbose"\. Its options:/],
  ])('%j', async (options, code, pattern) => {
    const failure = await startSandbox(options).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SandboxConfigError);
    expect((failure as SandboxConfigError).code).toBe(code);
    expect((failure as SandboxConfigError).message).toMatch(pattern);
  });

  it('listening on every interface (0.0.0.0) gives URLs a client can connect to (127.0.0.1), and they answer', async () => {
    const everywhere = await startSandbox({ host: '0.0.0.0', users: [] });
    try {
      expect(everywhere.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(everywhere.webhooksUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${everywhere.webhooksUrl}/api/v1/public-key`)).status).toBe(200);
    } finally {
      await everywhere.close();
    }
  });

  it('refuses options that are not an object', async () => {
    await expect(startSandbox(null as never)).rejects.toMatchObject({ name: 'SandboxConfigError', code: 'invalid_option', message: expect.stringMatching(/options object/) });
  });

  it('refuses a port that is taken', async () => {
    const first = await startSandbox();
    const port = Number(new URL(first.baseUrl).port);
    await expect(startSandbox({ port })).rejects.toThrow(/Cannot listen on 127.0.0.1: .*EADDRINUSE/);
    await first.close();
  });
});

describe('seeds users from options, a users file, or the dev wallet', () => {
  it('completes partial users into full User objects and reads a users file (array form)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'capi-sandbox-users-')), 'users.json');
    writeFileSync(file, JSON.stringify([{ id: 'usr_file', kycStatus: 'approved', signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }] }]));
    const sandbox = await startSandbox({ users: [{ id: 'usr_inline', firstName: 'Ada' }], usersFile: file });
    try {
      const [inline, fromFile] = sandbox.users.list();
      expect(inline).toEqual({
        id: 'usr_inline', email: null, phone: null, firstName: 'Ada', lastName: null, address1: null, address2: null,
        city: null, postalCode: null, state: null, country: null, nationalityCountry: null, signInWallets: [], smartWallets: [],
        kycStatus: 'notStarted', availableFeatures: { providerIban: false }, cards: [], bankingDetails: null,
        isSourceOfFundsAnswered: false, isPhoneValidated: false,
      });
      expect(fromFile).toMatchObject({ id: 'usr_file', kycStatus: 'approved' });
      expect(sandbox.users.findByWallet('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')?.id).toBe('usr_file');
      expect(sandbox.users.findByWallet(DEV_WALLET.address)).toBeUndefined();
      expect(() => sandbox.users.setKycStatus('usr_missing', 'approved')).toThrow(UserRegistryError);
    } finally {
      await sandbox.close();
    }
  });

  it('seeds the dev wallet when no users are given', async () => {
    const sandbox = await startSandbox();
    expect(sandbox.users.findByWallet(DEV_WALLET.address)).toBeDefined();
    await sandbox.close();
  });
});

describe('answers requests outside the API with a readable error', () => {
  it('404 for an unknown path, 405 with Allow for a wrong method, 413 for an oversized body', async () => {
    const sandbox = await startSandbox();
    try {
      const notFound = await fetch(`${sandbox.baseUrl}/api/v2/nothing`);
      expect(notFound.status).toBe(404);
      expect((await notFound.json()).message).toMatch(/No endpoint GET \/api\/v2\/nothing/);
      const wrongMethod = await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`, { method: 'DELETE' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('GET');
      const huge = await fetch(`${sandbox.baseUrl}/__sandbox/users`, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) }).catch((error: Error) => error);
      // The sandbox answers 413 and stops reading; the client may see the answer or a reset.
      if (!(huge instanceof Error)) expect(huge.status).toBe(413);
      else expect(huge.message).toMatch(/fetch failed/);
      expect((await fetch(`${sandbox.baseUrl}/__sandbox`)).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
