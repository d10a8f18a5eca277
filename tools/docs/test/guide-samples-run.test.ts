import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { extractTsSamples, printedExpectations, runSample } from '../src/code-samples.mjs';
import { readGuides } from '../src/guides.mjs';

const samples = readGuides(path.join(repoRoot, 'docs/guides')).flatMap((guide) =>
  extractTsSamples(guide.markdown).map((sample, index) => ({ ...sample, name: `${guide.slug}-${index + 1}` })),
);

function sample(name: string) {
  const found = samples.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`No guide sample named ${name}; the samples are ${samples.map((candidate) => candidate.name).join(', ')}.`);
  return found;
}

/** Every line the sample's comments say it prints, in that order, among the lines it printed. */
function expectPrintedInOrder(stdout: string, expected: string[]) {
  const lines = stdout.split('\n');
  let from = 0;
  for (const text of expected) {
    const at = lines.findIndex((line, index) => index >= from && line.includes(text));
    expect(at, `printed "${text}" (after line ${from}) in:\n${stdout}`).toBeGreaterThanOrEqual(0);
    from = at + 1;
  }
}

/** Runs a sample and checks that it printed, in order, what its comments say, and that those are `expected`. */
async function expectSampleRunsAndPrints(name: string, expected: string[]) {
  expect(printedExpectations(sample(name).code)).toEqual(expected);
  const result = await runSample(sample(name));
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  expectPrintedInOrder(result.stdout, expected);
}

// The samples that need nothing but the packages (they start their own sandbox, or send no
// request) run as written, and print what their text and comments say.
describe('the self-contained samples of the guides run and print what they say', () => {
  it('reads what a sample says it prints from its console.log comments', () => {
    expect(printedExpectations(`console.log(a); // "synced"\nconsole.log(b); // true\nconst c = 1; // not printed\n`)).toEqual(['synced', 'true']);
  });

  it('quick start: signs in against a fresh sandbox and reads the default limit', async () => {
    const result = await runSample(sample('quick-start-1'));
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^signed in until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/m);
    expect(result.stdout).toContain('daily limit: 1000000 cents (synced)');
  }, 90_000);

  it('sign-in: a reauthenticate callback that throws is caught as the guide shows, without a request', async () => {
    const result = await runSample(sample('sign-in-2'));
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe('sign in first');
  }, 90_000);

  it('onboarding on the newer generation: a brand-new wallet from sign-in to card, every status on the way, then the limit', async () => {
    await expectSampleRunsAndPrints('onboarding-newer-generation-1', ['false', 'true', 'action_accept_tos', 'action_complete_kyc', 'action_complete_sof', 'action_create_account', '1', 'action_create_card', '1', 'completed', '1000000']);
  }, 90_000);

  it('migrating an existing user: waiting_kyc_setup, KYC and source of funds skipped; the fallback to the full flow', async () => {
    await expectSampleRunsAndPrints('migrating-an-existing-user-1', ['waiting_kyc_setup', 'action_create_account', 'approved true', 'action_complete_kyc']);
  }, 90_000);

  it('the older generation: an unregistered wallet refused, registered out-of-band, the phone verified by SMS, the limit onchain', async () => {
    await expectSampleRunsAndPrints('older-generation-1', ['false', 'UserNotRegistered', 'true', 'true', '404']);
  }, 90_000);

  // Not self-contained: its access token and the typed amount are `declare`d. Filled in here (a
  // sign-in against a fresh sandbox, 19.99 typed), the rest runs as written. (A partner's trial:
  // the wait was for the first of the two amounts set, and threw LimitSupersededError.)
  it('daily limit: sets the limit twice and waits for the second amount to be in force', async () => {
    const { code, name } = sample('daily-limit-1');
    const prelude = [
      "import { signerFromViemAccount } from '@capi/client';",
      "import { DEV_WALLET, startSandbox } from '@capi/sandbox';",
      "import { privateKeyToAccount } from 'viem/accounts';",
      "const sandbox = await startSandbox({ generation: 'newer', users: [{ signInWallets: [DEV_WALLET.address], smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }] }] });",
      "const signIn = createPartnerClient({ baseUrl: sandbox.baseUrl });",
      "const { token: accessToken } = await signIn.signInWithEthereum({ ...signerFromViemAccount(privateKeyToAccount(DEV_WALLET.privateKey)), domain: 'localhost', uri: 'http://localhost:3000/', chainId: 100 });",
      "const typedDollars = '19.99';",
    ].join('\n');
    const filled = code
      .replace('declare const accessToken: string; // from signInWithEthereum, on a newer-generation deployment', prelude)
      .replace('declare const typedDollars: string;', '')
      .replace("baseUrl: 'https://sandbox.capi.invalid'", 'baseUrl: sandbox.baseUrl');
    expect(filled).not.toContain('declare ');
    const result = await runSample({ name, code: `${filled}\nawait sandbox.close();\n` });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('in force: 1999');
    expect(result.stdout).toMatch(/^amount \S/m); // the refused 0, checked before any request
  }, 90_000);

  it('sandbox: the limit syncs, the key matches, the KYC change is delivered, signed and verified', async () => {
    await expectSampleRunsAndPrints('sandbox-2', ['synced', 'true', "[ 'kyc.status.changed: succeeded' ]", 'rejected']);
  }, 90_000);
});
