import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPackage, packPackage, unpackTarball } from '../src/package-checks.mjs';
import { docsSiteUrl, markdownLinkTargets, registryPageProblems } from '../src/registry-page.mjs';
import { publishablePackages } from '../src/workspace-packages.mjs';
import { writeFixturePackage, type Fault } from './fixture-package';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((remove) => remove()));

/** Packs a package folder as `pnpm publish` would and unpacks the tarball. */
async function packed(dir: string): Promise<string> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'capi-registry-page-'));
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  return unpackTarball(await packPackage(dir, scratch));
}

async function fixtureProblems(fault: Fault): Promise<string[]> {
  const pkg = writeFixturePackage('@capi/fixture-registry-page', fault);
  cleanups.push(pkg.remove);
  return registryPageProblems(await packed(pkg.dir));
}

describe('every published package reads well on the registry page', () => {
  for (const pkg of publishablePackages()) {
    it(`${pkg.name}: its tarball has the metadata, a LICENSE and a README whose links all work there`, async () => {
      const problems = registryPageProblems(await packed(pkg.dir), { dirName: pkg.dirName });
      expect(problems).toEqual([]);
      expect(pkg.manifest.homepage).toBe(`${docsSiteUrl}/packages/${pkg.dirName}/`);
    }, 60_000);
  }
});

describe('fails a tarball that lacks what the registry page needs', () => {
  it('accepts the complete fixture', async () => {
    expect(await fixtureProblems('none')).toEqual([]);
  }, 60_000);

  it('fails a manifest without "repository", saying what to add', async () => {
    const problems = await fixtureProblems('no-repository');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/no "repository" with "url" and "directory": add .*"directory"/);
  }, 60_000);

  it('fails a tarball without LICENSE', async () => {
    expect(await fixtureProblems('no-license-file')).toEqual([expect.stringMatching(/the tarball has no LICENSE file/)]);
  }, 60_000);

  it('fails a README with a relative link, naming the link', async () => {
    expect(await fixtureProblems('relative-readme-link')).toEqual([expect.stringMatching(/README\.md links to "\.\/examples\/node-http\.ts", which is dead on the registry page/)]);
  }, 60_000);

  it('fails the whole package check, not only the registry-page part', async () => {
    const pkg = writeFixturePackage('@capi/fixture-no-license', 'no-license-file');
    cleanups.push(pkg.remove);
    const result = await checkPackage({ name: '@capi/fixture-no-license', dir: pkg.dir });
    expect(result.ok).toBe(false);
    expect(result.registryPage).toHaveLength(1);
  }, 60_000);
});

describe('finds the links of a README the way the registry page renders them', () => {
  it('reads inline links, images, reference definitions and HTML, and skips code', () => {
    const markdown = [
      '[a](../sibling) ![b](./logo.png "Logo") <a href="docs/x.html">c</a>',
      '[ref]: ./examples',
      '`[not](./a-link)`',
      '```md',
      '[also not](./in-a-fence)',
      '```',
      '[ok](https://docs.capi.dev/) [anchor](#install)',
    ].join('\n');
    expect(markdownLinkTargets(markdown)).toEqual(['../sibling', './logo.png', 'https://docs.capi.dev/', '#install', './examples', 'docs/x.html']);
  });
});
