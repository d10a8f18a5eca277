#!/usr/bin/env node
// `pnpm check:pr`: the review gates of a pull request, run in order, every one reported even
// when an earlier one fails, so one run shows everything to fix.
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { checkBreakingChanges } from './breaking-change-check.mjs';
import { checkChangesetCoverage } from './changeset-coverage-check.mjs';
import { checkGeneratedCode } from './generated-code-check.mjs';
import { checkSpecLint } from './spec-lint-check.mjs';
import { formatReport } from './report.mjs';

const root = process.env.CHECK_PR_ROOT ?? repoRoot;
/** @type {[string, () => Promise<import('./spec-lint-check.mjs').CheckResult>][]} */
const gates = [
  ['spec lint', () => checkSpecLint({ root })],
  // Generating builds @capi/specs first (turbo: gen depends on ^build), which also writes
  // the bundled specs/dist/*.json that the breaking-change gate compares.
  ['generated code up to date', () => checkGeneratedCode({ root })],
  ['breaking changes have a major changeset', () => checkBreakingChanges({ root })],
  ['changeset for each changed package', () => checkChangesetCoverage({ root })],
];

const results = [];
for (const [name, gate] of gates) {
  const started = Date.now();
  try {
    results.push({ ...(await gate()), seconds: (Date.now() - started) / 1000 });
  } catch (error) {
    results.push({ name, ok: false, summary: /** @type {Error} */ (error).message, details: [], seconds: (Date.now() - started) / 1000 });
  }
}
process.stdout.write(formatReport(results));
process.exitCode = results.every((result) => result.ok) ? 0 : 1;
