import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTsc, temporaryDirectory } from '@capi/codegen-kit/testing';
import { describe, expect, it } from 'vitest';
import { createPartnerClient, TokenManager } from '../src/index.js';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// A partner's project as strict as TypeScript gets, against the built declarations: under
// exactOptionalPropertyTypes an option given as `undefined` (a value read from config or
// storage that may be missing) is an error unless its type says `| undefined`. The runtime
// takes undefined as "left out" for every one of them.
const consumer = `
import { createPartnerClient, TokenManager, type SignInWithEthereumParams, type TokenSet } from '@capi/client';
import { waitForOnboardingStatus } from '@capi/client/onboarding';

declare const restored: TokenSet | undefined;
declare const maybe: <T>() => T | undefined;

const tokenManager = new TokenManager({
  tokens: restored,
  refresh: maybe<(refreshToken: string, options: { signal: AbortSignal }) => Promise<TokenSet>>(),
  reauthenticate: maybe<(options: { signal: AbortSignal }) => Promise<TokenSet | string>>(),
  refreshTimeoutMs: maybe<number>(),
  reauthenticateTimeoutMs: maybe<number>(),
  renewBeforeMs: maybe<number>(),
  generation: maybe<'older' | 'newer'>(),
});
const client = createPartnerClient({
  baseUrl: 'https://api.example.com',
  webhooksUrl: maybe<string>(),
  fetch: maybe<typeof fetch>(),
  tokenManager,
  timeoutMs: maybe<number>(),
  retries: maybe<number>(),
  maxDailyLimitCents: maybe<number>(),
  onRetry: maybe<() => void>(),
});
export const params: Omit<SignInWithEthereumParams, 'address' | 'signMessage'> = {
  domain: 'localhost', uri: 'http://localhost/', chainId: 100, statement: maybe<string>(), ttlInSeconds: maybe<number>(),
};
await client.setDailyLimit({ amount: 100, currency: maybe<'USD'>() });
await client.waitForLimitSync({ amount: maybe<number>(), timeoutMs: maybe<number>(), signal: maybe<AbortSignal>(), pollIntervalMs: maybe<number>(), maxPollIntervalMs: maybe<number>() });
await waitForOnboardingStatus(client, (status) => status === 'completed', { timeoutMs: maybe<number>(), signal: maybe<AbortSignal>(), pollIntervalMs: maybe<number>(), maxPollIntervalMs: maybe<number>() });
`;

describe('the published types, in a project with exactOptionalPropertyTypes', () => {
  it('take undefined for every optional option (TokenManager, createPartnerClient, sign-in, the limit, the waits)', () => {
    const dir = temporaryDirectory(join(tmpdir(), 'client-strict-'));
    mkdirSync(join(dir, 'node_modules/@capi'), { recursive: true });
    symlinkSync(packageDir, join(dir, 'node_modules/@capi/client'), 'dir');
    // The client's own dependencies (viem, openapi-fetch) and the other @capi packages, as installed beside it.
    for (const name of ['viem', 'openapi-fetch', 'openapi-typescript-helpers']) symlinkSync(join(packageDir, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
    symlinkSync(join(packageDir, 'node_modules/@capi/openapi-types'), join(dir, 'node_modules/@capi/openapi-types'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'consumer.ts'), consumer);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        noEmit: true, strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, verbatimModuleSyntax: true,
        target: 'es2022', lib: ['es2023', 'dom'], types: [], module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true,
      },
      files: ['consumer.ts'],
    }));
    expect(runTsc(join(dir, 'tsconfig.json')).output).toBe('');
  });

  it('and the runtime takes undefined as left out', () => {
    const tokenManager = new TokenManager({ tokens: undefined, refresh: undefined, reauthenticate: undefined, refreshTimeoutMs: undefined, reauthenticateTimeoutMs: undefined, renewBeforeMs: undefined, generation: undefined });
    expect(tokenManager.canReauthenticate).toBe(false);
    const client = createPartnerClient({ baseUrl: 'https://api.example.com', webhooksUrl: undefined, fetch: undefined, tokenManager: undefined, timeoutMs: undefined, retries: undefined, maxDailyLimitCents: undefined, onRetry: undefined });
    expect(client.tokenManager).toBeInstanceOf(TokenManager);
  });
});
