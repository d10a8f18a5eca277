// `pnpm --filter @capi/specs lint` (root: `pnpm lint:specs`): every check of the specs.
// Prints each problem as `file:line:column severity tool/rule message`; any error or
// warning fails the run, since main must stay at zero of both.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSpecOutputs, writeSpecOutputs } from './bundle.mjs';
import { lintWithAsyncApiParser } from './lib/lint-asyncapi-parser.mjs';
import { lintWithRedocly } from './lib/lint-redocly.mjs';
import { formatProblem } from './lib/problem.mjs';

const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs every check over the specs in `dir`; returns the LintProblems found. */
export async function lintSpecs(dir = specsDir) {
  // The bundle is linted too: it is what the generators read.
  writeSpecOutputs(join(dir, 'dist'), buildSpecOutputs(dir));
  return [
    ...lintWithRedocly(dir, ['openapi.yaml', 'dist/openapi.json']),
    ...(await lintWithAsyncApiParser(dir, join(dir, 'asyncapi.yaml'))),
    ...(await lintWithAsyncApiParser(dir, join(dir, 'dist', 'asyncapi.json'))),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const problems = await lintSpecs();
    for (const problem of problems) console.log(formatProblem(problem));
    const errors = problems.filter((problem) => problem.severity === 'error').length;
    console.log(`specs lint: ${errors} errors, ${problems.length - errors} warnings`);
    if (problems.length > 0) process.exitCode = 1;
  } catch (error) {
    console.error(`specs lint: could not run: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  }
}
