import { describe, expect, it } from 'vitest';
import { describeWithExample, generatedHeader, tsdocComment } from '../index.mjs';

describe('every generated file starts with a header naming its spec and how to regenerate it', () => {
  it('names the spec, its info.version, the bundle read and the gen command', () => {
    expect(generatedHeader({ specPath: 'specs/openapi.yaml', bundlePath: 'specs/dist/openapi.json', specVersion: '1.2.0', packageName: '@capi/openapi-types' })).toBe([
      '// This file is generated. Do not edit it by hand.',
      '// Source: specs/openapi.yaml (info.version 1.2.0), read from specs/dist/openapi.json.',
      '// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of @capi/openapi-types; pnpm build runs it too).',
      '',
    ].join('\n'));
  });

  it('leaves out the version when the spec has none (no dates, nothing that changes between runs)', () => {
    expect(generatedHeader({ specPath: 'specs/asyncapi.yaml', bundlePath: 'specs/dist/asyncapi.json', packageName: '@capi/event-types' }).split('\n')[1])
      .toBe('// Source: specs/asyncapi.yaml, read from specs/dist/asyncapi.json.');
  });
});

describe('descriptions become TSDoc blocks that cannot end early', () => {
  it('writes one line as a one-line block and nothing for no text', () => {
    expect(tsdocComment('The user.')).toBe('/** The user. */\n');
    expect(tsdocComment(undefined)).toBe('');
    expect(tsdocComment('  \n ')).toBe('');
  });

  it('writes several lines as a block, indented, with empty lines kept bare', () => {
    expect(tsdocComment('First.\n\nSecond.  ', '  ')).toBe('  /**\n   * First.\n   *\n   * Second.\n   */\n');
  });

  it('breaks up */ inside the text', () => {
    expect(tsdocComment('a */ b')).toBe('/** a *\\/ b */\n');
  });

  it('appends the first example of a schema as pretty JSON under @example', () => {
    expect(describeWithExample({ description: 'A wallet.', examples: [{ address: '0x1' }, { address: '0x2' }] }))
      .toBe('A wallet.\n\n@example\n{\n  "address": "0x1"\n}');
    expect(describeWithExample({ examples: [] })).toBeUndefined();
    expect(describeWithExample(undefined)).toBeUndefined();
  });
});
