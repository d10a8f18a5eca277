import { validateWebhookEvent } from '@capi/webhook-validator';
import { schemas, webhookEventSchemaIds } from '@capi/webhook-validator/schemas';
import { cardDigitsProblems, unknownFieldsOf, type UnknownFields } from '../users/nested-fields.js';

/**
 * Checks an event against the AsyncAPI schemas (through @capi/webhook-validator) before the
 * sandbox sends it, so the sandbox never teaches a receiver a shape the service cannot send.
 * The User an event carries also gets the seeded users' check that the schema leaves open:
 * each card's `lastFourDigits` is four digits. Returns readable problems, empty when the
 * event conforms.
 */
export function eventProblems(event: { eventType: string; data: unknown }): string[] {
  const result = validateWebhookEvent(event);
  if (!result.ok && 'unknownEventType' in result && result.unknownEventType) {
    return [`eventType ${JSON.stringify(event.eventType)} is not an event type of the spec`];
  }
  // The validator's messages name their path already (`/data/kycStatus must be one of: …`).
  const problems = result.ok ? [] : result.errors.map((error: { path: string; message: string }) => (error.path !== '' && error.message.startsWith(error.path) ? error.message : `${error.path || '/'} ${error.message}`));
  // The user events' data is a User; card.transaction.created's is not shown.
  const user = event.eventType !== 'card.transaction.created' && typeof event.data === 'object' && event.data !== null ? (event.data as { cards?: unknown }) : undefined;
  if (user !== undefined) problems.push(...cardDigitsProblems(user.cards, 'data.cards'));
  return problems;
}

const schemaById = new Map<string, unknown>(Object.values(schemas).map((schema) => [schema.$id, schema]));

/**
 * The objects in a known kind's `data` with fields its schema does not define (`data.cards[0]`
 * with `pan`), found as for seeded users. The event schemas are open, so `eventProblems` lets
 * these through; but the service sends only the fields of its schema, and a receiver tested
 * with others is tested against a shape that never comes. `card.transaction.created`'s data is
 * not shown in the reference (an open object): none of its fields is unknown.
 */
export function unknownEventFields(event: { eventType: string; data: unknown }): UnknownFields[] {
  const schemaId = (webhookEventSchemaIds as Record<string, string | undefined>)[event.eventType];
  const eventSchema = schemaId === undefined ? undefined : (schemaById.get(schemaId) as { properties?: { data?: unknown } } | undefined);
  if (eventSchema?.properties?.data === undefined) return [];
  return unknownFieldsOf(event.data, eventSchema.properties.data, 'data', (ref) => schemaById.get(ref));
}

/** How many unknown fields a refusal names (a body of thousands would make a message as long). */
const MAX_NAMED_FIELDS = 10;

/** `data.cards[0].pan`; a field that is no identifier as `data["a b"]`, shortened. */
function fieldPath(path: string, field: string): string {
  return /^[A-Za-z_$][\w$]{0,59}$/.test(field) ? `${path}.${field}` : `${path}[${JSON.stringify(field.slice(0, 60))}]`;
}

/**
 * Why an event with unknown fields is refused: each field by its JSON path (`data.cards[0].pan`)
 * with the fields its record has, and what to do instead. `spelling` says how the caller's
 * interface writes the opt-ins: `allowUnknownFields` (`optIn`) and `unknownEventType` (`unknownKind`).
 */
export function unknownEventFieldsMessage(eventType: string, found: readonly UnknownFields[], spelling: { optIn: string; unknownKind: string }): string {
  const count = found.reduce((sum, entry) => sum + entry.fields.length, 0);
  const them = count > 1 ? 'them' : 'it';
  let named = 0;
  const listed: string[] = [];
  for (const { path, fields, title, known } of found) {
    const shown = fields.slice(0, MAX_NAMED_FIELDS - named);
    if (shown.length === 0) break;
    named += shown.length;
    listed.push(`${shown.map((field) => fieldPath(path, field)).join(', ')} (${title === undefined ? 'its' : `the ${title}`} fields are ${known.join(', ')})`);
  }
  const more = count > named ? ` and ${count - named} more` : '';
  return (
    `The ${eventType} event's data has ${count > 1 ? 'fields' : 'a field'} its schema does not define: ${listed.join('; ')}${more}. ` +
    `The service does not send ${them}, so a receiver tested with ${them} is tested against a shape that never comes: remove ${them}. ` +
    `To test on purpose how a receiver tolerates fields of a newer schema, add ${spelling.optIn}; to send a kind the SDK does not know, ${spelling.unknownKind}.`
  );
}
