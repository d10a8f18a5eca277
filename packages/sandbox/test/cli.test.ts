import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run-cli.js';
import { USAGE } from '../src/cli/usage.js';
import { DEFAULT_SANDBOX_URL, expandSandboxFlag } from '../src/cli/send-through-sandbox.js';
import { DEFAULT_CLI_PORT } from '../src/cli/serve-command.js';
import { startSandbox, type Sandbox } from '../src/index.js';
import { sampleUser } from '../src/webhooks/sample-event-data.js';
import { callOperation } from './support/sandbox-api.js';
import { newAccount, tokenFor } from './support/sign-in.js';
import { startPlainReceiver } from './support/webhook-receiver.js';

const cliPath = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const workDir = mkdtempSync(join(tmpdir(), 'capi-sandbox-cli-'));
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function run(args: string[]) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk) => (stdout += chunk));
  err.on('data', (chunk) => (stderr += chunk));
  const code = await runCli(args, { out, err });
  return { code, stdout, stderr };
}

/** Starts the built binary as a partner would (`npx -p @capi/sandbox capi-sandbox serve ...`) and reads its banner. */
async function serve(args: string[], { subcommand = ['serve'] }: { subcommand?: string[] } = {}) {
  const child = spawn(process.execPath, [cliPath, ...subcommand, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => output.includes('-----END PUBLIC KEY-----') && resolve());
    child.once('exit', (code) => reject(new Error(`capi-sandbox exited with ${code}:\n${output}`)));
  });
  const field = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)![1]!;
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  closers.push(async () => void (await stop()));
  return { output: () => output, baseUrl: field('base URL'), webhooksUrl: field('webhooks URL'), stop };
}

describe('capi-sandbox serve prints the base URLs and the public key, and serves them', () => {
  it('starts with --port 0, --users FILE, --user, --webhook-url, --time-scale, --generation, --duplicate-rate, --duplicate-after; stops cleanly on SIGTERM', async () => {
    const partner = await startPlainReceiver({ publicKey: () => publicKey });
    closers.push(partner.close);
    const fromFile = newAccount();
    const fromFlag = newAccount();
    const usersFile = join(workDir, 'users.json');
    writeFileSync(usersFile, JSON.stringify({ users: [{ email: 'file@example.com', signInWallets: [fromFile.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }] }));
    const sandbox = await serve(['--port', '0', '--users', usersFile, '--user', fromFlag.address, '--webhook-url', partner.url, '--time-scale', '60', '--generation', 'newer', '--duplicate-rate', '1', '--duplicate-after', '50']);
    expect(sandbox.output()).toMatch(/newer generation, time scale 60/);
    expect(sandbox.output()).toContain(partner.url);
    const key = await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey');
    const publicKey: string = key.body.publicKey;
    expect(sandbox.output()).toContain(publicKey.trimEnd());

    // Newer generation: the file's user was seeded with its account (a smart wallet); --user
    // seeds a user who has not created one yet, so the limit is refused until POST /account.
    for (const [account, status] of [[fromFile, 200], [fromFlag, 409]] as const) {
      const token = await tokenFor(sandbox.baseUrl, account);
      expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).status).toBe(status);
    }
    const sent = await fetch(`${sandbox.baseUrl}/__sandbox/events`, { method: 'POST', body: JSON.stringify({ eventType: 'user.created' }) });
    expect(sent.status).toBe(202);
    // --duplicate-rate 1: the service's duplicate follows 50 ms later.
    for (let i = 0; i < 200 && partner.received.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(partner.received.map((delivery) => delivery.event.eventType)).toEqual(['user.created', 'user.created']);
    expect(await (await fetch(`${sandbox.baseUrl}/__sandbox`)).json()).toMatchObject({ duplicateRate: 1, duplicateAfterMs: 50 });
    expect(partner.rejected).toEqual([]);
    expect(await sandbox.stop()).toBe(0);
  });

  it('takes the partner agreements: --max-daily-limit, --require-phone, --migration-kyc-setup', async () => {
    const account = newAccount();
    const usersFile = join(workDir, 'account-holder.json');
    writeFileSync(usersFile, JSON.stringify([{ signInWallets: [account.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }]));
    const sandbox = await serve(['--port', '0', '--generation', 'newer', '--users', usersFile, '--max-daily-limit', '2000000', '--require-phone', '--migration-kyc-setup', '250']);
    const described = await (await fetch(`${sandbox.baseUrl}/__sandbox`)).json();
    expect(described).toMatchObject({ generation: 'newer', maxDailyLimitCents: 2_000_000, requirePhone: true, migrationKycSetupMs: 250 });
    const token = await tokenFor(sandbox.baseUrl, account);
    expect((await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 2_000_000, currency: 'USD' } })).status).toBe(200);
    expect((await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 2_000_001, currency: 'USD' } })).status).toBe(422);
    expect(await sandbox.stop()).toBe(0);
  });

  it('--limit-sync-delay manual: a new limit stays pending until POST /__sandbox/limits/sync', async () => {
    const account = newAccount();
    const usersFile = join(workDir, 'manual-sync.json');
    writeFileSync(usersFile, JSON.stringify([{ signInWallets: [account.address], smartWallets: [{ address: newAccount().address, chainId: '100' }] }]));
    const sandbox = await serve(['--port', '0', '--generation', 'newer', '--users', usersFile, '--limit-sync-delay', 'manual']);
    const token = await tokenFor(sandbox.baseUrl, account);
    await callOperation(sandbox.baseUrl, 'setAccountLimit', { token, body: { amount: 3_000, currency: 'USD' } });
    await new Promise((resolve) => setTimeout(resolve, 2_300)); // past the default 2,000 ms
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toMatchObject({ syncStatus: 'pending' });
    expect((await fetch(`${sandbox.baseUrl}/__sandbox/limits/sync`, { method: 'POST' })).status).toBe(200);
    expect((await callOperation(sandbox.baseUrl, 'getAccountLimit', { token })).body).toMatchObject({ amount: 3_000, syncStatus: 'synced' });
    expect(await sandbox.stop()).toBe(0);
  });

  it('--webhook-private-key FILE: the same public key at every start, so a receiver keeps it across restarts; without it a new one each start', async () => {
    const keyFile = join(workDir, 'sandbox-webhook-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const first = await serve(['--port', '0', '--webhook-private-key', keyFile]);
    const firstKey = (await callOperation(first.webhooksUrl, 'getWebhookPublicKey')).body.publicKey as string;
    expect(first.output()).toContain(`of --webhook-private-key ${keyFile}, the same at every start`);
    expect(await first.stop()).toBe(0);
    const second = await serve(['--port', '0', '--webhook-private-key', keyFile]);
    expect((await callOperation(second.webhooksUrl, 'getWebhookPublicKey')).body.publicKey).toBe(firstKey);
    expect(second.output()).toContain(firstKey.trimEnd());
    expect(await second.stop()).toBe(0);
    const fresh = await serve(['--port', '0']);
    expect((await callOperation(fresh.webhooksUrl, 'getWebhookPublicKey')).body.publicKey).not.toBe(firstKey);
    expect(fresh.output()).toContain('new at every start (--webhook-private-key FILE keeps one)');
    expect(await fresh.stop()).toBe(0);
  });

  it('seeds the dev wallet when no users are given, and says so', async () => {
    const sandbox = await serve(['--port', '0']);
    expect(sandbox.output()).toMatch(/dev wallet 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266/);
    await sandbox.stop();
  });

  it('starts with `npx -p @capi/sandbox capi-sandbox` alone: serve is the default command, on ports 4010 and 4011', async () => {
    const sandbox = await serve([], { subcommand: [] });
    expect(sandbox.baseUrl).toBe('http://127.0.0.1:4010');
    expect(sandbox.webhooksUrl).toBe('http://127.0.0.1:4011');
    expect((await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey')).status).toBe(200);
    expect(await sandbox.stop()).toBe(0);
  });

  it('takes serve flags without the word serve', async () => {
    const sandbox = await serve(['--port', '0', '--time-scale', '60'], { subcommand: [] });
    expect(sandbox.output()).toMatch(/older generation, time scale 60/);
    expect((await callOperation(sandbox.baseUrl, 'getNonce')).status).toBe(200);
    expect(await sandbox.stop()).toBe(0);
  });
});

describe('capi-sandbox refuses unusable command lines with a message and exit code 2', () => {
  it.each([
    [['serve', '--port', 'eighty'], /--port must be a number/],
    [['serve', '--port', '70000'], /port must be an integer port from 0 to 65535/],
    [['serve', '--time-scale', '0'], /timeScale must be a number greater than 0/],
    [['serve', '--delivery-timeout', '99999999999'], /deliveryTimeoutMs must be at most 2147483647 ms/],
    [['serve', '--duplicate-rate', '1.5'], /duplicateRate must be the share of deliveries sent twice, a number from 0 to 1/],
    [['serve', '--duplicate-after', '-5'], /duplicate-after|duplicateAfterMs/],
    [['serve', '--generation', 'newest'], /--generation must be "older" or "newer"/],
    [['serve', '--port', '0', '--webhook-private-key', '/nonexistent/key.pem'], /Cannot read the --webhook-private-key file \/nonexistent\/key\.pem: .*openssl genpkey -algorithm ed25519/],
    [['serve', '--port', '0', '--webhook-private-key', fileURLToPath(import.meta.url)], /webhookPrivateKey must be the text of a PKCS8 PEM Ed25519 private key/],
    [['serve', '--user', '0x1234'], /--user must be a wallet address/],
    [['serve', '--webhook-url', 'not a url'], /not an absolute URL/],
    [['serve', '--users', '/nonexistent/users.json'], /Cannot read the users file/],
    [['send-event', 'user.deleted', '--to', 'http://localhost:1'], /Unknown event type "user.deleted"/],
    [['send-event', 'user.created'], /needs --to URL/],
    [['send-event', '--to', 'http://localhost:1'], /exactly one event TYPE/],
  ])('%j', async (args, pattern) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(pattern);
    expect(stderr).toMatch(/capi-sandbox --help/);
  });

  it('refuses a users file that is not JSON or holds an invalid user, naming the problem', async () => {
    const notJson = join(workDir, 'not-json.json');
    writeFileSync(notJson, '[{');
    expect((await run(['serve', '--users', notJson])).stderr).toMatch(/is not JSON/);
    const badUser = join(workDir, 'bad-user.json');
    writeFileSync(badUser, JSON.stringify([{ kycStatus: 'approved' }, { kycStatus: 'almost' }]));
    const { code, stderr } = await run(['serve', '--users', badUser]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/User 2 of the seeded users is unusable: .*kycStatus/);
  });

  it('prints the usage for --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const flag of ['--port', '--users', '--webhook-url', '--time-scale', 'send-event TYPE --to URL', '--unknown-event-type', '--allow-unknown-fields']) expect(stdout).toContain(flag);
  });
});

describe('capi-sandbox send-event signs one event and sends it, like stripe trigger', () => {
  it('sends a sample event signed with a fresh key, printed so the receiver can trust it; exit 0 on 2xx', async () => {
    let publicKey = '';
    const partner = await startPlainReceiver({ publicKey: () => publicKey });
    closers.push(partner.close);
    const out = new PassThrough();
    const err = new PassThrough();
    let stdout = '';
    out.on('data', (chunk) => (stdout += chunk));
    // The key is printed before sending: the receiver reads it from there.
    err.on('data', (chunk) => {
      const match = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/.exec(String(chunk));
      if (match) publicKey = match[0];
    });
    const code = await runCli(['send-event', 'kyc.status.changed', '--to', partner.url], { out, err });
    expect(code).toBe(0);
    expect(stdout).toMatch(/kyc.status.changed -> .*: HTTP 204 succeeded/);
    expect(partner.rejected).toEqual([]);
    expect(partner.received[0]!.event.eventType).toBe('kyc.status.changed');
    expect(Object.keys(partner.received[0]!.event.data)).toHaveLength(20);
  });

  it('signs with an openssl-made --private-key and sends --data; exit 1 when the receiver refuses', async () => {
    const keyFile = join(workDir, 'webhook-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const publicKey = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const dataFile = join(workDir, 'transaction.json');
    writeFileSync(dataFile, JSON.stringify({ id: 'txn_1', amount: 999 }));
    const partner = await startPlainReceiver({ publicKey, answer: (delivery) => (delivery.event.data.amount === 999 ? 200 : 500) });
    closers.push(partner.close);
    const accepted = await run(['send-event', 'card.transaction.created', '--to', partner.url, '--private-key', keyFile, '--data', dataFile]);
    expect(accepted.code).toBe(0);
    expect(accepted.stderr).toBe('');
    expect(partner.received[0]!.event).toEqual({ eventType: 'card.transaction.created', data: { id: 'txn_1', amount: 999 } });

    const refusing = await startPlainReceiver({ publicKey, answer: () => 409 });
    closers.push(refusing.close);
    const refused = await run(['send-event', 'card.transaction.created', '--to', refusing.url, '--private-key', keyFile]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/HTTP 409 failed: refused with 409\n$/);
  });

  it('refuses data that does not match the event schema or nests thousands of levels deep, and a key that is not PEM', async () => {
    const dataFile = join(workDir, 'not-a-user.json');
    writeFileSync(dataFile, JSON.stringify({ id: 42 }));
    const badData = await run(['send-event', 'user.created', '--to', 'http://localhost:9', '--data', dataFile]);
    expect(badData.code).toBe(2);
    expect(badData.stderr).toMatch(/does not match the spec/);
    const deepFile = join(workDir, 'deep.json');
    writeFileSync(deepFile, `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
    for (const extra of [[], ['--sandbox', 'http://127.0.0.1:9']]) {
      const deep = await run(['send-event', 'card.transaction.created', '--to', 'http://localhost:9', '--data', deepFile, ...extra]);
      expect(deep.code).toBe(2);
      expect(deep.stderr).toMatch(/nests values more than 32 levels deep/);
    }
    const keyFile = join(workDir, 'not-a-key.pem');
    writeFileSync(keyFile, 'hello');
    const badKey = await run(['send-event', 'user.created', '--to', 'http://localhost:9', '--private-key', keyFile]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(/--private-key must be a PKCS8 PEM Ed25519 private key/);
  });

  it('--unknown-event-type sends a kind the SDK does not know, with the --data given unchecked (default {})', async () => {
    const keyFile = join(workDir, 'unknown-kind-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const publicKey = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const partner = await startPlainReceiver({ publicKey });
    closers.push(partner.close);
    const dataFile = join(workDir, 'statement.json');
    writeFileSync(dataFile, JSON.stringify({ id: 'st_1', total: 1250 }));
    const withData = await run(['send-event', 'card.statement.created', '--unknown-event-type', '--to', partner.url, '--private-key', keyFile, '--data', dataFile]);
    expect(withData).toMatchObject({ code: 0, stderr: '' });
    expect(withData.stdout).toMatch(/^card\.statement\.created -> .*: HTTP 204 succeeded\n$/);
    const withoutData = await run(['send-event', '--unknown-event-type', 'account.frozen', '--to', partner.url, '--private-key', keyFile]);
    expect(withoutData.code).toBe(0);
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.rawBody)).toEqual(['{"eventType":"card.statement.created","data":{"id":"st_1","total":1250}}', '{"eventType":"account.frozen","data":{}}']);
  });

  it('refuses, with exit 2, --unknown-event-type with a known kind or data that is not an object, and an unknown kind without it', async () => {
    const arrayFile = join(workDir, 'array.json');
    writeFileSync(arrayFile, '[1, 2]');
    const cases: [string[], RegExp][] = [
      [['send-event', 'user.created', '--unknown-event-type', '--to', 'http://localhost:9'], /user\.created is an event kind the SDK knows; leave out --unknown-event-type, so that its data is checked against its schema/],
      [['send-event', 'other.kind', '--unknown-event-type', '--to', 'http://localhost:9', '--data', arrayFile], /The other\.kind event's data must be a JSON object .*; got an array/],
      [['send-event', 'other.kind', '--unknown-event-type', '--sandbox', 'http://127.0.0.1:9', '--user-id', 'u1'], /--user-id picks the data of a known event kind; an unknown kind sends the --data you give \(default \{\}\)/],
      [['send-event', 'card.statement.created', '--to', 'http://localhost:9'], /Unknown event type "card\.statement\.created"; use one of user\.created, .*\. To send a kind the SDK does not know .*, add --unknown-event-type\./],
      [['send-event', 'user.created', '--to', 'http://localhost:9', '--duplicate'], /--duplicate has a running sandbox send the event twice, as the service may: add --sandbox/],
    ];
    for (const [args, pattern] of cases) {
      const { code, stderr } = await run(args);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(stderr).toMatch(pattern);
    }
  });

  it('--unchecked sends --data its schema refuses (schema drift), signed like any event; without it exit 2 names the flag; the data must still be an object', async () => {
    const keyFile = join(workDir, 'unchecked-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const publicKey = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const partner = await startPlainReceiver({ publicKey });
    closers.push(partner.close);
    const drifted: Record<string, unknown> = { ...(sampleUser() as unknown as Record<string, unknown>), kycStatus: 'verifiedByPartner' };
    const { email: _email, ...withoutEmail } = drifted;
    const dataFile = join(workDir, 'drifted-user.json');
    writeFileSync(dataFile, JSON.stringify(withoutEmail));
    const args = ['send-event', 'kyc.status.changed', '--to', partner.url, '--private-key', keyFile, '--data', dataFile];
    const refused = await run(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/The kyc\.status\.changed event does not match the spec: .*kycStatus must be one of: .*schema drift .*add --unchecked\./);
    const sent = await run([...args, '--unchecked']);
    expect(sent).toMatchObject({ code: 0, stderr: '' });
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event)).toEqual([{ eventType: 'kyc.status.changed', data: withoutEmail }]);
    const arrayFile = join(workDir, 'unchecked-array.json');
    writeFileSync(arrayFile, '[1, 2]');
    const notObject = await run(['send-event', 'kyc.status.changed', '--unchecked', '--to', partner.url, '--data', arrayFile]);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toMatch(/The kyc\.status\.changed event's data must be a JSON object .*; got an array/);
  });

  it('a misspelt known kind is answered with the kind it is nearest to, as POST /__sandbox/events does', async () => {
    const typo = await run(['send-event', 'kyc.status.change', '--to', 'http://localhost:9']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^capi-sandbox: Unknown event type "kyc\.status\.change"; use one of user\.created, .*, card\.transaction\.created\. Did you mean "kyc\.status\.changed"\?\n/);
    expect(typo.stderr).not.toMatch(/--unknown-event-type/);
    expect((await run(['send-event', 'user.creatd', '--sandbox', 'http://127.0.0.1:9'])).stderr).toMatch(/Did you mean "user\.created"\?/);
  });

  it('refuses --data whose cards have lastFourDigits that are not four digits, as for seeded users', async () => {
    const dataFile = join(workDir, 'bad-digits.json');
    writeFileSync(dataFile, JSON.stringify({ ...(sampleUser() as unknown as Record<string, unknown>), cards: [{ ...sampleUser().cards[0], lastFourDigits: 'ab' }] }));
    const refused = await run(['send-event', 'kyc.status.changed', '--to', 'http://localhost:9', '--data', dataFile]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/data\.cards\[0\]\.lastFourDigits must be the last four digits of the card number, e\.g\. "4242"; got "ab"/);
  });

  it('refuses --data with a field the event schema does not define, naming its path; --allow-unknown-fields sends it on purpose', async () => {
    const keyFile = join(workDir, 'unknown-fields-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const publicKey = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const partner = await startPlainReceiver({ publicKey });
    closers.push(partner.close);
    const data = { ...(sampleUser() as unknown as Record<string, unknown>), cards: [{ ...sampleUser().cards[0], pan: '4111111111111111' }] };
    const dataFile = join(workDir, 'user-with-pan.json');
    writeFileSync(dataFile, JSON.stringify(data));
    const args = ['send-event', 'kyc.status.changed', '--to', partner.url, '--private-key', keyFile, '--data', dataFile];
    const refused = await run(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/The kyc\.status\.changed event's data has a field its schema does not define: data\.cards\[0\]\.pan \(the Card fields are id, /);
    expect(refused.stderr).toMatch(/remove it\. To test on purpose how a receiver tolerates fields of a newer schema, add --allow-unknown-fields; to send a kind the SDK does not know, use --unknown-event-type\./);
    expect(partner.received).toEqual([]);
    const sent = await run([...args, '--allow-unknown-fields']);
    expect(sent.code).toBe(0);
    expect(partner.received.map((delivery) => delivery.event)).toEqual([{ eventType: 'kyc.status.changed', data }]);
  });
});

describe('capi-sandbox send-event --sandbox has a running sandbox sign and deliver the event with its key', () => {
  let sandbox: Sandbox;
  const handled: string[] = [];
  let receiverUrl = '';
  beforeAll(async () => {
    sandbox = await startSandbox({ users: [{ email: 'first@example.com' }] });
    // A partner's receiver that trusts only the key the running sandbox serves.
    const receiver = createWebhookReceiver({ publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` }) }).onAny((event) => {
      handled.push(`${event.eventType} ${(event.data as { email?: string }).email}`);
    });
    const server = createServer(toNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    closers.push(async () => {
      await sandbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
  });

  it('the receiver refuses the fresh key of plain send-event (401), and accepts the same event sent with --sandbox', async () => {
    handled.length = 0;
    const plain = await run(['send-event', 'kyc.status.changed', '--to', receiverUrl]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/HTTP 401 invalid_signature: The signature does not match/);
    expect(plain.stderr).toMatch(/add --sandbox/);

    const viaSandbox = await run(['send-event', 'kyc.status.changed', '--sandbox', sandbox.baseUrl, '--to', receiverUrl]);
    expect(viaSandbox.stderr).toBe('');
    expect(viaSandbox.code).toBe(0);
    const [delivery] = sandbox.deliveries().filter((entry) => entry.url === receiverUrl);
    expect(viaSandbox.stdout).toBe(`kyc.status.changed -> ${receiverUrl}: HTTP 200 processed (signed by the sandbox at ${sandbox.baseUrl}, delivery ${delivery!.id})\n`);
    // Without --data, the event carries the sandbox's first user.
    expect(handled).toEqual(['kyc.status.changed first@example.com']);

    // --duplicate: the service's duplicate too, one line each; the receiver handles it once.
    handled.length = 0;
    const twice = sandbox.users.create({ email: 'twice@example.com' });
    const sentTwice = await run(['send-event', 'kyc.status.changed', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--user-id', twice.id, '--duplicate']);
    expect(sentTwice.code).toBe(0);
    const [first, copy] = sandbox.deliveries().filter((entry) => entry.url === receiverUrl).slice(-2);
    expect(copy!.copyOf).toBe(first!.id);
    expect(sentTwice.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(sentTwice.stdout).toMatch(/HTTP 200 duplicate/);
    expect(handled).toEqual(['kyc.status.changed twice@example.com']);
  });

  it('without --to, delivers to the sandbox\'s configured endpoints, one line each; --user-id picks the user', async () => {
    handled.length = 0;
    const second = await startPlainReceiver({ publicKey: () => sandbox.publicKey });
    closers.push(second.close);
    // Created before the endpoints exist: the receiver would take a second identical body for a duplicate.
    const user = sandbox.users.create({ email: 'picked@example.com' });
    sandbox.addWebhookEndpoint(receiverUrl);
    sandbox.addWebhookEndpoint(second.url);
    try {
      const result = await run(['send-event', 'user.created', '--sandbox', sandbox.baseUrl, '--user-id', user.id]);
      expect(result.code).toBe(0);
      expect(result.stdout.trim().split('\n').map((line) => line.replace(/: .*/, ''))).toEqual([`user.created -> ${receiverUrl}`, `user.created -> ${second.url}`]);
      expect(handled).toEqual(['user.created picked@example.com']);
      expect(second.rejected).toEqual([]);
      expect(second.received.at(-1)!.event.data.email).toBe('picked@example.com');
    } finally {
      sandbox.removeWebhookEndpoint(receiverUrl);
      sandbox.removeWebhookEndpoint(second.url);
    }
  });

  it('says what the receiver answered: processed, then duplicate (no handler ran; exit 0, the delivery succeeded), or its error', async () => {
    handled.length = 0;
    const user = sandbox.users.create({ email: 'twice@example.com' });
    const dataFile = join(workDir, 'twice.json');
    writeFileSync(dataFile, JSON.stringify(user));
    const args = ['send-event', 'kyc.status.changed', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--data', dataFile];
    const first = await run(args);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/: HTTP 200 processed \(signed by the sandbox/);
    const second = await run(args);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      /: HTTP 200 duplicate \(This body is the latest processed event of its subject \(eventType, data.id\); the duplicate was not dispatched again\.\) \(signed by the sandbox/,
    );
    expect(second.stdout).not.toMatch(/succeeded/);
    expect(handled).toEqual(['kyc.status.changed twice@example.com']);

    // Plain send-event, a receiver whose handler fails: its error code and message.
    const keyFile = join(workDir, 'failing-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const publicKey = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const failing = createWebhookReceiver({ publicKey, onError: () => {} }).onAny(() => {
      throw new Error('database down');
    });
    const server = createServer(toNodeHandler(failing));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const failed = await run(['send-event', 'user.created', '--to', `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, '--private-key', keyFile]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/: HTTP 500 handler_failed: A handler failed; the delivery was released so that the retry is processed\.\n$/);
  });

  it('a receiver answering 500: exit 1, and says when the sandbox retries it', async () => {
    // Time scale 1: the retry is a minute away, so the first attempt is the whole story here.
    const slowRetries = await startSandbox({ users: [] });
    const refusing = await startPlainReceiver({ publicKey: () => slowRetries.publicKey, answer: () => 500 });
    closers.push(refusing.close);
    try {
      const result = await run(['send-event', 'kyc.source-of-funds.changed', '--sandbox', slowRetries.baseUrl, '--to', refusing.url]);
      expect(result.code).toBe(1);
      const [delivery] = slowRetries.deliveries();
      expect(result.stdout).toBe(
        `kyc.source-of-funds.changed -> ${refusing.url}: HTTP 500 failed: refused with 500; the sandbox retries it at ${delivery!.nextAttemptAt} (attempt 2 of 4): ${slowRetries.baseUrl}/__sandbox/deliveries?id=${delivery!.id}\n`,
      );
      expect(refusing.rejected).toEqual([]);
    } finally {
      await slowRetries.close();
    }
  });

  it('refuses with exit 2: no sandbox at the URL, a URL that is not a sandbox, no endpoint to deliver to, data or user the sandbox refuses, --private-key beside --sandbox', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const nobody = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const badData = join(workDir, 'bad-transaction.json');
    writeFileSync(badData, JSON.stringify([1, 2]));
    const cases: [string[], RegExp][] = [
      [['send-event', 'user.created', '--sandbox', nobody], new RegExp(`No capi sandbox answers at ${nobody} \\(.*ECONNREFUSED.*\\); start one with "capi-sandbox serve"`)],
      [['send-event', 'user.created', '--sandbox', sandbox.webhooksUrl], /is not a capi sandbox's base URL \(GET \/__sandbox answered HTTP 404\); pass the "base URL"/],
      [['send-event', 'user.created', '--sandbox', sandbox.baseUrl], /has no webhook endpoints; pass --to URL, or start it with --webhook-url URL/],
      [['send-event', 'user.created', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--user-id', 'nobody'], /refused the event \(HTTP 404\): No user with id "nobody"/],
      [['send-event', 'card.transaction.created', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--data', badData], /does not match the spec/],
      [['send-event', 'user.created', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--private-key', badData], /--private-key and --sandbox exclude each other/],
      [['send-event', 'user.created', '--sandbox', 'localhost:4010'], /--sandbox takes an http\(s\) base URL/],
      [['send-event', 'user.created', '--to', receiverUrl, '--to', receiverUrl], /without --sandbox POSTs to one --to URL/],
      [['send-event', 'user.created', '--to', receiverUrl, '--user-id', 'x'], /--user-id names a user of a running sandbox: add --sandbox/],
    ];
    const before = sandbox.deliveries().length;
    for (const [args, pattern] of cases) {
      const { code, stderr } = await run(args);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(stderr).toMatch(pattern);
    }
    expect(sandbox.deliveries()).toHaveLength(before);
  });

  it('--unknown-event-type and --allow-unknown-fields reach POST /__sandbox/events as unknownEventType and allowUnknownFields', async () => {
    const unknownKind = await run(['send-event', 'card.statement.created', '--unknown-event-type', '--sandbox', sandbox.baseUrl, '--to', receiverUrl]);
    expect(unknownKind.stderr).toBe('');
    expect(unknownKind.code).toBe(0);
    const [kindDelivery] = sandbox.deliveries().filter((entry) => entry.eventType === 'card.statement.created');
    expect(kindDelivery).toMatchObject({ event: { eventType: 'card.statement.created', data: {} }, state: 'succeeded', url: receiverUrl });
    expect(unknownKind.stdout).toMatch(new RegExp(`^card\\.statement\\.created -> ${receiverUrl}: HTTP 2\\d\\d .*\\(signed by the sandbox at `));

    const user = sandbox.users.create({ email: 'newer-fields@example.com' });
    const data = { ...user, loyaltyTier: 'gold' };
    const dataFile = join(workDir, 'newer-fields.json');
    writeFileSync(dataFile, JSON.stringify(data));
    const args = ['send-event', 'kyc.status.changed', '--sandbox', sandbox.baseUrl, '--to', receiverUrl, '--data', dataFile];
    const refused = await run(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/data\.loyaltyTier \(the User fields are id, .*add --allow-unknown-fields/);
    const tolerated = await run([...args, '--allow-unknown-fields']);
    expect(tolerated.stderr).toBe('');
    expect(tolerated.code).toBe(0);
    expect(sandbox.deliveries().at(-1)).toMatchObject({ event: { eventType: 'kyc.status.changed', data }, state: 'succeeded' });
  });

  it('--unchecked reaches POST /__sandbox/events as unchecked: the sandbox signs and delivers data its schema refuses', async () => {
    const partner = await startPlainReceiver({ publicKey: () => sandbox.publicKey });
    closers.push(partner.close);
    const user = sandbox.users.create({ email: 'drift@example.com' });
    const data = { ...user, kycStatus: 'verifiedByPartner' };
    const dataFile = join(workDir, 'drift-through-sandbox.json');
    writeFileSync(dataFile, JSON.stringify(data));
    const args = ['send-event', 'kyc.status.changed', '--sandbox', sandbox.baseUrl, '--to', partner.url, '--data', dataFile];
    const refused = await run(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/add --unchecked/);
    const sent = await run([...args, '--unchecked']);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/HTTP 204 succeeded \(signed by the sandbox at /);
    expect(partner.rejected).toEqual([]);
    expect(partner.received.map((delivery) => delivery.event)).toEqual([{ eventType: 'kyc.status.changed', data }]);
  });

  it('a bare --sandbox means http://127.0.0.1:4010, the port serve uses by default; a URL after it is its value', () => {
    expect(expandSandboxFlag(['user.created', '--sandbox'])).toEqual(['user.created', '--sandbox=http://127.0.0.1:4010']);
    expect(expandSandboxFlag(['--sandbox', 'user.created', '--to', 'http://x'])).toEqual(['--sandbox=http://127.0.0.1:4010', 'user.created', '--to', 'http://x']);
    expect(expandSandboxFlag(['user.created', '--sandbox', '--to', 'http://x'])).toEqual(['user.created', '--sandbox=http://127.0.0.1:4010', '--to', 'http://x']);
    expect(expandSandboxFlag(['user.created', '--sandbox', 'http://127.0.0.1:5000'])).toEqual(['user.created', '--sandbox', 'http://127.0.0.1:5000']);
    // An event kind the SDK does not know is no URL either (a URL has a scheme).
    expect(expandSandboxFlag(['--unknown-event-type', '--sandbox', 'card.statement.created'])).toEqual(['--unknown-event-type', '--sandbox=http://127.0.0.1:4010', 'card.statement.created']);
    expect(expandSandboxFlag(['user.created', '--sandbox', 'localhost:4010'])).toEqual(['user.created', '--sandbox', 'localhost:4010']);
    expect(DEFAULT_SANDBOX_URL).toBe(`http://127.0.0.1:${DEFAULT_CLI_PORT}`);
  });
});

describe('capi-sandbox serve prints a line per request and per webhook delivery attempt; --quiet prints none', () => {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  async function waitFor(output: () => string, pattern: RegExp): Promise<void> {
    for (let i = 0; i < 400 && !pattern.test(output()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(output()).toMatch(pattern);
  }

  it('prints method, path, status and ms per request; event type, URL, attempt, the receiver\'s answer and what comes next per attempt', async () => {
    const sandbox = await serve(['--port', '0', '--time-scale', '600']);
    const receiver = createWebhookReceiver({ publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key` }) }).onAny(() => {});
    const server = createServer(toNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const publicKey: string = (await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey')).body.publicKey;
    const refusing = await startPlainReceiver({ publicKey, answer: () => 500 });
    closers.push(refusing.close);

    expect((await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`)).status).toBe(200);
    await waitFor(sandbox.output, /^\d\d:\d\d:\d\d\.\d{3} GET \/api\/v1\/auth\/nonce 200 \d+ ms$/m);
    expect((await fetch(`${sandbox.baseUrl}/__sandbox/nowhere?token=secret`)).status).toBe(404);
    await waitFor(sandbox.output, /GET \/__sandbox\/nowhere 404 \d+ ms$/m);
    expect(sandbox.output()).not.toContain('secret');

    const send = (to: string, eventType: string) =>
      fetch(`${sandbox.baseUrl}/__sandbox/events`, { method: 'POST', body: JSON.stringify({ eventType, to: [to] }) });
    expect((await send(receiverUrl, 'user.created')).status).toBe(202);
    await waitFor(sandbox.output, new RegExp(`webhook user\\.created -> ${escape(receiverUrl)} attempt 1 \\(\\d+ ms\\): HTTP 200 processed$`, 'm'));
    expect(sandbox.output()).toMatch(/POST \/__sandbox\/events 202 \d+ ms$/m);
    expect((await send(receiverUrl, 'user.created')).status).toBe(202);
    await waitFor(sandbox.output, new RegExp(`webhook user\\.created -> ${escape(receiverUrl)} attempt 1 \\(\\d+ ms\\): HTTP 200 duplicate \\(This body is the latest processed event`, 'm'));

    // Time scale 600: the retries come after 0.1, 0.5 and 1.5 seconds.
    expect((await send(refusing.url, 'kyc.status.changed')).status).toBe(202);
    const failedAttempt = (n: number, next: string) =>
      new RegExp(`webhook kyc\\.status\\.changed -> ${escape(refusing.url)} attempt ${n} \\(\\d+ ms\\): HTTP 500 failed: refused with 500; ${next}$`, 'm');
    await waitFor(sandbox.output, failedAttempt(1, 'attempt 2 of 4 at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z'));
    await waitFor(sandbox.output, failedAttempt(4, 'given up'));
    expect(await sandbox.stop()).toBe(0);
  });

  it('--quiet: the banner and nothing per request or delivery', async () => {
    let publicKey = '';
    const partner = await startPlainReceiver({ publicKey: () => publicKey });
    closers.push(partner.close);
    const sandbox = await serve(['--port', '0', '--quiet', '--webhook-url', partner.url]);
    publicKey = (await callOperation(sandbox.webhooksUrl, 'getWebhookPublicKey')).body.publicKey;
    expect((await fetch(`${sandbox.baseUrl}/api/v1/auth/nonce`)).status).toBe(200);
    expect((await fetch(`${sandbox.baseUrl}/__sandbox/events`, { method: 'POST', body: JSON.stringify({ eventType: 'user.created' }) })).status).toBe(202);
    for (let i = 0; i < 200 && partner.received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(partner.received).toHaveLength(1);
    expect(await sandbox.stop()).toBe(0);
    // Everything the process wrote is in once it has exited.
    expect(sandbox.output()).toMatch(/-----END PUBLIC KEY-----\ncapi sandbox stopped\n$/);
  });
});

describe('capi-sandbox --version, and "did you mean" for a mistyped flag or command', () => {
  function runBinary(args: string[]) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('prints the package version for --version, -v and version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v', 'version']) {
      expect(await runBinary([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it.each([
    [['serve', '--help']],
    [['serve', '-h']],
    [['serve', '--port', '4010', '--help']],
    [['--port', '4010', '-h']],
    [['send-event', '--help']],
    [['send-event', 'user.created', '--to', 'http://localhost:3000', '-h']],
    [['sned-event', '--help']],
    [['serve', '--version', '--help']],
  ])('%j: --help or -h anywhere prints the usage on stdout and exits 0, starting nothing', async (args) => {
    const { code, stdout, stderr } = await runBinary(args);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(USAGE);
  });

  it('--version or -v after a command prints the version; after "--" a flag word is a positional, not a request', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const args of [['serve', '--version'], ['send-event', 'user.created', '-v']]) {
      expect(await runBinary(args)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
    const { code, stdout, stderr } = await run(['send-event', '--to', 'http://localhost:1', '--', '--help']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/Unknown event type "--help"/);
  });

  it.each([
    [['serve', '--prot', '4010'], 'Unknown flag --prot for serve. Did you mean --port?'],
    [['--time_scale', '60'], 'Unknown flag --time_scale for serve. Did you mean --time-scale?'],
    [['--webhook-urls', 'http://localhost:3000'], 'Unknown flag --webhook-urls for serve. Did you mean --webhook-url?'],
    [['--qiuet'], 'Unknown flag --qiuet for serve. Did you mean --quiet?'],
    [['--versoin'], 'Unknown flag --versoin for serve. Did you mean --version?'],
    [['--post', '1'], 'Unknown flag --post for serve. Did you mean --port or --host?'],
    [['send-event', 'user.created', '--tto', 'http://localhost:3000'], 'Unknown flag --tto for send-event. Did you mean --to?'],
    [['sned-event'], 'Unknown command "sned-event"; use "serve" or "send-event". Did you mean send-event?'],
  ])('%j: exit 2 with the suggestion and the usage', async (args, message) => {
    const { code, stdout, stderr } = await runBinary(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')[0]).toBe(`capi-sandbox: ${message}`);
    expect(stderr).toContain('Usage:\n  capi-sandbox [serve] [options]');
  });

  it.each([
    [['--colour'], 'Unknown flag --colour for serve.'],
    [['launch'], 'Unknown command "launch"; use "serve" or "send-event".'],
  ])('%j: near no known word, suggests nothing and still shows the usage', async (args, message) => {
    const { code, stderr } = await runBinary(args);
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe(`capi-sandbox: ${message}`);
    expect(stderr).toContain('Usage:');
  });
});
