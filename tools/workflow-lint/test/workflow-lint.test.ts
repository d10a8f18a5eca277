import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { codeownersProblems, lintWorkflow, lintWorkflowsIn } from '../src/lint-workflows.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const cli = path.join(here, '../src/cli.mjs');
const workflow = (name: string) => readFileSync(path.join(repoRoot, '.github/workflows', name), 'utf8');

const scratches: string[] = [];
afterEach(() => scratches.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A repository root in the temp folder with the given workflows and CODEOWNERS. */
function scratchRoot(workflows: Record<string, string>, codeowners = '/specs/ @capi-dev/spec-owners\n'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'capi-workflow-lint-'));
  scratches.push(root);
  mkdirSync(path.join(root, '.github/workflows'), { recursive: true });
  for (const [name, text] of Object.entries(workflows)) writeFileSync(path.join(root, '.github/workflows', name), text);
  writeFileSync(path.join(root, '.github/CODEOWNERS'), codeowners);
  return root;
}

describe("the repository's workflows and CODEOWNERS pass the lint", () => {
  it('finds the three workflows, each without a problem', () => {
    expect(lintWorkflowsIn(repoRoot)).toEqual([
      { file: '.github/workflows/docs.yml', problems: [] },
      { file: '.github/workflows/pull-request.yml', problems: [] },
      { file: '.github/workflows/release.yml', problems: [] },
    ]);
    expect(codeownersProblems(repoRoot)).toEqual([]);
  });
});

describe('fails a broken workflow, saying where', () => {
  const pullRequest = workflow('pull-request.yml');

  it('a job without runs-on', () => {
    const broken = pullRequest.replace('    runs-on: ubuntu-24.04\n', '');
    expect(broken).not.toBe(pullRequest);
    expect(lintWorkflow(broken)).toContain('/jobs/check/runs-on: This property is required');
  });

  it('a misspelt trigger', () => {
    expect(lintWorkflow(pullRequest.replace('  pull_request:\n', '  pull_requests:\n'))).toContain("/on: Additional property 'pull_requests' is not allowed");
  });

  it('a job that needs a job that does not exist', () => {
    expect(lintWorkflow(workflow('docs.yml').replace('needs: build', 'needs: bulid'))).toContain('/jobs/deploy/needs: unresolved job bulid');
  });

  it('an action without a version, and an expression left open', () => {
    const broken = workflow('release.yml').replace('changesets/action@v1', 'changesets/action').replace('${{ secrets.NPM_TOKEN }}', '${{ secrets.NPM_TOKEN }');
    const problems = lintWorkflow(broken);
    expect(problems).toContainEqual(expect.stringMatching(/"uses: changesets\/action" names no version/));
    expect(problems).toContainEqual(expect.stringMatching(/an expression "\$\{\{ \.\.\. \}\}" is not closed on its line: NPM_TOKEN/));
  });

  it('a key defined twice in one map (action-validator reads the last one; the forge rejects the workflow)', () => {
    const broken = pullRequest.replace('  TURBO_TELEMETRY_DISABLED: 1\n', '  TURBO_TELEMETRY_DISABLED: 1\n  TURBO_TELEMETRY_DISABLED: 0\n');
    expect(broken).not.toBe(pullRequest);
    const line = broken.split('\n').indexOf('  TURBO_TELEMETRY_DISABLED: 0') + 1;
    expect(lintWorkflow(broken)).toEqual([`line ${line}: a key is defined twice in the same map (the forge rejects the workflow): keep one`]);
  });

  it('through the command line: exit 1 and the file named', () => {
    const root = scratchRoot({ 'pull-request.yml': pullRequest.replace('    runs-on: ubuntu-24.04\n', '') });
    const run = spawnSync(process.execPath, [cli], { encoding: 'utf8', env: { ...process.env, WORKFLOW_LINT_ROOT: root } });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('✖ .github/workflows/pull-request.yml: 1 problem(s)');
  });
});

describe('CODEOWNERS gives specs/ an owner', () => {
  it('fails without a line for specs/', () => {
    const root = scratchRoot({ 'pull-request.yml': workflow('pull-request.yml') }, '/packages/ @capi-dev/sdk\n');
    expect(codeownersProblems(root)).toEqual([expect.stringMatching(/gives specs\/ no owner/)]);
  });
});

describe('the workflows do what the README says', () => {
  it('pull requests: install, build, tests, check:pr with its Markdown report in the job summary and one updated comment', () => {
    const text = workflow('pull-request.yml');
    for (const step of ['pnpm install --frozen-lockfile', 'pnpm build', 'pnpm test', 'pnpm lint:workflows', 'pnpm check:pr --markdown "$RUNNER_TEMP/check-pr.md"', '>> "$GITHUB_STEP_SUMMARY"', 'updateComment', 'CHECK_PR_BASE: origin/${{ github.base_ref }}', 'fetch-depth: 0']) {
      expect(text).toContain(step);
    }
  });

  it('release: changesets/action versions (with the released specs) or publishes, with an OIDC identity for provenance', () => {
    const text = workflow('release.yml');
    for (const line of ['uses: changesets/action@v1', 'version: pnpm release:version', 'publish: pnpm release', 'id-token: write', 'NPM_CONFIG_PROVENANCE: true']) expect(text).toContain(line);
    const rootScripts = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts;
    expect(rootScripts['release:version']).toContain('update-released-specs');
  });

  it('docs: the static site of pnpm docs deployed to GitHub Pages', () => {
    const text = workflow('docs.yml');
    for (const line of ['run: pnpm docs', 'path: tools/docs/dist', 'uses: actions/deploy-pages@v4', 'pages: write']) expect(text).toContain(line);
  });
});
