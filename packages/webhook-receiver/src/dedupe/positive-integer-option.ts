import { WebhookReceiverError } from '../errors.js';

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
