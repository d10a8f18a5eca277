// The generated validators must decide exactly as ajv compiling the spec's schemas at run
// time: same verdict, same raw errors. The run-time side uses the schemas as published (with
// descriptions, examples, x-* annotations), so stripping annotations at generation time is
// checked too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strictValidators, tolerantValidators } from '../src/generated/validators.js';
import { validateWebhookEvent } from '../src/index.js';
import userCreatedEvent from './fixtures/user-created-event.json' with { type: 'json' };
import { mutationsOf } from './support/mutation-corpus.js';
import { eventSchemas, eventTypeOfSchema, maximalExample, runtimeValidators, specExamples, type VariantName } from './support/spec-schemas.js';

const generated = { tolerant: tolerantValidators, strict: strictValidators };
const corpus = eventSchemas.flatMap((schema) => [
  ...specExamples(schema).map((body) => ({ eventType: eventTypeOfSchema(schema), body })),
  { eventType: eventTypeOfSchema(schema), body: maximalExample(schema) },
  ...mutationsOf(schema),
]);

function rawVerdicts(variant: VariantName, eventType: string, body: unknown) {
  const runtime = runtimeValidators(variant).get(eventType)!;
  const compiled = generated[variant].get(eventType)!;
  const runtimeOk = runtime(body);
  const compiledOk = compiled(body);
  const strip = (errors: typeof compiled.errors) => (errors ?? []).map(({ instancePath, keyword, params }) => ({ instancePath, keyword, params }));
  return { runtimeOk, compiledOk, runtimeErrors: strip(runtime.errors as never), compiledErrors: strip(compiled.errors) };
}

describe('agrees with ajv compiling the same schemas at run time', () => {
  for (const variant of ['tolerant', 'strict'] as const) {
    it(`${variant}: on every example and mutation of the corpus (${corpus.length} bodies)`, () => {
      expect(corpus.length).toBeGreaterThan(500);
      for (const { eventType, body } of corpus) {
        const verdicts = rawVerdicts(variant, eventType, body);
        expect(verdicts.compiledOk, JSON.stringify(body)).toBe(verdicts.runtimeOk);
        expect(verdicts.compiledErrors).toEqual(verdicts.runtimeErrors);
        if (typeof (body as { eventType?: unknown }).eventType === 'string' && generated[variant].has((body as { eventType: string }).eventType)) {
          expect(validateWebhookEvent(body, { strict: variant === 'strict' }).ok).toBe(verdicts.runtimeOk);
        }
      }
    });

    it(`${variant}: on random changes to a realistic event (fast-check)`, () => {
      const keys = Object.keys(userCreatedEvent.data);
      const change = fc.record({ key: fc.constantFrom(...keys, 'newField'), value: fc.jsonValue({ maxDepth: 3 }), card: fc.boolean() });
      fc.assert(fc.property(change, ({ key, value, card }) => {
        const body = structuredClone(userCreatedEvent) as { data: Record<string, unknown> & { cards: Record<string, unknown>[] } };
        if (card) body.data.cards[0]![key] = value;
        else body.data[key] = value;
        const verdicts = rawVerdicts(variant, 'user.created', body);
        expect(verdicts.compiledErrors).toEqual(verdicts.runtimeErrors);
        return verdicts.compiledOk === verdicts.runtimeOk;
      }), { numRuns: 400 });
    });
  }
});
