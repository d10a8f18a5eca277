import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, parseWebhookEvent, WebhookValidatorOptionError, type WebhookEventValidationResult } from '../src/index.js';
import userCreatedEvent from './fixtures/user-created-event.json' with { type: 'json' };

const realisticBody = JSON.stringify(userCreatedEvent);
const bytes = (text: string) => new TextEncoder().encode(text);

function expectError(result: WebhookEventValidationResult, keyword: string, path = '') {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('unreachable');
  expect(result.unknownEventType).toBe(false);
  expect(result.errors).toEqual([expect.objectContaining({ path, keyword })]);
  return result.errors[0]!.message;
}

describe('parses a raw body (string or Uint8Array) and validates it', () => {
  it('gives the same event for the text and the bytes of a body', () => {
    const fromText = parseWebhookEvent(realisticBody);
    const fromBytes = parseWebhookEvent(bytes(realisticBody));
    expect(fromText).toEqual({ ok: true, event: userCreatedEvent });
    expect(fromBytes).toEqual(fromText);
    expect(parseWebhookEvent(Buffer.from(realisticBody), { strict: true })).toEqual(fromText);
  });

  it('ignores a UTF-8 byte order mark', () => {
    expect(parseWebhookEvent(`\uFEFF${realisticBody}`).ok).toBe(true);
    expect(parseWebhookEvent(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes(realisticBody)])).ok).toBe(true);
  });

  it('decodes bytes that sit inside a larger buffer (a view with an offset), ASCII or not', () => {
    for (const text of [realisticBody, JSON.stringify({ ...userCreatedEvent, data: { ...userCreatedEvent.data, firstName: 'Zoë 🚀' } })]) {
      const framed = bytes(`garbage before${text}and after`);
      const view = framed.subarray(bytes('garbage before').length, framed.length - bytes('and after').length);
      expect(parseWebhookEvent(view)).toEqual(parseWebhookEvent(text));
      expect(parseWebhookEvent(Buffer.from(view.buffer, view.byteOffset, view.byteLength))).toEqual(parseWebhookEvent(text));
    }
  });

  it('gives the same result for the bytes as for the text, whatever the characters', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.boolean(), (note, asKey) => {
      const data = asKey ? { [note]: 1 } : { note };
      const text = JSON.stringify({ eventType: 'card.transaction.created', data });
      expect(parseWebhookEvent(bytes(text))).toEqual(parseWebhookEvent(text));
    }));
  });

  it('passes strict on to the validation', () => {
    const body = JSON.stringify({ ...userCreatedEvent, data: { ...userCreatedEvent.data, nickname: 'ada' } });
    expect(parseWebhookEvent(body).ok).toBe(true);
    expectError(parseWebhookEvent(body, { strict: true }), 'additionalProperties', '/data/nickname');
  });

  it('reports an unknown event type like validateWebhookEvent', () => {
    expect(parseWebhookEvent('{"eventType":"account.closed","data":{}}')).toMatchObject({ ok: false, unknownEventType: true, eventType: 'account.closed' });
  });
});

describe('reports malformed JSON as an error result', () => {
  it.each(['', ' ', '{', '{"eventType":"user.created",}', "{'eventType':'user.created'}", 'undefined', 'NaN', '{"a":1}{"b":2}', '\u0000'])('%j', (body) => {
    expect(expectError(parseWebhookEvent(body), 'json')).toMatch(/^the body is not valid JSON \(.+\): pass the raw body exactly as received$/);
  });

  it('reports valid JSON that is not an object as a type error', () => {
    for (const body of ['null', '42', '"user.created"', '[]', 'true']) expectError(parseWebhookEvent(body), 'type');
  });
});

describe('rejects a body larger than maxBytes without parsing it', () => {
  it('a 10 MB body, as text and as bytes', () => {
    const huge = `{"eventType":"card.transaction.created","data":{"padding":"${'x'.repeat(10 * 1024 * 1024)}"}}`;
    expect(expectError(parseWebhookEvent(huge), 'maxBytes')).toContain(`larger than ${DEFAULT_MAX_BYTES} bytes`);
    expectError(parseWebhookEvent(bytes(huge)), 'maxBytes');
  });

  it('counts UTF-8 bytes, not characters, and accepts a body of exactly maxBytes', () => {
    const body = '{"eventType":"card.transaction.created","data":{"note":"€€"}}';
    const size = bytes(body).byteLength;
    expect(size).toBe(body.length + 4);
    expect(parseWebhookEvent(body, { maxBytes: size }).ok).toBe(true);
    expect(parseWebhookEvent(bytes(body), { maxBytes: size }).ok).toBe(true);
    expectError(parseWebhookEvent(body, { maxBytes: size - 1 }), 'maxBytes');
    expectError(parseWebhookEvent(bytes(body), { maxBytes: size - 1 }), 'maxBytes');
    const astral = '{"eventType":"card.transaction.created","data":{"note":"😀"}}';
    expectError(parseWebhookEvent(astral, { maxBytes: astral.length + 1 }), 'maxBytes');
    expect(parseWebhookEvent(astral, { maxBytes: astral.length + 2 }).ok).toBe(true);
  });
});

describe('rejects nesting deeper than maxDepth before validating it', () => {
  it('10,000-deep arrays and objects inside data', () => {
    const arrays = `{"eventType":"card.transaction.created","data":{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    const objects = `{"eventType":"card.transaction.created","data":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
    expect(expectError(parseWebhookEvent(arrays), 'maxDepth')).toContain(`deeper than ${DEFAULT_MAX_DEPTH} levels`);
    expectError(parseWebhookEvent(objects), 'maxDepth');
    expectError(parseWebhookEvent('['.repeat(10_000)), 'maxDepth');
  });

  it('counts the levels exactly, and not the brackets inside strings', () => {
    const nested = (depth: number) => `{"eventType":"card.transaction.created","data":${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}}`;
    expect(parseWebhookEvent(nested(DEFAULT_MAX_DEPTH - 1)).ok).toBe(true);
    expectError(parseWebhookEvent(nested(DEFAULT_MAX_DEPTH)), 'maxDepth');
    expect(parseWebhookEvent(nested(10), { maxDepth: 11 }).ok).toBe(true);
    expectError(parseWebhookEvent(nested(10), { maxDepth: 10 }), 'maxDepth');
    const brackets = JSON.stringify({ eventType: 'card.transaction.created', data: { note: '[[[{{{\\"[[[' } });
    expect(parseWebhookEvent(brackets, { maxDepth: 2 }).ok).toBe(true);
  });

  it('tells escaped quotes from closing quotes when skipping strings', () => {
    const body = JSON.stringify({ eventType: 'card.transaction.created', data: { path: 'C:\\', quoted: 'say "[[[" \\"{{', list: [[[]]] } });
    expect(parseWebhookEvent(body, { maxDepth: 5 }).ok).toBe(true);
    expectError(parseWebhookEvent(body, { maxDepth: 4 }), 'maxDepth');
  });

  it('fast-check: a body passes at its own depth and fails one level below, whatever its strings hold', () => {
    const depthOf = (value: unknown): number =>
      typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
    const bracketyString = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ':', ',') });
    const data = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, bracketyString, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(bracketyString, tie('node'), { maxKeys: 3 })),
    })).node;
    fc.assert(fc.property(fc.dictionary(bracketyString, data, { maxKeys: 4 }), (payload) => {
      const body = JSON.stringify({ eventType: 'card.transaction.created', data: payload });
      const depth = 1 + depthOf(payload);
      const atDepth = parseWebhookEvent(body, { maxDepth: depth });
      const belowDepth = parseWebhookEvent(body, { maxDepth: depth - 1 });
      return atDepth.ok && !belowDepth.ok && belowDepth.errors[0]!.keyword === 'maxDepth';
    }), { numRuns: 400 });
  });

  it('reports a malformed body that nests too deep as too deep, and measures a 1 MB body of thousands of cards as shallow', () => {
    expectError(parseWebhookEvent(`{"eventType":"card.transaction.created","data":${'['.repeat(100)}1,}`), 'maxDepth');
    const cards = Array.from({ length: 6_000 }, (_, index) => ({ id: `card-${index}`, list: [[index]] }));
    const wide = JSON.stringify({ eventType: 'card.transaction.created', data: { cards } });
    expect(wide.length).toBeGreaterThan(100_000);
    expect(parseWebhookEvent(wide).ok).toBe(true);
    // body, data, cards, a card, list, the list inside it: 6 levels.
    expectError(parseWebhookEvent(wide, { maxDepth: 5 }), 'maxDepth');
    expect(parseWebhookEvent(wide, { maxDepth: 6 }).ok).toBe(true);
  });

  it('measures a value deeper than the call stack allows when maxDepth is that large, without overflowing it', () => {
    // Past 1,000 levels the depth is measured with an explicit stack instead of recursion.
    const depth = 50_000;
    // The body, data, then `depth` objects below it.
    const body = `{"eventType":"card.transaction.created","data":${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}}`;
    expect(parseWebhookEvent(body, { maxDepth: depth + 2 }).ok).toBe(true);
    expectError(parseWebhookEvent(body, { maxDepth: depth + 1 }), 'maxDepth');
    expectError(parseWebhookEvent(body, { maxDepth: 1_000 }), 'maxDepth');
    expectError(parseWebhookEvent(body, { maxDepth: 1_001 }), 'maxDepth');
  });

  it('leaves an unterminated string to the JSON error', () => {
    expectError(parseWebhookEvent('{"eventType":"card.transaction.created","data":{"note":"[[[[', { maxDepth: 2 }), 'json');
  });
});

describe('rejects a body that is not UTF-8', () => {
  it.each([[[0xff]], [[0x7b, 0xc3, 0x28, 0x7d]], [[0xed, 0xa0, 0x80]]])('%j', (invalid) => {
    expect(expectError(parseWebhookEvent(new Uint8Array(invalid)), 'encoding')).toContain('not valid UTF-8');
  });
});

describe('rejects __proto__ and constructor.prototype keys without polluting Object.prototype', () => {
  it.each([
    ['{"eventType":"user.created","data":{"__proto__":{"polluted":true}}}', '/data/__proto__'],
    ['{"__proto__":{"polluted":true},"eventType":"card.transaction.created","data":{}}', '/__proto__'],
    ['{"eventType":"card.transaction.created","data":{"list":[{"\\u005f_proto__":{"polluted":true}}]}}', '/data/list/0/__proto__'],
    ['{"eventType":"card.transaction.created","data":{"constructor":{"prototype":{"polluted":true}}}}', '/data/constructor'],
    ['{"eventType":"card.transaction.created","data":{"\\u0063onstructor":{"prototype":{"polluted":true}}}}', '/data/constructor'],
    ['{"eventType":"card.transaction.created","data":{"constructor":{"\\u0070rototype":{"polluted":true}}}}', '/data/constructor'],
    ['{"eventType":"card.transaction.created","data":{"a/b~c":{"__proto__":{"polluted":true}}}}', '/data/a~1b~0c/__proto__'],
  ])('%s', (body, path) => {
    for (const raw of [body, bytes(body)]) {
      expect(expectError(parseWebhookEvent(raw), 'forbiddenKey', path)).toContain('prototype-pollution');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('accepts a harmless "constructor" or "prototype" field', () => {
    const body = '{"eventType":"card.transaction.created","data":{"constructor":"Acme Ltd","prototype":true,"note":"__proto__"}}';
    expect(parseWebhookEvent(body).ok).toBe(true);
    expect(parseWebhookEvent('{"eventType":"card.transaction.created","data":{"name":"Caf\\u00e9 \\u0041cme"}}').ok).toBe(true);
  });

  it('finds a prototype key at the bottom of a deep body that maxDepth allows, without overflowing the stack', () => {
    const depth = 10_000;
    const body = `{"eventType":"card.transaction.created","data":${'{"a":'.repeat(depth)}{"__proto__":{"polluted":true}}${'}'.repeat(depth)}}`;
    const path = `/data${'/a'.repeat(depth)}/__proto__`;
    expect(expectError(parseWebhookEvent(body, { maxDepth: depth + 10 }), 'forbiddenKey', path)).toContain('prototype-pollution');
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('reports an already-parsed body instead of throwing', () => {
  it.each([[userCreatedEvent], [null], [42], [undefined]])('%j', (value) => {
    expect(expectError(parseWebhookEvent(value as never), 'rawBody')).toMatch(/raw body as a string or Uint8Array .*validateWebhookEvent/);
  });
});

describe('says how to pass raw bytes that are not in a Uint8Array (ArrayBuffer, DataView)', () => {
  it.each([
    ['ArrayBuffer', () => bytes(realisticBody).buffer],
    ['DataView', () => new DataView(bytes(realisticBody).buffer)],
  ])('%s', (name, body) => {
    const message = expectError(parseWebhookEvent(body() as never), 'rawBody');
    expect(message).toContain(`got a${name === 'ArrayBuffer' ? 'n' : ''} ${name}`);
    expect(message).toContain('new Uint8Array(await request.arrayBuffer())');
    expect(message).not.toContain('already-parsed');
  });
});

describe('never throws on arbitrary bodies', () => {
  it('fast-check: strings, bytes, JSON values and mutated events', () => {
    const options = fc.record({ strict: fc.boolean(), maxDepth: fc.integer({ min: 1, max: 80 }) }, { requiredKeys: [] });
    const realisticChars = [...realisticBody];
    const mutatedEvent = fc.tuple(fc.nat({ max: realisticChars.length - 1 }), fc.string({ maxLength: 3 })).map(([at, text]) => {
      const chars = [...realisticChars];
      chars.splice(at, 1, text);
      return chars.join('');
    });
    const bodies = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json(),
      fc.jsonValue().map((data) => JSON.stringify({ eventType: 'user.created', data })),
      mutatedEvent,
      fc.uint8Array({ maxLength: 200 }),
    );
    fc.assert(fc.property(bodies, options, (body, parseOptions) => {
      const result = parseWebhookEvent(body, parseOptions);
      return result.ok || result.errors.length > 0;
    }), { numRuns: 800 });
  });
});

describe('rejects an invalid option with WebhookValidatorOptionError', () => {
  it.each([['maxBytes', 0], ['maxBytes', -1], ['maxBytes', 1.5], ['maxBytes', '1000'], ['maxDepth', 0], ['maxDepth', Number.POSITIVE_INFINITY], ['maxDepth', Number.NaN]])('%s: %j', (option, value) => {
    const call = () => parseWebhookEvent(realisticBody, { [option]: value });
    expect(call).toThrow(WebhookValidatorOptionError);
    expect(call).toThrow(new RegExp(`options\\.${option} must be a positive integer`));
  });

  it.each(['stict', 'maxbytes', 'maxBodyBytes'])('a name parseWebhookEvent does not take: %s (a typo would keep the default silently)', (option) => {
    for (const body of [realisticBody, '{']) {
      const call = () => parseWebhookEvent(body, { [option]: 1 } as never);
      expect(call).toThrow(WebhookValidatorOptionError);
      expect(call).toThrow(`parseWebhookEvent has no option "${option}". Its options: strict, maxBytes, maxDepth.`);
      expect(catchError(call)).toMatchObject({ code: 'invalid_option', option });
    }
  });

  it('takes each of its own names, undefined values included', () => {
    expect(parseWebhookEvent(realisticBody, { strict: false, maxBytes: DEFAULT_MAX_BYTES, maxDepth: undefined }).ok).toBe(true);
  });

  it.each([[null], ['strict'], [true]])('options itself: %j', (options) => {
    // On a body that parses as well as on one that does not: an option error never depends on the body.
    for (const body of [realisticBody, '{']) {
      const call = () => parseWebhookEvent(body, options as never);
      expect(call).toThrow(WebhookValidatorOptionError);
      expect(call).toThrow(/options must be an object such as \{ strict: true \} or left out/);
    }
  });
});

function catchError(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}
