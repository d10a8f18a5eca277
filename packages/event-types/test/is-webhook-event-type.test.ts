import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, isWebhookEventType } from '../src/index.js';

describe('the event types of reference 6.1 are known; others go to a fallback', () => {
  it('lists the five event types in WEBHOOK_EVENT_TYPES', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed', 'card.transaction.created',
    ]);
  });

  it('freezes WEBHOOK_EVENT_TYPES, so no importer can change the list the others see', () => {
    expect(Object.isFrozen(WEBHOOK_EVENT_TYPES)).toBe(true);
    expect(() => (WEBHOOK_EVENT_TYPES as unknown as string[]).push('user.deleted')).toThrow(TypeError);
    expect(WEBHOOK_EVENT_TYPES).toHaveLength(5);
  });

  it.each(WEBHOOK_EVENT_TYPES.map((type) => [type]))('recognises %s', (type) => {
    expect(isWebhookEventType(type)).toBe(true);
  });

  it.each([['user.deleted'], ['USER.CREATED'], [''], [' user.created'], ['__proto__'], ['constructor']])('does not recognise %j', (type) => {
    expect(isWebhookEventType(type)).toBe(false);
  });

  it.each([[undefined], [null], [42], [{}], [['user.created']]])('does not recognise the non-string %j', (value) => {
    expect(isWebhookEventType(value)).toBe(false);
  });
});

describe('webhook header names (6.2)', () => {
  it('are X-Webhook-Timestamp and X-Webhook-Signature', () => {
    expect(WEBHOOK_TIMESTAMP_HEADER).toBe('X-Webhook-Timestamp');
    expect(WEBHOOK_SIGNATURE_HEADER).toBe('X-Webhook-Signature');
  });
});
