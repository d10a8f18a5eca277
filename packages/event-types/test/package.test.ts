import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describePublishedPackage } from '@capi/codegen-kit/testing';
import { expect } from 'vitest';

describePublishedPackage({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/event-types',
  entry: {
    gives: 'give the runtime constants',
    expect: (entry) => {
      expect(entry.WEBHOOK_TIMESTAMP_HEADER).toBe('X-Webhook-Timestamp');
      expect(entry.WEBHOOK_SIGNATURE_HEADER).toBe('X-Webhook-Signature');
      expect(entry.WEBHOOK_EVENT_TYPES).toHaveLength(5);
      expect(entry.isWebhookEventType('user.created')).toBe(true);
    },
  },
});
