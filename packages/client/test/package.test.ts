// The package as consumers get it: the built dist, its exports map, both module systems, and
// a main entry that runs in browsers and never loads viem before sign-in.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { publint } from 'publint';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPartnerService } from './support/partner-service.js';
import { registeredAccount, TEST_PRIVATE_KEY } from './support/wallet.js';

const run = promisify(execFile);
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(packageDir, 'dist');

beforeAll(() => {
  if (!existsSync(join(dist, 'index.js'))) throw new Error('dist/ is missing: run `pnpm turbo run build --filter=@capi/client...` first');
});

describe('publishes a package that resolves for every consumer', () => {
  it('passes publint without errors or warnings', async () => {
    const { messages } = await publint({ pkgDir: packageDir, level: 'warning', strict: true });
    expect(messages).toEqual([]);
  });

  it('passes arethetypeswrong for every entry', async () => {
    const { stdout } = await run('pnpm', ['exec', 'attw', '--pack', '.', '--format', 'json', '--no-color'], { cwd: packageDir, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout: string }) => error);
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { analysis: { problems: unknown[] } };
    expect(report.analysis.problems).toEqual([]);
  }, 60_000);

  it('signs in and reads the limit from CommonJS and from ESM', async () => {
    // The limit is the newer generation's (the older one answers it 404).
    const service = await startPartnerService({ generation: 'newer', registeredAddresses: [registeredAccount.address] });
    const flow = (load: string) => `
      ${load}
      const { privateKeyToAccount } = require('viem/accounts');
      const client = createPartnerClient({ baseUrl: process.env.SERVICE_URL });
      const account = privateKeyToAccount(process.env.TEST_KEY);
      client.signInWithEthereum({ ...signerFromViemAccount(account), domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 100 })
        .then(() => client.getDailyLimit())
        .then((limit) => console.log(JSON.stringify(limit)), (error) => { console.error(error); process.exit(1); });`;
    try {
      const env = { ...process.env, SERVICE_URL: service.url, TEST_KEY: TEST_PRIVATE_KEY };
      for (const script of [
        flow("const { createPartnerClient, signerFromViemAccount } = require('@capi/client');"),
        flow("import('@capi/client').then(({ createPartnerClient, signerFromViemAccount }) => {") + '});',
      ]) {
        const { stdout } = await run(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: packageDir, env });
        expect(JSON.parse(stdout)).toEqual({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' });
      }
    } finally {
      await service.close();
    }
  }, 60_000);

  it('resolves every entry from CommonJS and from ESM', async () => {
    const script = `
      const cjs = require('@capi/client');
      const siwe = require('@capi/client/siwe');
      const onboarding = require('@capi/client/onboarding');
      Promise.all([import('@capi/client'), import('@capi/client/onboarding')]).then(([esm, esmOnboarding]) => {
        console.log(JSON.stringify([typeof cjs.createPartnerClient, typeof siwe.buildSiweMessage, typeof esm.createPartnerClient, typeof esm.TokenManager, typeof onboarding.waitForOnboardingStatus, typeof esmOnboarding.getOnboardingStatus]));
      });`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: packageDir });
    expect(JSON.parse(stdout)).toEqual(['function', 'function', 'function', 'function', 'function', 'function']);
  });
});

describe('keeps viem out of the main entry', () => {
  it('takes viem as a peer dependency that the README installs beside the client', () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
    expect(manifest.peerDependencies?.viem).toMatch(/^\^2\./);
    expect(manifest.peerDependenciesMeta?.viem?.optional).toBeUndefined();
    expect(manifest.dependencies?.viem).toBeUndefined();
    expect(readFileSync(join(packageDir, 'README.md'), 'utf8')).toContain('npm i @capi/client viem');
  });

  it('imports viem nowhere but the lazily loaded sign-in chunk', () => {
    const main = readFileSync(join(dist, 'index.js'), 'utf8');
    expect(main).not.toMatch(/from ["']viem/);
    expect(main).toMatch(/import\(["']\.\/sign-in-[\w-]+\.js["']\)/);
  });

  it('does not load viem when the main entry is imported (ESM and CommonJS)', async () => {
    // A resolve hook that refuses viem: importing the main entry must still work, the siwe entry must not.
    const refuseViem = `data:text/javascript,import { register } from "node:module"; register("data:text/javascript,export async function resolve(specifier, context, next) { if (specifier === \\"viem\\" || specifier.startsWith(\\"viem/\\")) throw new Error(\\"viem was loaded\\"); return next(specifier, context); }");`;
    const esm = `
      const main = await import('@capi/client');
      const siwe = await import('@capi/client/siwe').then(() => 'loaded', (error) => error.message);
      const require = (await import('node:module')).createRequire(import.meta.url);
      const cjs = require('@capi/client');
      const cache = Object.keys(require.cache);
      console.log(JSON.stringify([typeof main.createPartnerClient, siwe, typeof cjs.createPartnerClient, cache.some((name) => name.includes('/viem/'))]));`;
    const { stdout } = await run(process.execPath, ['--import', refuseViem, '--input-type=module', '-e', esm], { cwd: packageDir });
    expect(JSON.parse(stdout)).toEqual(['function', 'viem was loaded', 'function', false]);
  });

  it('bundles for the browser with no Node built-in', async () => {
    const result = await build({
      entryPoints: [join(dist, 'index.js')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      external: ['viem', 'viem/*'],
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('openapi-fetch'))).toBe(true);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
  });

  it('bundles every entry with esbuild without a warning (no bare chunk import that "sideEffects": false makes it ignore)', async () => {
    const result = await build({
      entryPoints: ['index.js', 'onboarding.js', 'siwe.js'].map((entry) => join(dist, entry)),
      bundle: true,
      write: false,
      outdir: join(packageDir, 'bundle-check'),
      format: 'esm',
      platform: 'browser',
      external: ['viem', 'viem/*'],
      logLevel: 'silent',
    });
    expect(result.warnings.map((warning) => warning.text)).toEqual([]);
  });
});
