import { afterEach, describe, expect, it } from 'vitest';
import { checkPackage } from '../src/package-checks.mjs';
import { writeFixturePackage } from './fixture-package';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((remove) => remove()));

function fixture(...args: Parameters<typeof writeFixturePackage>) {
  const pkg = writeFixturePackage(...args);
  cleanups.push(pkg.remove);
  return pkg;
}

describe('passes a package that ships ESM and CommonJS with matching types', () => {
  it('finds no publint or attw problem', async () => {
    const pkg = fixture('@capi/fixture-good');
    const result = await checkPackage({ name: '@capi/fixture-good', dir: pkg.dir });
    expect(result).toEqual({ name: '@capi/fixture-good', ok: true, publint: [], attw: [], registryPage: [] });
  }, 60_000);
});

describe('fails a package whose exports point at missing type files', () => {
  it('reports the missing type files', async () => {
    const pkg = fixture('@capi/fixture-untyped', 'missing-types');
    const result = await checkPackage({ name: '@capi/fixture-untyped', dir: pkg.dir });
    expect(result.ok).toBe(false);
    expect(result.publint.join('\n')).toMatch(/index\.d\.ts.*does not exist/);
  }, 60_000);
});

describe('fails a package whose require condition gets ESM types', () => {
  it('reports the masquerading types for node16 require', async () => {
    const pkg = fixture('@capi/fixture-masquerade', 'esm-types-for-require');
    const result = await checkPackage({ name: '@capi/fixture-masquerade', dir: pkg.dir });
    expect(result.ok).toBe(false);
    expect(result.attw.join('\n')).toMatch(/FalseESM:.*index\.d\.ts for .*index\.cjs.*give the require condition a \.d\.cts file/);
  }, 60_000);
});

describe('fails a package whose subpath has no typesVersions (node10, a CommonJS project\'s default resolution)', () => {
  it('reports the subpath that node10 cannot resolve, with the hint', async () => {
    const pkg = fixture('@capi/fixture-subpath', 'subpath-without-types-versions');
    const result = await checkPackage({ name: '@capi/fixture-subpath', dir: pkg.dir });
    expect(result.ok).toBe(false);
    expect(result.attw).toEqual([expect.stringMatching(/^NoResolution \("\.\/extra", node10\): .*add it to typesVersions/)]);
  }, 60_000);
});
