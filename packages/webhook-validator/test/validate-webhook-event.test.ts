import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { KycStatus, User, WebhookEvent } from '@capi/event-types';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { validateWebhookEvent, WebhookValidatorOptionError, type WebhookEventValidationResult } from '../src/index.js';
import { defaultSchemasDir } from '../scripts/generate.mjs';
import userCreatedEvent from './fixtures/user-created-event.json' with { type: 'json' };
import { mutationsOf, UNKNOWN_PROPERTY } from './support/mutation-corpus.js';
import { eventSchemas, eventTypeOfSchema, maximalExample, specExamples } from './support/spec-schemas.js';

const realisticEvent = () => structuredClone(userCreatedEvent) as { eventType: string; data: Record<string, unknown> };

function expectFailure(result: WebhookEventValidationResult) {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('unreachable');
  expect(result.errors.length).toBeGreaterThan(0);
  return result;
}

describe('accepts a valid example of each event', () => {
  it('knows every event type of the spec', () => {
    expect(eventSchemas.map(eventTypeOfSchema).sort()).toEqual([
      'card.transaction.created',
      'kyc.phone-validation.changed',
      'kyc.source-of-funds.changed',
      'kyc.status.changed',
      'user.created',
    ]);
  });

  it.each(eventSchemas.map((schema) => [eventTypeOfSchema(schema), schema] as const))('%s: the spec examples and a maximal example, tolerant and strict', (eventType, schema) => {
    const examples = [...specExamples(schema), maximalExample(schema)];
    expect(examples.length).toBeGreaterThan(1);
    for (const example of examples) {
      for (const strict of [false, true]) {
        const result = validateWebhookEvent(example, { strict });
        expect(result, JSON.stringify(result)).toEqual({ ok: true, event: example });
        expect(result.ok && result.event.eventType).toBe(eventType);
      }
    }
  });

  it('every message example of the AsyncAPI spec, one message per event type', () => {
    const asyncapi = JSON.parse(readFileSync(join(defaultSchemasDir, '..', 'asyncapi.json'), 'utf8')) as {
      components: { messages: Record<string, { 'x-event-type': string; examples: { payload: unknown }[] }> };
    };
    const messages = Object.values(asyncapi.components.messages);
    expect(messages.map((message) => message['x-event-type']).sort()).toEqual(eventSchemas.map(eventTypeOfSchema).sort());
    for (const message of messages) {
      expect(message.examples.length).toBeGreaterThan(0);
      for (const { payload } of message.examples) {
        expect(validateWebhookEvent(payload, { strict: true })).toEqual({ ok: true, event: payload });
        expect((payload as { eventType: string }).eventType).toBe(message['x-event-type']);
      }
    }
  });

  it('a realistic user.created event (full user, two cards, banking details), returned as is', () => {
    const event = realisticEvent();
    const result = validateWebhookEvent(event, { strict: true });
    expect(result.ok).toBe(true);
    expect(result.ok && result.event).toBe(event);
  });
});

describe('rejects every schema mutation with a path at the mutated property', () => {
  for (const schema of eventSchemas) {
    const eventType = eventTypeOfSchema(schema);
    const mutations = mutationsOf(schema).filter((mutation) => !mutation.onlyStrict);
    const byPointer = new Map<string, typeof mutations>();
    for (const mutation of mutations) byPointer.set(mutation.pointer, [...(byPointer.get(mutation.pointer) ?? []), mutation]);

    it(`${eventType}: the corpus covers the kinds of mutation the schema allows`, () => {
      const changes = new Set(mutations.map((mutation) => mutation.change.split(' ')[0]));
      expect(changes).toContain('missing');
      expect(changes).toContain('type');
      expect(changes).toContain('null');
      if (eventType !== 'card.transaction.created') {
        expect(changes).toContain('outside');
        expect(byPointer.has('/data/kycStatus')).toBe(true);
        expect(byPointer.has('/data/cards/0/lastFourDigits')).toBe(true);
        expect(byPointer.has('/data/bankingDetails/providerIban')).toBe(true);
      }
    });

    it.each([...byPointer.entries()])(`${eventType}: %s`, (pointer, cases) => {
      for (const mutation of cases) {
        for (const strict of [false, true]) {
          const failure = expectFailure(validateWebhookEvent(mutation.body, { strict }));
          const context = `${mutation.change} (strict: ${strict}): ${JSON.stringify(failure.errors)}`;
          expect(failure.unknownEventType, context).toBe(mutation.unknownEventType);
          expect(failure.errors.map((error) => error.path), context).toContain(pointer);
          for (const error of failure.errors) {
            expect(error.path === pointer || error.path.startsWith(`${pointer}/`), context).toBe(true);
          }
        }
      }
    });
  }

  it('rejects a kycStatus outside reference 2.5 with the allowed values in the message', () => {
    const event = realisticEvent();
    event.data.kycStatus = 'verified';
    const failure = expectFailure(validateWebhookEvent(event));
    expect(failure.errors).toEqual([{
      path: '/data/kycStatus',
      keyword: 'enum',
      message: '/data/kycStatus must be one of: notStarted, documentsRequested, pending, processing, approved, resubmissionRequested, rejected, requiresAction',
    }]);
  });
});

describe('selects the schema by eventType, so the errors concern that event only', () => {
  it('reports the user fields missing from a kyc.status.changed event, not a oneOf over all events', () => {
    const failure = expectFailure(validateWebhookEvent({ eventType: 'kyc.status.changed', data: { amount: 100 } }));
    expect(failure.eventType).toBe('kyc.status.changed');
    expect(failure.errors.every((error) => error.keyword === 'required' && error.path.startsWith('/data/'))).toBe(true);
    expect(failure.errors.map((error) => error.path)).toContain('/data/kycStatus');
  });

  it('accepts any object as the data of card.transaction.created, in both modes', () => {
    const event = { eventType: 'card.transaction.created', data: { amount: 1250, currency: 'USD', merchant: { name: 'Cafe' } } };
    expect(validateWebhookEvent(event).ok).toBe(true);
    expect(validateWebhookEvent(event, { strict: true }).ok).toBe(true);
    const failure = expectFailure(validateWebhookEvent({ eventType: 'card.transaction.created', data: [] }));
    expect(failure.errors).toEqual([expect.objectContaining({ path: '/data', keyword: 'type' })]);
  });

  it('merges the branches of a nullable object into one error', () => {
    const event = realisticEvent();
    event.data.bankingDetails = 'none';
    expect(expectFailure(validateWebhookEvent(event)).errors).toEqual([{
      path: '/data/bankingDetails',
      keyword: 'type',
      message: '/data/bankingDetails must be object or null (got string)',
    }]);
  });
});

describe('reports the errors inside a nullable object, not its alternatives', () => {
  it('bankingDetails present but incomplete', () => {
    const event = realisticEvent();
    event.data.bankingDetails = { providerIban: 42, providerBic: null, address: null };
    expect(expectFailure(validateWebhookEvent(event)).errors).toEqual([
      { path: '/data/bankingDetails/providerIbanStatus', keyword: 'required', message: '/data/bankingDetails/providerIbanStatus is missing: the schema of this event requires it (fields without a value are sent as null, not left out)' },
      { path: '/data/bankingDetails/providerIban', keyword: 'type', message: '/data/bankingDetails/providerIban must be string or null (got integer)' },
    ]);
  });
});

describe('reports an unknown eventType with unknownEventType: true', () => {
  it.each(['card.transaction.refunded', 'USER.CREATED', '', 'constructor', '__proto__', 'toString', 'hasOwnProperty'])('%j', (eventType) => {
    const failure = expectFailure(validateWebhookEvent({ eventType, data: {} }));
    expect(failure).toMatchObject({ unknownEventType: true, eventType });
    expect(failure.errors).toEqual([expect.objectContaining({ path: '/eventType', keyword: 'unknownEventType' })]);
    expect(failure.errors[0]?.message).toContain('acknowledge and ignore it');
  });
});

describe('rejects a value that is not an event object', () => {
  it.each([null, undefined, 42, 'user.created', true, [], [{ eventType: 'user.created' }]])('%j', (value) => {
    const failure = expectFailure(validateWebhookEvent(value));
    expect(failure).toMatchObject({ unknownEventType: false });
    expect(failure.errors).toEqual([expect.objectContaining({ path: '', keyword: 'type' })]);
    expect(failure.errors[0]?.message).toMatch(/must be a JSON object/);
  });

  it('without an eventType', () => {
    expect(expectFailure(validateWebhookEvent({ data: {} })).errors).toEqual([expect.objectContaining({ path: '/eventType', keyword: 'required' })]);
  });

  it.each([null, 7, ['user.created'], { type: 'user.created' }])('with a non-string eventType %j', (eventType) => {
    expect(expectFailure(validateWebhookEvent({ eventType, data: {} })).errors).toEqual([expect.objectContaining({ path: '/eventType', keyword: 'type' })]);
  });
});

describe('accepts unknown properties by default (tolerant reader)', () => {
  it('inside data, inside nested objects and beside eventType', () => {
    const event = realisticEvent();
    Object.assign(event.data, { loyaltyTier: 'gold', referral: { code: 'X' } });
    Object.assign((event.data.cards as object[])[0]!, { network: 'visa' });
    Object.assign(event, { deliveryAttempt: 2 });
    expect(validateWebhookEvent(event).ok).toBe(true);
  });
});

describe('rejects unknown properties with { strict: true }', () => {
  for (const schema of eventSchemas) {
    const mutations = mutationsOf(schema).filter((mutation) => mutation.onlyStrict);
    it.each(mutations.map((mutation) => [mutation.pointer, mutation] as const))(`${eventTypeOfSchema(schema)}: %s`, (pointer, mutation) => {
      expect(validateWebhookEvent(mutation.body).ok).toBe(true);
      const failure = expectFailure(validateWebhookEvent(mutation.body, { strict: true }));
      expect(failure.errors).toEqual([expect.objectContaining({ path: pointer, keyword: expect.stringMatching(/^(additional|unevaluated)Properties$/) })]);
      expect(failure.errors[0]?.message).toContain('without `strict`');
    });
  }
});

describe('describes each error with a JSON Pointer path, a message and the failed keyword', () => {
  it('escapes ~ and / in the path (RFC 6901)', () => {
    const event = realisticEvent();
    Object.assign(event.data, { 'a/b~c': 1 });
    const failure = expectFailure(validateWebhookEvent(event, { strict: true }));
    expect(failure.errors.map((error) => error.path)).toEqual(['/data/a~1b~0c']);
  });

  it('never copies the offending value into the message (it may be personal data)', () => {
    const event = realisticEvent();
    event.data.email = { address: 'secret@example.com' };
    event.data.kycStatus = 'secret-status';
    const failure = expectFailure(validateWebhookEvent(event));
    expect(failure.errors.length).toBe(2);
    for (const error of failure.errors) {
      expect(Object.keys(error).sort()).toEqual(['keyword', 'message', 'path']);
      expect(error.message).not.toMatch(/secret/);
      expect(error.message.startsWith(error.path)).toBe(true);
    }
  });

  it('names the type it got', () => {
    const event = realisticEvent();
    event.data.isPhoneValidated = 'yes';
    expect(expectFailure(validateWebhookEvent(event)).errors[0]?.message).toBe('/data/isPhoneValidated must be boolean (got string)');
  });
});

describe('neither crashes nor pollutes on __proto__ and constructor payloads', () => {
  it.each([
    '{"eventType":"user.created","data":{"__proto__":{"polluted":true}}}',
    '{"__proto__":{"polluted":true},"eventType":"card.transaction.created","data":{"__proto__":{"polluted":true}}}',
    '{"eventType":"card.transaction.created","data":{"constructor":{"prototype":{"polluted":true}}}}',
    '{"eventType":"__proto__","data":{}}',
    '{"eventType":"constructor","data":{"constructor":{"prototype":{"polluted":true}}}}',
  ])('%s', (json) => {
    const value: unknown = JSON.parse(json);
    for (const strict of [false, true]) {
      const result = validateWebhookEvent(value, { strict });
      expect(typeof result.ok).toBe('boolean');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('never throws on arbitrary values', () => {
  it('fast-check: anything, and events with anything inside', () => {
    const anything = fc.anything({ withNullPrototype: true, withObjectString: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true });
    const eventTypes = fc.constantFrom(...eventSchemas.map(eventTypeOfSchema), 'unknown.kind');
    fc.assert(fc.property(anything, fc.boolean(), (value, strict) => {
      const result = validateWebhookEvent(value, { strict });
      return result.ok || result.errors.length > 0;
    }), { numRuns: 500 });
    fc.assert(fc.property(eventTypes, anything, fc.boolean(), (eventType, data, strict) => {
      const result = validateWebhookEvent({ eventType, data }, { strict });
      return result.ok || result.errors.length > 0;
    }), { numRuns: 500 });
  });
});

describe('rejects an invalid option with WebhookValidatorOptionError', () => {
  it.each(['yes', 1, null])('strict: %j', (strict) => {
    const call = () => validateWebhookEvent(realisticEvent(), { strict } as never);
    expect(call).toThrow(WebhookValidatorOptionError);
    expect(call).toThrow(/options\.strict must be a boolean/);
    try {
      call();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_option', option: 'strict' });
    }
  });

  it.each(['stict', 'maxBytes', 'maxDepth'])('a name validateWebhookEvent does not take: %s (parseWebhookEvent takes maxBytes and maxDepth; a typo would keep the default)', (option) => {
    const call = () => validateWebhookEvent(realisticEvent(), { [option]: 1 } as never);
    expect(call).toThrow(WebhookValidatorOptionError);
    expect(call).toThrow(`validateWebhookEvent has no option "${option}". Its options: strict.`);
    try {
      call();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_option', option });
    }
  });

  it.each([[null], ['strict'], [true], [[]]])('options itself: %j', (options) => {
    const call = () => validateWebhookEvent(realisticEvent(), options as never);
    expect(call).toThrow(WebhookValidatorOptionError);
    expect(call).toThrow(/options must be an object such as \{ strict: true \} or left out/);
    try {
      call();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_option', option: 'options' });
    }
  });
});

describe('types the event by its eventType (WebhookEvent from @capi/event-types)', () => {
  it('narrows the result, then the event', () => {
    const result = validateWebhookEvent(realisticEvent());
    expectTypeOf(result).toEqualTypeOf<WebhookEventValidationResult>();
    if (!result.ok) throw new Error('the realistic event must be valid');
    expectTypeOf(result.event).toEqualTypeOf<WebhookEvent>();
    if (result.event.eventType === 'card.transaction.created') throw new Error('a user.created event was validated');
    expectTypeOf(result.event.data).toEqualTypeOf<User>();
    expectTypeOf(result.event.data.kycStatus).toEqualTypeOf<KycStatus>();
    expect(result.event.data.kycStatus).toBe('approved');
  });
});
