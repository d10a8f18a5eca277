import { readFile } from 'node:fs/promises';
import { isAddress } from 'viem';
import type { Generation } from '../auth/token-service.js';
import { DEV_WALLET } from '../dev-wallet.js';
import type { SandboxOptions } from '../options.js';
import { startSandbox } from '../sandbox.js';
import { CliUsageError } from './cli-usage-error.js';
import { parseCommandLine } from './parse-command-line.js';
import { parseNumberFlag } from './parse-number.js';
import type { CliStreams } from './run-cli.js';

/** The port `capi-sandbox serve` uses without `--port`. */
export const DEFAULT_CLI_PORT = 4010;

function parseServeArgs(args: string[]) {
  return parseCommandLine(
    'serve',
    args,
    {
      port: { type: 'string' },
      'webhooks-port': { type: 'string' },
      host: { type: 'string' },
      users: { type: 'string' },
      user: { type: 'string', multiple: true },
      'webhook-url': { type: 'string', multiple: true },
      'time-scale': { type: 'string' },
      'delivery-timeout': { type: 'string' },
      'duplicate-rate': { type: 'string' },
      'duplicate-after': { type: 'string' },
      'limit-sync-delay': { type: 'string' },
      generation: { type: 'string' },
      whitelist: { type: 'string', multiple: true },
      'max-daily-limit': { type: 'string' },
      'require-phone': { type: 'boolean' },
      'migration-kyc-setup': { type: 'string' },
      'webhook-private-key': { type: 'string' },
      quiet: { type: 'boolean' },
    },
    false,
  ).values;
}

/** The time of a log entry as the terminal shows it: `HH:MM:SS.mmm` (UTC, like the delivery log). */
function clockTime(iso: string): string {
  return iso.slice(11, 23);
}

/**
 * `capi-sandbox serve`: starts the sandbox, prints its URLs and key, then one line per request
 * and per webhook delivery attempt (none with `--quiet`); runs until SIGINT/SIGTERM.
 */
export async function runServe(args: string[], { out }: CliStreams): Promise<number> {
  const flags = parseServeArgs(args);
  const port = parseNumberFlag('port', flags.port) ?? DEFAULT_CLI_PORT;
  const generation = flags.generation;
  if (generation !== undefined && generation !== 'older' && generation !== 'newer') {
    throw new CliUsageError(`--generation must be "older" or "newer"; got "${generation}".`);
  }
  for (const address of flags.user ?? []) {
    if (!isAddress(address, { strict: false })) throw new CliUsageError(`--user must be a wallet address (0x and 40 hex digits); got "${address}".`);
  }
  let webhookPrivateKey: string | undefined;
  if (flags['webhook-private-key'] !== undefined) {
    try {
      webhookPrivateKey = await readFile(flags['webhook-private-key'], 'utf8');
    } catch (error) {
      throw new CliUsageError(`Cannot read the --webhook-private-key file ${flags['webhook-private-key']}: ${(error as Error).message} (make one with: openssl genpkey -algorithm ed25519 -out ${flags['webhook-private-key']}).`);
    }
  }
  const options: SandboxOptions = {
    port,
    webhooksPort: parseNumberFlag('webhooks-port', flags['webhooks-port']) ?? (port === 0 ? 0 : port + 1),
    ...(flags.host !== undefined ? { host: flags.host } : {}),
    ...(flags.users !== undefined ? { usersFile: flags.users } : {}),
    ...(flags.user ? { users: flags.user.map((address) => ({ signInWallets: [address] })) } : {}),
    webhookUrls: flags['webhook-url'] ?? [],
    ...(flags['time-scale'] !== undefined ? { timeScale: parseNumberFlag('time-scale', flags['time-scale'])! } : {}),
    ...(flags['delivery-timeout'] !== undefined ? { deliveryTimeoutMs: parseNumberFlag('delivery-timeout', flags['delivery-timeout'])! } : {}),
    ...(flags['duplicate-rate'] !== undefined ? { duplicateRate: parseNumberFlag('duplicate-rate', flags['duplicate-rate'])! } : {}),
    ...(flags['duplicate-after'] !== undefined ? { duplicateAfterMs: parseNumberFlag('duplicate-after', flags['duplicate-after'])! } : {}),
    // 'manual': a change stays pending until POST /__sandbox/limits/sync.
    ...(flags['limit-sync-delay'] !== undefined ? { limitSyncDelayMs: flags['limit-sync-delay'] === 'manual' ? 'manual' : parseNumberFlag('limit-sync-delay', flags['limit-sync-delay'])! } : {}),
    ...(generation !== undefined ? { generation: generation as Generation } : {}),
    whitelist: flags.whitelist ?? [],
    ...(flags['max-daily-limit'] !== undefined ? { maxDailyLimitCents: parseNumberFlag('max-daily-limit', flags['max-daily-limit'])! } : {}),
    ...(flags['require-phone'] ? { requirePhone: true } : {}),
    ...(flags['migration-kyc-setup'] !== undefined ? { migrationKycSetupMs: parseNumberFlag('migration-kyc-setup', flags['migration-kyc-setup'])! } : {}),
    ...(webhookPrivateKey !== undefined ? { webhookPrivateKey } : {}),
    ...(flags.quiet ? {} : { onLog: (entry) => out.write(`${clockTime(entry.time)} ${entry.message}\n`) }),
  };
  const sandbox = await startSandbox(options);
  const users = sandbox.users.list();
  const devUser = sandbox.users.findByWallet(DEV_WALLET.address);
  out.write(
    [
      `capi sandbox is running (${options.generation ?? 'older'} generation, time scale ${options.timeScale ?? 1})`,
      `  base URL          ${sandbox.baseUrl}`,
      `  webhooks URL      ${sandbox.webhooksUrl}`,
      `  admin             ${sandbox.baseUrl}/__sandbox`,
      `  delivery log      ${sandbox.baseUrl}/__sandbox/deliveries`,
      `  webhook endpoints ${options.webhookUrls!.length > 0 ? options.webhookUrls!.join(', ') : '(none; POST /__sandbox/webhook-endpoints to add one)'}`,
      `  users             ${users.length}${devUser ? ` (dev wallet ${DEV_WALLET.address}, private key ${DEV_WALLET.privateKey}: public, never use it for value)` : ''}`,
      `  SIWE domains      localhost (any port)${options.whitelist!.length > 0 ? `, ${options.whitelist!.join(', ')}` : ''}`,
      webhookPrivateKey !== undefined
        ? `Webhook public key (Ed25519, PEM SPKI) of --webhook-private-key ${flags['webhook-private-key']}, the same at every start, also at GET <webhooks URL>/api/v1/public-key:`
        : 'Webhook public key (Ed25519, PEM SPKI), new at every start (--webhook-private-key FILE keeps one), also at GET <webhooks URL>/api/v1/public-key:',
      sandbox.publicKey.trimEnd(),
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sandbox.close();
  out.write('capi sandbox stopped\n');
  return 0;
}
