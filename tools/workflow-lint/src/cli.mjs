#!/usr/bin/env node
// `pnpm lint:workflows`: every workflow in .github/workflows and CODEOWNERS, one line per
// problem; exit 1 when there is any.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeownersProblems, lintWorkflowsIn } from './lint-workflows.mjs';

const root = process.env.WORKFLOW_LINT_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const workflows = lintWorkflowsIn(root);
const owners = codeownersProblems(root);
for (const { file, problems } of workflows) {
  console.log(`${problems.length === 0 ? '✔' : '✖'} ${file}${problems.length === 0 ? '' : `: ${problems.length} problem(s)`}`);
  for (const problem of problems) console.log(`    ${problem}`);
}
console.log(`${owners.length === 0 ? '✔' : '✖'} .github/CODEOWNERS${owners.length === 0 ? ': specs/ has an owner' : ''}`);
for (const problem of owners) console.log(`    ${problem}`);
process.exitCode = workflows.some((workflow) => workflow.problems.length > 0) || owners.length > 0 ? 1 : 0;
