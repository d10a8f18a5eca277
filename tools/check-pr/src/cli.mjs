#!/usr/bin/env node
// `pnpm check:pr`: the review gates of a pull request, run in order, every one reported even
// when an earlier one fails, so one run shows everything to fix.
//   --markdown FILE   also write the report as Markdown (CI: the job summary and the PR comment)
//   --skip ID[,ID]    leave gates out (ids: spec-lint, generated-code, sandbox-coverage, breaking-changes, changesets)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { checkBreakingChanges } from './breaking-change-check.mjs';
import { checkChangesetCoverage } from './changeset-coverage-check.mjs';
import { checkGeneratedCode } from './generated-code-check.mjs';
import { checkSandboxCoverage } from './sandbox-coverage-check.mjs';
import { checkSpecLint } from './spec-lint-check.mjs';
import { formatMarkdownReport, formatReport } from './report.mjs';

const root = process.env.CHECK_PR_ROOT ?? repoRoot;
/** @type {[string, string, () => Promise<import('./spec-lint-check.mjs').CheckResult>][]} */
const gates = [
  ['spec-lint', 'spec lint', () => checkSpecLint({ root })],
  // Generating builds @capi/specs first (turbo: gen depends on ^build), which also writes
  // the bundled specs/dist/*.json that the breaking-change gate compares.
  ['generated-code', 'generated code up to date', () => checkGeneratedCode({ root })],
  // After generating: the sandbox's tests read the bundled specs and the regenerated contract.
  ['sandbox-coverage', 'the sandbox serves the specs', () => checkSandboxCoverage({ root })],
  ['breaking-changes', 'breaking changes have a major changeset', () => checkBreakingChanges({ root })],
  ['changesets', 'changeset for each changed package', () => checkChangesetCoverage({ root })],
];

let options;
try {
  ({ values: options } = parseArgs({ options: { markdown: { type: 'string' }, skip: { type: 'string', default: '' } } }));
} catch (error) {
  console.error(`check:pr: ${/** @type {Error} */ (error).message}. Usage: check:pr [--markdown FILE] [--skip ${gates.map(([id]) => id).join(',')}]`);
  process.exit(2);
}
const skipped = options.skip.split(',').filter(Boolean);
const unknown = skipped.filter((id) => !gates.some(([gateId]) => gateId === id));
if (unknown.length > 0) {
  console.error(`check:pr: --skip ${unknown.join(',')}: no such gate. The gates are ${gates.map(([id]) => id).join(', ')}.`);
  process.exit(2);
}

// The spec, generated-code and sandbox gates read the working tree, the breaking-change and
// changeset gates the commits: uncommitted changes get a verdict on something not pushed.
const uncommitted = uncommittedChanges(root);
if (uncommitted.length > 0) {
  console.warn(`check:pr: ${uncommitted.length} uncommitted change(s) (${uncommitted.slice(0, 5).join(', ')}${uncommitted.length > 5 ? ', ...' : ''}): the spec, generated-code and sandbox gates read the working tree, the breaking-change and changeset gates the commits since the base. Commit them and run check:pr again for a verdict on what you will push.`);
}

const results = [];
for (const [id, name, gate] of gates) {
  if (skipped.includes(id)) continue;
  const started = Date.now();
  try {
    results.push({ ...(await gate()), seconds: (Date.now() - started) / 1000 });
  } catch (error) {
    results.push({ name, ok: false, summary: /** @type {Error} */ (error).message, details: [], seconds: (Date.now() - started) / 1000 });
  }
}
process.stdout.write(formatReport(results));
// pnpm runs the script in tools/check-pr: a relative path is meant from where the user typed it.
if (options.markdown) writeFileSync(path.resolve(process.env.INIT_CWD ?? process.cwd(), options.markdown), formatMarkdownReport(results));
process.exitCode = results.every((result) => result.ok) ? 0 : 1;

/**
 * Tracked files changed and not committed, and changesets not yet added (`git status`).
 * @param {string} cwd
 * @returns {string[]}
 */
function uncommittedChanges(cwd) {
  try {
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--', '.', ':(exclude)node_modules'], { cwd, encoding: 'utf8' });
    return status.split('\n').filter((line) => line !== '' && (!line.startsWith('??') || line.slice(3).startsWith('.changeset/'))).map((line) => line.slice(3));
  } catch {
    return [];
  }
}
