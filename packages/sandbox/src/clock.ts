import { SandboxConfigError } from './errors.js';

/**
 * The sandbox's notion of "now" for nonces, tokens, one-time passwords and a migration's
 * `waiting_kyc_setup`. It can be moved forward (`advance`) so that tests and partners can see
 * a token expire without waiting an hour.
 * Webhook timestamps deliberately use the real time: receivers check them against their
 * own clock.
 */
export interface SandboxClock {
  /** Milliseconds since the epoch, including every `advance`. */
  now(): number;
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void;
  /** How far every `advance` so far has moved the clock ahead of its time source, in milliseconds. */
  aheadMs(): number;
}

/** The furthest the clock can be moved: the end of year 9999, the last date a timestamp can show. */
export const LATEST_CLOCK_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** `afterAdvance` runs after each move, for what falls due on the sandbox clock (a migration's carry-over). */
export function createSandboxClock(baseNow: () => number = Date.now, afterAdvance: () => void = () => {}): SandboxClock {
  let offsetMs = 0;
  return {
    now: () => baseNow() + offsetMs,
    advance(ms) {
      // One NaN or string here would break every later nonce and token for the sandbox's life.
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new SandboxConfigError('invalid_option', `advanceClock(ms) takes a number of milliseconds >= 0 (the clock only moves forward); got ${JSON.stringify(ms) ?? String(ms)}.`);
      }
      // Beyond the last instant a Date can show, every timestamp, token and answer of the clock breaks.
      if (baseNow() + offsetMs + ms > LATEST_CLOCK_MS) {
        throw new SandboxConfigError('invalid_option', `advanceClock(${ms}) would move the clock past ${new Date(LATEST_CLOCK_MS).toISOString()}; advance it by less.`);
      }
      offsetMs += ms;
      afterAdvance();
    },
    aheadMs: () => offsetMs,
  };
}
