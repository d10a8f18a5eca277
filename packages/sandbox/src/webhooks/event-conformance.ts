import { validateWebhookEvent } from '@capi/webhook-validator';

/**
 * Checks an event against the AsyncAPI schemas (through @capi/webhook-validator) before the
 * sandbox sends it, so the sandbox never teaches a receiver a shape the service cannot send.
 * Returns readable problems, empty when the event conforms.
 */
export function eventProblems(event: { eventType: string; data: unknown }): string[] {
  const result = validateWebhookEvent(event);
  if (result.ok) return [];
  if ('unknownEventType' in result && result.unknownEventType) {
    return [`eventType ${JSON.stringify(event.eventType)} is not an event type of the spec`];
  }
  return result.errors.map((error: { path: string; message: string }) => `${error.path || '/'} ${error.message}`);
}
