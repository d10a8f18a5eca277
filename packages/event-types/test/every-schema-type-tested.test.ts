import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('every schema of the spec is covered by the type tests', () => {
  // A schema added to the spec gets its interface automatically; this makes sure it also gets
  // an expectTypeOf assertion in test/types.test-d.ts against the reference.
  it('names each components.schemas entry in an expectTypeOf<...>() of types.test-d.ts', () => {
    const spec = JSON.parse(readFileSync(join(packageDir, '../../specs/dist/asyncapi.json'), 'utf8'));
    const typeTests = readFileSync(join(packageDir, 'test/types.test-d.ts'), 'utf8');
    const untested = Object.keys(spec.components.schemas).filter((name) => !new RegExp(`expectTypeOf<${name}\\b`).test(typeTests));
    expect(untested).toEqual([]);
  });
});
