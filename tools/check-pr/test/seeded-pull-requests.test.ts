// Seeded pull requests against a scratch clone of this repository (its real packages, specs
// and pending changesets), judged by the real `check:pr` command line. Spec lint, the
// generated-code gate and the sandbox gate are left out: they look at the specs and the
// packages, not at the pull request's changesets, and have their own tests.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { markdownMarker } from '../src/report.mjs';

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src/cli.mjs');
const openapiConsumers = ['@capi/openapi-types', '@capi/client', '@capi/sandbox'];
let clone: string;
let scratch: string;

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@localhost', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@localhost' };
const git = (...args: string[]) => execFileSync('git', args, { cwd: clone, encoding: 'utf8', env: gitEnv }).trim();
const write = (file: string, content: string) => {
  mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
  writeFileSync(path.join(clone, file), content);
};
const commit = (message: string) => {
  git('add', '-A');
  git('commit', '-q', '--no-verify', '--allow-empty', '-m', message);
};
const changeset = (bumps: Record<string, string>) => `---\n${Object.entries(bumps).map(([name, bump]) => `"${name}": ${bump}`).join('\n')}\n---\n\nA seeded change.\n`;
const forAll = (names: string[], bump: string) => Object.fromEntries(names.map((name) => [name, bump]));

/** Runs `check:pr` on the clone against `base`, with only the changeset gates. */
function checkPr(base: string) {
  const markdownFile = path.join(scratch, `report-${Date.now()}.md`);
  const run = spawnSync(process.execPath, [cli, '--skip', 'spec-lint,generated-code,sandbox-coverage', '--markdown', markdownFile], {
    cwd: clone,
    encoding: 'utf8',
    env: { ...process.env, CHECK_PR_ROOT: clone, CHECK_PR_BASE: base },
  });
  return { code: run.status, output: run.stdout + run.stderr, markdown: readFileSync(markdownFile, 'utf8') };
}

/** specs/dist as the build writes it for specs equal to the released ones (no spec change). */
function bundleReleasedSpecs() {
  for (const file of ['openapi.json', 'asyncapi.json']) write(`specs/dist/${file}`, readFileSync(path.join(clone, 'specs/released', file), 'utf8'));
}

/** specs/dist as the build would write it for a pull request that removed the first operation. */
function bundleWithoutFirstOperation(): string {
  const openapi = JSON.parse(readFileSync(path.join(clone, 'specs/released/openapi.json'), 'utf8'));
  const removed = Object.keys(openapi.paths)[0];
  delete openapi.paths[removed];
  write('specs/dist/openapi.json', JSON.stringify(openapi));
  return removed;
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'capi-seeded-pr-'));
  clone = path.join(scratch, 'repo');
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', repoRoot, clone]);
  git('checkout', '-q', '-B', 'main', head);
  // A base right after a release, when `changeset version` consumed every changeset.
  git('checkout', '-q', '-b', 'released-main');
  const consumed = readdirSync(path.join(clone, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md');
  if (consumed.length > 0) git('rm', '-q', ...consumed.map((file) => `.changeset/${file}`));
  commit('release: changeset version consumed the pending changesets');
  // A base with changesets pending from earlier pull requests, whatever the real tree holds
  // today: a fix of the signature package and a breaking change of the OpenAPI packages.
  git('checkout', '-q', '-b', 'pending-on-main');
  write('.changeset/earlier-signature-fix.md', changeset({ '@capi/webhook-signature': 'patch' }));
  write('.changeset/earlier-breaking-change.md', changeset(forAll(openapiConsumers, 'major')));
  commit('earlier pull requests: two pending changesets');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Starts a pull request branch from `base`, with nothing left from the previous test. */
function startPullRequest(base: string) {
  git('checkout', '-q', '-f', '-B', 'pull-request', base);
  git('clean', '-q', '-fdx', '--', 'specs/dist', '.changeset');
  bundleReleasedSpecs();
}

describe('a pull request that changes a package and adds no changeset fails, even with changesets pending on main', () => {
  beforeEach(() => startPullRequest('pending-on-main'));

  it('names the package, the file, and why the pending changesets do not count', () => {
    appendFileSync(path.join(clone, 'packages/webhook-signature/src/index.ts'), '// a seeded change\n');
    commit('signature: a change without a changeset');
    const { code, output, markdown } = checkPr('pending-on-main');
    expect(code).toBe(1);
    expect(output).toContain('✖ changeset for each changed package');
    expect(output).toContain('have no changeset added by this pull request');
    expect(output).toContain('the pull request adds no changeset');
    expect(output).toMatch(/@capi\/webhook-signature, changed by:\s+packages\/webhook-signature\/src\/index\.ts/);
    expect(output).toMatch(/1 changeset\(s\) for these packages were already pending on the base \(e\.g\. earlier-signature-fix\.md\): they describe earlier changes, so they do not count/);
    expect(markdown.startsWith(markdownMarker)).toBe(true);
    expect(markdown).toContain('## check:pr failed: 1 of 2 gate(s)');
    expect(markdown).toMatch(/\| ❌ \| changeset for each changed package \|/);
    expect(markdown).toContain('packages/webhook-signature/src/index.ts');
  });

  it('warns that uncommitted changes are not what it judges: the changeset gate reads the commits', () => {
    appendFileSync(path.join(clone, 'packages/webhook-signature/src/index.ts'), '// a seeded change, not committed\n');
    write('.changeset/not-added-yet.md', changeset({ '@capi/webhook-signature': 'patch' }));
    const { output } = checkPr('pending-on-main');
    expect(output).toContain('check:pr: 2 uncommitted change(s) (packages/webhook-signature/src/index.ts, .changeset/not-added-yet.md)');
    expect(output).toContain('Commit them and run check:pr again');
    expect(output).toMatch(/✔ changeset for each changed package \(.*\): no published package changed since/);
  });

  it('passes once the pull request adds its own changeset for the package', () => {
    appendFileSync(path.join(clone, 'packages/webhook-signature/src/index.ts'), '// a seeded change\n');
    write('.changeset/seeded-signature-fix.md', changeset({ '@capi/webhook-signature': 'patch' }));
    commit('signature: a change with its changeset');
    const { code, output, markdown } = checkPr('pending-on-main');
    expect(output).toMatch(/✔ changeset for each changed package \(.*\): 1 changed package\(s\) all have a changeset added by the pull request/);
    expect(code).toBe(0);
    expect(markdown).toContain('## check:pr passed');
  });
});

describe('the empty changeset of `pnpm changeset --empty` is accepted', () => {
  beforeEach(() => startPullRequest('pending-on-main'));

  it('passes a change that declares it needs no release, and lists the packages not released', () => {
    appendFileSync(path.join(clone, 'packages/webhook-signature/src/index.ts'), '// an internal change\n');
    write('.changeset/seeded-no-release.md', '---\n---\n\n');
    commit('signature: an internal change, no release');
    const { code, output } = checkPr('pending-on-main');
    expect(output).toContain('the pull request adds the empty changeset seeded-no-release.md');
    expect(output).toContain('@capi/webhook-signature: changed, not released');
    expect(code).toBe(0);
  });
});

describe('a breaking spec change needs a major release of the packages built on the spec', () => {
  function seedBreakingPullRequest(base: string, bump: string) {
    startPullRequest(base);
    appendFileSync(path.join(clone, 'specs/openapi.yaml'), '# seeded: the first operation is removed\n');
    write('.changeset/seeded-remove-operation.md', changeset(forAll(openapiConsumers, bump)));
    commit(`spec: remove an operation, ${bump} changeset`);
    return bundleWithoutFirstOperation();
  }

  it('fails with a minor changeset, naming the change, the packages and their planned bump', () => {
    const removed = seedBreakingPullRequest('released-main', 'minor');
    const { code, output, markdown } = checkPr('released-main');
    expect(code).toBe(1);
    expect(output).toContain('✖ breaking changes have a major changeset');
    expect(output).toContain(`removed paths › ${removed}`);
    expect(output).toMatch(/is not major for them: @capi\/openapi-types \(minor\), @capi\/client \(minor\), @capi\/sandbox \(minor\)/);
    for (const name of openapiConsumers) expect(output).toContain(`"${name}": major`);
    expect(output).toContain('✔ changeset for each changed package');
    expect(markdown).toMatch(/\| ❌ \| breaking changes have a major changeset \|/);
    expect(markdown).toContain(`removed paths › ${removed}`);
  });

  it('passes with a major changeset in the pull request', () => {
    seedBreakingPullRequest('released-main', 'major');
    const { code, output } = checkPr('released-main');
    expect(output).toMatch(/✔ breaking changes have a major changeset \(.*\): openapi: 1 breaking change\(s\), released as major for @capi\/openapi-types, @capi\/client, @capi\/sandbox/);
    expect(code).toBe(0);
  });

});

describe('a breaking change the pull request makes needs its own major changeset, even when a major is already pending on main', () => {
  /**
   * A pull request that removes the first operation from specs/openapi.yaml itself, with
   * specs/dist bundled from its sources as `pnpm build` does (the gate bundles the base's).
   */
  async function seedSourceBreak(bump: string) {
    startPullRequest('pending-on-main');
    const source = path.join(clone, 'specs/openapi.yaml');
    const text = readFileSync(source, 'utf8');
    const [, removed] = /\npaths:\n  (\/[^:]+):\n/.exec(text)!;
    const start = text.indexOf(`\n  ${removed}:\n`) + 1;
    const end = text.indexOf('\n  /', start) + 1;
    writeFileSync(source, text.slice(0, start) + text.slice(end));
    write('.changeset/seeded-remove-operation.md', changeset(forAll(openapiConsumers, bump)));
    commit(`spec: remove ${removed}, ${bump} changeset`);
    const { buildSpecOutputs } = await import(path.join(repoRoot, 'specs/scripts/bundle.mjs'));
    const outputs: Map<string, string> = await buildSpecOutputs(path.join(clone, 'specs'));
    for (const file of ['openapi.json', 'asyncapi.json']) write(`specs/dist/${file}`, outputs.get(file)!);
    return removed!;
  }

  it('fails with a minor changeset, naming the change this pull request makes (the release would list it as a minor change)', async () => {
    const removed = await seedSourceBreak('minor');
    const { code, output } = checkPr('pending-on-main');
    expect(code).toBe(1);
    expect(output).toContain('✖ breaking changes have a major changeset');
    expect(output).toMatch(/openapi: this pull request makes 1 breaking change\(s\) \(its spec against the base's, pending-on-main, [0-9a-f]{10}\):/);
    expect(output).toContain(`removed paths › ${removed}`);
    expect(output).toMatch(/this pull request's own changesets are not major for @capi\/openapi-types \(minor\), @capi\/client \(minor\), @capi\/sandbox \(minor\)/);
    for (const name of openapiConsumers) expect(output).toContain(`"${name}": major`);
  });

  it('passes with a major changeset of its own', async () => {
    await seedSourceBreak('major');
    const { code, output } = checkPr('pending-on-main');
    expect(output).toMatch(/✔ breaking changes have a major changeset \(.*\): openapi: \d+ breaking change\(s\), released as major for @capi\/openapi-types, @capi\/client, @capi\/sandbox; openapi: 1 of them made by this pull request, whose changeset says major/);
    expect(code).toBe(0);
  });

  it('passes a compatible spec edit (a summary) with a patch changeset while the major is pending', async () => {
    startPullRequest('pending-on-main');
    const source = path.join(clone, 'specs/openapi.yaml');
    writeFileSync(source, readFileSync(source, 'utf8').replace(/\n      summary: /, '\n      summary: Edited '));
    write('.changeset/seeded-description.md', changeset(forAll(openapiConsumers, 'patch')));
    commit('spec: a summary edit, patch changeset');
    const { buildSpecOutputs } = await import(path.join(repoRoot, 'specs/scripts/bundle.mjs'));
    const outputs: Map<string, string> = await buildSpecOutputs(path.join(clone, 'specs'));
    for (const file of ['openapi.json', 'asyncapi.json']) write(`specs/dist/${file}`, outputs.get(file)!);
    const { code, output } = checkPr('pending-on-main');
    expect(output).toContain('openapi: none of them made by this pull request');
    expect(code).toBe(0);
  });
});
