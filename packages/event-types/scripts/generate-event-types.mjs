import { generatedHeader } from '@capi/codegen-kit';
import { readWebhookEventCatalog } from './read-webhook-events.mjs';
import { renderEventCatalog } from './render-event-catalog.mjs';
import { renderModels } from './render-models.mjs';
import { EventTypesGenerationError } from './generation-error.mjs';

/** Where the bundled spec comes from, for the header of the generated files. */
export const SPEC_SOURCE = { specPath: 'specs/asyncapi.yaml', bundlePath: 'specs/dist/asyncapi.json' };

/**
 * Generates the contents of `src/generated/` from a bundled AsyncAPI 3 document:
 * `models.ts` (modelina: one declaration per schema) and `events.ts` (the event union,
 * map, type list and header constants).
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {Promise<Record<'models.ts' | 'events.ts', string>>}
 * @example
 * const files = await generateEventTypes(JSON.parse(readFileSync('specs/dist/asyncapi.json', 'utf8')))
 */
export async function generateEventTypes(doc) {
  const { events, headers } = await readWebhookEventCatalog(doc);
  const { names, code } = await renderModels(doc);
  for (const event of events) {
    if (!names.includes(event.interfaceName)) {
      throw new EventTypesGenerationError('EVENT_WITHOUT_TITLE',
        `Modelina produced no interface named ${event.interfaceName} for event "${event.eventType}"; check that the payload schema's title is ${event.interfaceName}.`);
    }
  }
  const header = generatedHeader({ ...SPEC_SOURCE, specVersion: doc.info?.version, packageName: '@capi/event-types' });
  return {
    'models.ts': `${header}\n${code}`,
    'events.ts': `${header}\n${renderEventCatalog(events, headers)}`,
  };
}
