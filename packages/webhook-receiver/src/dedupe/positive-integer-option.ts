import { WebhookReceiverError } from '../errors.js';
import { REPLY_WINDOW_MS } from './subject-record.js';

/** Reads an optional positive-integer option, throwing `invalid_options` with its name when out of range. */
export function positiveIntegerOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WebhookReceiverError(
      'invalid_options',
      `${name} must be a positive integer, got ${typeof value === 'number' ? value : typeof value}.`,
    );
  }
  return value;
}

/** The least time, in ms, the service waits before it retries a failed delivery: 1 minute (reference 6.3). */
export const DEFAULT_MIN_RETRY_DELAY_MS = 60_000;

/**
 * Reads the stores' `minRetryDelayMs`: a whole number of ms, 0 included (every copy of a failed
 * body may be its retry), throwing `invalid_options` otherwise.
 */
export function minRetryDelayOption(value: unknown): number {
  if (value === undefined) return DEFAULT_MIN_RETRY_DELAY_MS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new WebhookReceiverError('invalid_options',
      `minRetryDelayMs must be a whole number of ms, 0 or more (the service waits 60,000 before a retry; against a sandbox with timeScale N, 60,000 / N), got ${typeof value === 'number' ? value : typeof value}.`);
  }
  return value;
}

/**
 * Reads the stores' `replyWindowMs` (`name`: how the message calls it): how long the service
 * waits for an answer, a whole number of ms above 0, throwing `invalid_options` otherwise.
 * Default {@link REPLY_WINDOW_MS}.
 */
export function replyWindowOption(value: unknown, name = 'replyWindowMs'): number {
  if (value === undefined) return REPLY_WINDOW_MS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WebhookReceiverError('invalid_options',
      `${name} must be a whole number of ms above 0 (the service waits 30,000 for an answer; against a sandbox with --delivery-timeout or deliveryTimeoutMs T, T), got ${typeof value === 'number' ? value : typeof value}.`);
  }
  return value;
}
