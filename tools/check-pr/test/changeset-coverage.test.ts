import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkChangesetCoverage } from '../src/changeset-coverage-check.mjs';
import { readPendingChangesets } from '../src/changesets.mjs';
import { changeset, createFixtureRepo, released, type FixtureRepo } from './fixture-repo';

let repo: FixtureRepo;
let base: string;
beforeEach(() => {
  repo = createFixtureRepo();
  repo.write('specs/dist/openapi.json', released('openapi'));
  repo.write('specs/dist/asyncapi.json', released('asyncapi'));
  repo.write('specs/schemas/User.yaml', 'title: User\n');
  repo.write('specs/schemas/AccountLimit.yaml', 'title: AccountLimit\n');
  base = repo.commit('base');
  repo.git('checkout', '-q', '-b', 'feature');
});
afterEach(() => repo.remove());

const against = (env: Record<string, string> = {}) => checkChangesetCoverage({ root: repo.root, env: { CHECK_PR_BASE: base, ...env } });

describe('fails a changed package without a changeset', () => {
  it('names the package and the files that changed it', async () => {
    repo.write('packages/client/src/index.ts', 'export const version = 2;\n');
    repo.commit('change the client');
    const result = await against();
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('run `pnpm changeset`');
    expect(result.details.join('\n')).toContain('@capi/client');
    expect(result.details.join('\n')).toContain('packages/client/src/index.ts');
  });

  it('does not take an empty changeset beside one that names packages as a waiver of the others', async () => {
    repo.write('packages/client/src/index.ts', 'export const version = 2;\n');
    repo.write('packages/sandbox/src/index.ts', 'export const version = 2;\n');
    repo.write('.changeset/client-fix.md', changeset({ '@capi/client': 'patch' }));
    repo.write('.changeset/nothing.md', '---\n---\n\nNo release.\n');
    repo.commit('change the client and the sandbox; a changeset for the client, an empty one');
    const result = await against();
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('adds the empty changeset nothing.md (no release) beside changesets that name packages');
    expect(result.summary).toContain('`"<package>": none` for one that needs no release');
    expect(result.details.join('\n')).toContain('@capi/sandbox, changed by: packages/sandbox/src/index.ts');
    // Named with none, it passes.
    repo.git('rm', '-q', '.changeset/nothing.md');
    repo.write('.changeset/sandbox-none.md', changeset({ '@capi/sandbox': 'none' }));
    repo.commit('the sandbox needs no release, said so');
    expect((await against()).ok).toBe(true);
  });

  it('does not accept a changeset for a different package', async () => {
    repo.write('packages/client/src/index.ts', 'export const version = 2;\n');
    repo.write('.changeset/other.md', changeset({ '@capi/sandbox': 'patch' }));
    repo.commit('change the client, changeset for the sandbox');
    const result = await against();
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toContain('@capi/client');
    expect(result.details.join('\n')).not.toContain('@capi/sandbox');
  });
});

describe('passes a changed package with a changeset', () => {
  it('accepts any bump for the package', async () => {
    repo.write('packages/client/src/index.ts', 'export const version = 2;\n');
    repo.write('.changeset/client-fix.md', changeset({ '@capi/client': 'patch' }));
    repo.commit('change the client with a changeset');
    const result = await against();
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('1 changed package(s) all have a changeset');
  });
});

describe('needs no changeset for what does not reach npm users', () => {
  it('ignores tests, benchmarks, markdown and private packages', async () => {
    repo.write('packages/client/test/client.test.ts', 'test\n');
    repo.write('packages/client/bench/index.mjs', 'bench\n');
    repo.write('packages/client/README.md', 'docs\n');
    repo.write('packages/bench-only/index.mjs', 'private\n');
    repo.commit('internal changes');
    const result = await against();
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('no published package changed');
  });
});

describe('needs no changeset for the release commit (pnpm release:version)', () => {
  it('passes package.json files whose only change is their version, with the changesets consumed and the changelogs written', async () => {
    repo.write('.changeset/client-fix.md', changeset({ '@capi/client': 'minor' }));
    const withChangeset = repo.commit('a change with its changeset');
    repo.git('rm', '-q', '.changeset/client-fix.md');
    repo.write('packages/client/package.json', { name: '@capi/client', version: '1.1.0' });
    repo.write('packages/client/CHANGELOG.md', '# @capi/client\n\n## 1.1.0\n');
    repo.commit('release: version packages');
    const result = await against({ CHECK_PR_BASE: withChangeset });
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('no published package changed');
  });

  it('still asks for a changeset when a package.json changes more than its version', async () => {
    repo.write('packages/client/package.json', { name: '@capi/client', version: '1.1.0', dependencies: { viem: '^2.0.0' } });
    repo.commit('a version and a new dependency');
    const result = await against();
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toContain('packages/client/package.json');
  });
});

describe('treats a spec source change as a change of the packages generated from it', () => {
  it('asks the event packages for a changeset when an event schema changes', async () => {
    repo.write('specs/schemas/User.yaml', 'title: User\ndescription: changed\n');
    repo.commit('change the user schema');
    const result = await against();
    expect(result.ok).toBe(false);
    const report = result.details.join('\n');
    for (const name of ['@capi/event-types', '@capi/webhook-validator', '@capi/webhook-receiver']) expect(report).toContain(name);
    expect(report).not.toContain('@capi/client');
  });

  it('asks the OpenAPI packages for a changeset when specs/openapi.yaml changes', async () => {
    repo.write('specs/openapi.yaml', 'openapi: 3.1.0\n');
    repo.write('.changeset/api.md', changeset({ '@capi/openapi-types': 'minor', '@capi/client': 'minor' }));
    repo.commit('change the OpenAPI spec');
    const result = await against();
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('1 changed package(s) have no changeset');
    expect(result.details.join('\n')).toContain('@capi/sandbox');
  });
});

describe('compares with the base ref from CHECK_PR_BASE, else the fork point from main', () => {
  it('uses the merge-base with main when CHECK_PR_BASE is unset', async () => {
    repo.write('packages/sandbox/src/index.ts', 'export const version = 3;\n');
    repo.commit('change the sandbox');
    const result = await checkChangesetCoverage({ root: repo.root, env: {} });
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('merge-base with main');
    expect(result.details.join('\n')).toContain('@capi/sandbox');
  });

  it('rejects a CHECK_PR_BASE that is not a commit, saying how to fix it', async () => {
    await expect(against({ CHECK_PR_BASE: 'origin/no-such-branch' })).rejects.toThrow(/not a commit.*git fetch/);
  });
});

describe('reads changesets the way changesets writes them (@changesets/read)', () => {
  it('reads double- and single-quoted package names', async () => {
    repo.write('.changeset/names.md', '---\n"@capi/client": major\n\'@capi/sandbox\': minor\n"@capi/event-types": patch\n---\n\nSummary\n');
    const [names] = await readPendingChangesets(repo.root);
    expect(names.id).toBe('names');
    expect(names.releases).toEqual([
      { name: '@capi/client', type: 'major' },
      { name: '@capi/sandbox', type: 'minor' },
      { name: '@capi/event-types', type: 'patch' },
    ]);
  });

  it('reads the empty changeset of `pnpm changeset --empty` as no release', async () => {
    repo.write('.changeset/empty.md', '---\n---\n\n');
    expect(await readPendingChangesets(repo.root)).toEqual([{ id: 'empty', summary: '', releases: [] }]);
  });

  it('rejects a file without front matter, saying how to write one', async () => {
    repo.write('.changeset/bad.md', 'just text');
    await expect(readPendingChangesets(repo.root)).rejects.toThrow(/cannot read.*pnpm changeset/s);
  });
});
