import { randomInt } from 'node:crypto';
import { ApiError } from '../http/api-error.js';

/** How long a one-time password is accepted: ten minutes of the sandbox clock. */
export const ONE_TIME_PASSWORD_LIFETIME_MS = 10 * 60 * 1000;

/** How many sent passwords `GET /__sandbox/one-time-passwords` remembers (oldest dropped first). */
const OUTBOX_SIZE = 1000;

/**
 * A one-time password the sandbox "sent". There is no mailbox or phone, so the sandbox keeps
 * what it sent for the partner's tests to read (`GET /__sandbox/one-time-passwords`).
 *
 * @example
 * ```ts
 * const { code } = sandbox.oneTimePasswords().findLast((sent) => sent.sentTo === 'ada@example.com')!;
 * ```
 */
export interface SentOneTimePassword {
  /** `email` (registration) or `sms` (phone verification). */
  channel: 'email' | 'sms';
  /** The wallet that asked for it; only that wallet's session can use it. */
  walletAddress: string;
  sentTo: string;
  code: string;
  /** ISO 8601, on the sandbox clock. */
  expiresAt: string;
}

const invalidPassword = (what: string) =>
  new ApiError(422, {
    code: 'InvalidOneTimePassword',
    message: `The one-time password is wrong, expired or was never requested for ${what}; request a new one and send the code it delivered (sandbox: GET /__sandbox/one-time-passwords).`,
  });

/**
 * The pending one-time passwords, one per wallet and channel: a new request replaces the
 * previous password, a wrong code leaves it usable, a right one is used up.
 */
export class OneTimePasswords {
  readonly #pending = new Map<string, SentOneTimePassword & { expiresAtMs: number }>();
  readonly #outbox: SentOneTimePassword[] = [];

  constructor(private readonly now: () => number) {}

  /** "Sends" a new password to `sentTo` and answers the spec's `OneTimePasswordSent`. */
  send(channel: SentOneTimePassword['channel'], walletAddress: string, sentTo: string): { sentTo: string; expiresAt: string } {
    const expiresAtMs = this.now() + ONE_TIME_PASSWORD_LIFETIME_MS;
    const sent: SentOneTimePassword = {
      channel,
      walletAddress,
      sentTo,
      code: String(randomInt(0, 1_000_000)).padStart(6, '0'),
      expiresAt: new Date(expiresAtMs).toISOString(),
    };
    this.#pending.set(this.#key(channel, walletAddress), { ...sent, expiresAtMs });
    this.#outbox.push(sent);
    if (this.#outbox.length > OUTBOX_SIZE) this.#outbox.shift();
    return { sentTo, expiresAt: sent.expiresAt };
  }

  /** Uses up the password sent to `sentTo`; a 422 `InvalidOneTimePassword` when it does not match. */
  consume(channel: SentOneTimePassword['channel'], walletAddress: string, sentTo: string, code: string): void {
    const key = this.#key(channel, walletAddress);
    const pending = this.#pending.get(key);
    const sameTarget = pending !== undefined && (channel === 'email' ? pending.sentTo.toLowerCase() === sentTo.toLowerCase() : pending.sentTo === sentTo);
    if (!pending || !sameTarget || pending.code !== code || pending.expiresAtMs <= this.now()) throw invalidPassword(sentTo);
    this.#pending.delete(key);
  }

  /** Every password sent, oldest first (at most the last 1000). */
  sent(): SentOneTimePassword[] {
    return this.#outbox.map((sent) => ({ ...sent }));
  }

  #key(channel: string, walletAddress: string): string {
    return `${channel} ${walletAddress.toLowerCase()}`;
  }
}
