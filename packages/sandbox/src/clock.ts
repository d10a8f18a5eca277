import { SandboxConfigError } from './errors.js';

/**
 * The sandbox's notion of "now" for nonces and tokens. It can be moved forward
 * (`advance`) so that tests and partners can see a token expire without waiting an hour.
 * Webhook timestamps deliberately use the real time: receivers check them against their
 * own clock.
 */
export interface SandboxClock {
  /** Milliseconds since the epoch, including every `advance`. */
  now(): number;
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void;
}

export function createSandboxClock(baseNow: () => number = Date.now): SandboxClock {
  let offsetMs = 0;
  return {
    now: () => baseNow() + offsetMs,
    advance(ms) {
      // One NaN or string here would break every later nonce and token for the sandbox's life.
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new SandboxConfigError('invalid_option', `advanceClock(ms) takes a number of milliseconds >= 0 (the clock only moves forward); got ${JSON.stringify(ms) ?? String(ms)}.`);
      }
      offsetMs += ms;
    },
  };
}
