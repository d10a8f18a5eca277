import type { SmartAccountSignatureVerifier } from './auth/signature-verifier.js';
import type { SandboxLogEntry } from './log/sandbox-log.js';
import type { Generation } from './auth/token-service.js';
import { DEV_WALLET } from './dev-wallet.js';
import { closestWords } from './cli/parse-command-line.js';
import { SandboxConfigError } from './errors.js';
import type { OlderGenerationUserSeed } from './onboarding/older-generation-users.js';
import type { UserSeed } from './users/user.js';
import { RETRY_DELAYS_MS } from './webhooks/delivery-scheduler.js';

/**
 * Options of {@link startSandbox}; every one is optional.
 *
 * @example
 * ```ts
 * const options: SandboxOptions = { generation: 'newer', whitelist: ['app.example.com'], timeScale: 60 };
 * ```
 */
export interface SandboxOptions {
  /** Port of the core API (`baseUrl`). Default 0: a free port chosen by the OS. */
  port?: number;
  /** Port of the webhook key service (`webhooksUrl`). Default 0: a free port chosen by the OS. */
  webhooksPort?: number;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Users to seed (any subset of the User fields each). Default: the {@link DEV_WALLET} user, unless `usersFile` is given. */
  users?: UserSeed[];
  /** A JSON file of users to seed: an array, or `{ "users": [...] }`. Added after `users`. */
  usersFile?: string;
  /** Partner endpoints every event is POSTed to. More can be added at run time. */
  webhookUrls?: string[];
  /** Divides the webhook retry delays (1, 5, 15 minutes). Default 1; 60 turns minutes into seconds. */
  timeScale?: number;
  /**
   * How long a receiver has to answer a webhook. Default 30,000 ms (reference 4.6).
   * Give `@capi/webhook-receiver`'s store the same `replyWindowMs`: it counts 30 s otherwise,
   * and below that misses that an attempt it answered late was counted failed (see the README's
   * `--delivery-timeout`).
   */
  deliveryTimeoutMs?: number;
  /**
   * The share of webhook deliveries (0 to 1) the service sends twice (reference 6.2: duplicates
   * are possible), each copy with its own attempts and retries; the copy's log entry names the
   * first (`Delivery.copyOf`). Default 0. `1` sends every event twice, to test that a receiver
   * handles each event once whatever the copies' timing.
   */
  duplicateRate?: number;
  /**
   * How long after the first copy a duplicate's first attempt starts, in ms. Default 0: at once,
   * beside the first (a copy arriving while the first is being handled); longer, once the
   * first was answered.
   */
  duplicateAfterMs?: number;
  /**
   * How long a new daily limit stays `pending` before it becomes `synced`, in real time
   * (`advanceClock` does not move it). Default 2,000 ms. A second change within it restarts
   * the wait: the first amount is never in force. `'manual'`: a change stays `pending` until
   * {@link Sandbox.syncLimits} syncs it, so that a test can assert `pending` without racing a timer.
   */
  limitSyncDelayMs?: number | 'manual';
  /**
   * The infrastructure generation to imitate, older (default) or newer: its tokens, and the
   * operations it answers (the spec's `x-generation`; the other generation's answer 404). The
   * daily limit and the onboarding are the newer generation's.
   */
  generation?: Generation;
  /** SIWE domains accepted besides `localhost`, e.g. `app.example.com` or `app.example.com:8443`; pages on them may also call the sandbox from a browser (CORS). */
  whitelist?: string[];
  /** Verifies EIP-1271 smart-account signatures; without it only EOA signatures are accepted. */
  verifySmartAccountSignature?: SmartAccountSignatureVerifier;
  /** The time source for nonces and tokens, in milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * Receives one entry per request answered and per webhook delivery attempt (what
   * `capi-sandbox serve` prints). Default: none, so a sandbox started in tests stays silent;
   * pass `(entry) => console.log(entry.message)` to see the traffic. An exception it throws
   * is reported once as a process warning and never disturbs a request or a delivery.
   */
  onLog?: (entry: SandboxLogEntry) => void;
  /**
   * The partner's agreed maximum daily limit, in cents (reference 8: 1,000,000 unless agreed
   * otherwise at onboarding). `PUT` of a higher `amount` answers 422. Default 1,000,000. Every
   * account's limit starts at the lower of 1,000,000 and this maximum.
   */
  maxDailyLimitCents?: number;
  /** Newer generation: the partner requires phone verification (step `action_verify_phone`). Default false: the phone is set with the first card. */
  requirePhone?: boolean;
  /** Newer generation: how long a migrated user stays at `waiting_kyc_setup` once it has accepted the terms, on the sandbox clock. Default 5,000 ms. */
  migrationKycSetupMs?: number;
  /** Newer generation: older-generation users with smart accounts, migrated when their owner registers (reference 9). */
  olderGenerationUsers?: OlderGenerationUserSeed[];
  /**
   * The webhook signing key: a PKCS8 PEM Ed25519 private key (`openssl genpkey -algorithm ed25519`).
   * The sandbox signs with it and serves its public key from every start on, so that a receiver
   * given that public key (`CAPI_WEBHOOK_PUBLIC_KEY`) keeps verifying after a restart. Default: a
   * fresh key pair at each start. {@link Sandbox.rotateWebhookKey} still replaces it, until the
   * next start.
   */
  webhookPrivateKey?: string;
}

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'usersFile' | 'verifySmartAccountSignature' | 'onLog' | 'webhookPrivateKey'>> &
  Pick<SandboxOptions, 'usersFile' | 'verifySmartAccountSignature' | 'onLog' | 'webhookPrivateKey'>;

/** The longest wait a Node timer can hold (about 24.8 days); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveNumber(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SandboxConfigError('invalid_option', `${name} must be a number greater than 0; got ${JSON.stringify(value)}.`);
  }
  return value;
}

function nonNegativeNumber(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SandboxConfigError('invalid_option', `${name} must be a number of milliseconds >= 0; got ${JSON.stringify(value)}.`);
  }
  return value;
}

function timerMilliseconds(name: string, value: number): number {
  if (value > MAX_TIMER_MS) {
    throw new SandboxConfigError('invalid_option', `${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest Node timer; a longer one would fire at once); got ${value}.`);
  }
  return value;
}

function timeScaleOption(value: number | undefined): number {
  const timeScale = positiveNumber('timeScale', value, 1);
  // The longest retry wait, divided by the time scale, must fit a timer.
  // Rounded up to a number that prints exactly, so that the message states the real bound.
  const slowest = Math.ceil((Math.max(...RETRY_DELAYS_MS) / MAX_TIMER_MS) * 1e5) / 1e5;
  if (timeScale < slowest) {
    throw new SandboxConfigError('invalid_option', `timeScale must be at least ${slowest}, or the 15-minute retry wait would outgrow the longest Node timer (about 24.8 days); got ${timeScale}.`);
  }
  return timeScale;
}

function duplicateRateOption(value: number | undefined): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw new SandboxConfigError('invalid_option', `duplicateRate must be the share of deliveries sent twice, a number from 0 to 1 (1: every one); got ${JSON.stringify(value)}.`);
  }
  return value;
}

function port(name: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new SandboxConfigError('invalid_option', `${name} must be an integer port from 0 to 65535 (0: any free port); got ${JSON.stringify(value)}.`);
  }
  return value;
}

function whitelistEntry(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SandboxConfigError('invalid_option', `whitelist entries must be domains such as "app.example.com" or "app.example.com:8443"; got ${JSON.stringify(value)}.`);
  }
  // The SIWE domain is an RFC 3986 authority: an entry with a scheme or path would never match.
  if (value.includes('/')) {
    throw new SandboxConfigError('invalid_option', `whitelist entries must be a host and optional port, without a scheme or path; got ${JSON.stringify(value)} (write "${value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split('/')[0]}").`);
  }
  return value;
}

function optionalFunction<T>(name: string, value: T | undefined, what: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new SandboxConfigError('invalid_option', `${name} must be a function ${what}; got ${JSON.stringify(value)}.`);
  }
  return value;
}

// Every name of SandboxOptions: the compiler refuses a list that misses or adds one.
const OPTION_NAMES = Object.keys({
  port: true, webhooksPort: true, host: true, users: true, usersFile: true, webhookUrls: true, timeScale: true, deliveryTimeoutMs: true, duplicateRate: true, duplicateAfterMs: true,
  limitSyncDelayMs: true, generation: true, whitelist: true, verifySmartAccountSignature: true, now: true, onLog: true, maxDailyLimitCents: true,
  requirePhone: true, migrationKycSetupMs: true, olderGenerationUsers: true, webhookPrivateKey: true,
} satisfies { [Name in keyof Required<SandboxOptions>]: true });

/**
 * Throws {@link SandboxConfigError} for the first name of `options` that is not in `names`,
 * naming the closest ones (a misspelling) and every name `caller` takes.
 */
export function refuseUnknownOptionNames(options: object, names: readonly string[], caller: string): void {
  for (const name of Object.keys(options)) {
    if (names.includes(name)) continue;
    const near = closestWords(name.toLowerCase(), names.map((known) => known.toLowerCase())).map((lower) => names.find((known) => known.toLowerCase() === lower)!);
    throw new SandboxConfigError('invalid_option', `${caller} has no option ${JSON.stringify(name)}${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : '.'} Its options: ${names.join(', ')}.`);
  }
}

/** Checks every option and fills in the defaults; a bad option (or an unknown name) throws {@link SandboxConfigError}. */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SandboxConfigError('invalid_option', `startSandbox takes an options object (every option is optional: startSandbox() works); got ${JSON.stringify(options)}.`);
  }
  // As the CLI's flags and the seeds' fields: a misspelt timeScale would keep real 1/5/15-minute retries.
  refuseUnknownOptionNames(options, OPTION_NAMES, 'startSandbox');
  if (options.host !== undefined && (typeof options.host !== 'string' || options.host.trim() === '')) {
    throw new SandboxConfigError('invalid_option', `host must be the interface to listen on, such as "127.0.0.1" or "localhost"; got ${JSON.stringify(options.host)}.`);
  }
  const generation = options.generation ?? 'older';
  if (generation !== 'older' && generation !== 'newer') {
    throw new SandboxConfigError('invalid_option', `generation must be "older" or "newer"; got ${JSON.stringify(generation)}.`);
  }
  for (const [name, list] of [['users', options.users], ['webhookUrls', options.webhookUrls], ['whitelist', options.whitelist], ['olderGenerationUsers', options.olderGenerationUsers]] as const) {
    if (list !== undefined && !Array.isArray(list)) throw new SandboxConfigError('invalid_option', `${name} must be an array.`);
  }
  return {
    port: port('port', options.port),
    webhooksPort: port('webhooksPort', options.webhooksPort),
    host: options.host ?? '127.0.0.1',
    users: options.users ?? (options.usersFile ? [] : [{ signInWallets: [DEV_WALLET.address], email: 'dev@example.com', firstName: 'Dev', lastName: 'Wallet' }]),
    usersFile: options.usersFile,
    webhookUrls: options.webhookUrls ?? [],
    timeScale: timeScaleOption(options.timeScale),
    deliveryTimeoutMs: timerMilliseconds('deliveryTimeoutMs', positiveNumber('deliveryTimeoutMs', options.deliveryTimeoutMs, 30_000)),
    duplicateRate: duplicateRateOption(options.duplicateRate),
    duplicateAfterMs: timerMilliseconds('duplicateAfterMs', nonNegativeNumber('duplicateAfterMs', options.duplicateAfterMs, 0)),
    limitSyncDelayMs: limitSyncDelayOption(options.limitSyncDelayMs),
    generation,
    whitelist: (options.whitelist ?? []).map(whitelistEntry),
    verifySmartAccountSignature: optionalFunction('verifySmartAccountSignature', options.verifySmartAccountSignature, '({ address, message, signature, chainId }) => boolean | Promise<boolean>'),
    now: nowOption(options.now),
    onLog: optionalFunction('onLog', options.onLog, 'taking one log entry, e.g. (entry) => console.log(entry.message)'),
    maxDailyLimitCents: maxDailyLimitOption(options.maxDailyLimitCents),
    requirePhone: booleanOption('requirePhone', options.requirePhone),
    migrationKycSetupMs: timerMilliseconds('migrationKycSetupMs', nonNegativeNumber('migrationKycSetupMs', options.migrationKycSetupMs, 5_000)),
    olderGenerationUsers: olderGenerationUsersOption(options.olderGenerationUsers ?? [], generation),
    webhookPrivateKey: webhookPrivateKeyOption(options.webhookPrivateKey),
  };
}

function limitSyncDelayOption(value: number | 'manual' | undefined): number | 'manual' {
  if (value === 'manual') return value;
  if (value === Infinity) {
    throw new SandboxConfigError('invalid_option', 'limitSyncDelayMs: Infinity is not a timer; pass "manual" to keep changes pending until sandbox.syncLimits() syncs them.');
  }
  if (value !== undefined && typeof value !== 'number') {
    throw new SandboxConfigError('invalid_option', `limitSyncDelayMs must be a number of milliseconds >= 0, or "manual" (changes stay pending until sandbox.syncLimits()); got ${JSON.stringify(value)}.`);
  }
  return timerMilliseconds('limitSyncDelayMs', nonNegativeNumber('limitSyncDelayMs', value, 2_000));
}

function webhookPrivateKeyOption(value: string | undefined): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || !value.includes('-----BEGIN PRIVATE KEY-----'))) {
    throw new SandboxConfigError(
      'invalid_option',
      `webhookPrivateKey must be the text of a PKCS8 PEM Ed25519 private key ("-----BEGIN PRIVATE KEY-----...", made by openssl genpkey -algorithm ed25519); got ${typeof value === 'string' ? `a string without "-----BEGIN PRIVATE KEY-----"` : JSON.stringify(value)}.`,
    );
  }
  return value;
}

function maxDailyLimitOption(value: number | undefined): number {
  if (value === undefined) return 1_000_000;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new SandboxConfigError('invalid_option', `maxDailyLimitCents must be a whole number of cents >= 1 (the reference's default is 1000000, 10,000 USD); got ${JSON.stringify(value)}.`);
  }
  return value;
}

function booleanOption(name: string, value: boolean | undefined): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new SandboxConfigError('invalid_option', `${name} must be true or false; got ${JSON.stringify(value)}.`);
  return value ?? false;
}

function olderGenerationUsersOption(seeds: OlderGenerationUserSeed[], generation: Generation): OlderGenerationUserSeed[] {
  if (seeds.length > 0 && generation !== 'newer') {
    throw new SandboxConfigError('invalid_option', 'olderGenerationUsers are migrated when they register on the newer generation; start the sandbox with generation "newer".');
  }
  return seeds;
}

function nowOption(now: (() => number) | undefined): () => number {
  if (optionalFunction('now', now, 'returning milliseconds since the epoch, like Date.now') === undefined) return Date.now;
  // Every nonce, token and clock answer adds to it: a Date or a string would be concatenated.
  const sample: unknown = now!();
  if (typeof sample !== 'number' || !Number.isFinite(sample)) {
    const got = sample instanceof Date ? 'a Date (return date.getTime())' : typeof sample === 'string' ? `the string ${JSON.stringify(sample)}` : String(sample);
    throw new SandboxConfigError('invalid_option', `now must return milliseconds since the epoch as a number, like Date.now; it returned ${got}.`);
  }
  return now!;
}
