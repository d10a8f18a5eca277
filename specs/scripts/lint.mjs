// `pnpm --filter @capi/specs lint` (root: `pnpm lint:specs`): every check of the specs.
//   Spectral    spectral:oas, spectral:asyncapi and the project's rules (.spectral.yaml)
//   Redocly     recommended rules (redocly.yaml), on openapi.yaml and on its bundle
//   AsyncAPI    @asyncapi/parser, on asyncapi.yaml and on its bundle
//   examples    ajv (2020-12): every example valid against its schema, none missing; the
//               webhook examples signed with examples/webhook-signing-key.pem (lib/signed-examples.mjs)
// Prints each problem as `file:line:column severity tool/rule message`; any error or
// warning fails the run, since main must stay at zero of both.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSpecOutputs, writeSpecOutputs } from './bundle.mjs';
import { lintWithAsyncApiParser } from './lib/lint-asyncapi-parser.mjs';
import { lintExamples } from './lib/lint-examples.mjs';
import { lintWithRedocly } from './lib/lint-redocly.mjs';
import { lintSignedExamples } from './lib/signed-examples.mjs';
import { lintWithSpectral, loadSpectralRuleset } from './lib/lint-spectral.mjs';
import { formatProblem } from './lib/problem.mjs';

const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs every check over the specs in `dir`; returns the LintProblems found. */
export async function lintSpecs(dir = specsDir) {
  let outputs;
  try {
    outputs = await buildSpecOutputs(dir);
  } catch (error) {
    return [{ tool: 'bundle', rule: 'bundle', severity: 'error', file: '.', line: 0, column: 0, message: error.message }];
  }
  // The bundle is linted too (it is what the generators read), from a scratch directory so
  // that linting never rewrites specs/dist under someone's running build.
  const scratch = mkdtempSync(join(tmpdir(), 'capi-specs-lint-'));
  try {
    writeSpecOutputs(scratch, outputs);
    const asBundle = (problem) => (problem.file.startsWith('..') ? { ...problem, file: join('dist', relative(scratch, join(dir, problem.file))) } : problem);
    const schemaFiles = readdirSync(join(dir, 'schemas')).filter((name) => name.endsWith('.yaml')).sort().map((name) => join(dir, 'schemas', name));
    const parse = (file) => JSON.parse(outputs.get(file));
    const standaloneSchemas = new Map([...outputs.keys()].filter((file) => file.startsWith('schemas/')).map((file) => [file.slice('schemas/'.length, -'.json'.length), parse(file)]));
    const documents = { openapi: parse('openapi.json'), asyncapi: parse('asyncapi.json'), standaloneSchemas };
    const specRuleset = await loadSpectralRuleset(join(dir, '.spectral.yaml'));
    const schemaRuleset = await loadSpectralRuleset(join(dir, 'spectral', 'schema-rules.yaml'));
    // Redocly runs in child processes, in parallel with the in-process checks.
    const redocly = lintWithRedocly(dir, ['openapi.yaml', relative(dir, join(scratch, 'openapi.json'))]);
    return [
      ...(await lintWithSpectral(dir, specRuleset, [join(dir, 'openapi.yaml'), join(dir, 'asyncapi.yaml')])),
      ...(await lintWithSpectral(dir, schemaRuleset, schemaFiles)),
      ...(await redocly).map(asBundle),
      ...(await lintWithAsyncApiParser(dir, join(dir, 'asyncapi.yaml'))),
      ...(await lintWithAsyncApiParser(dir, join(scratch, 'asyncapi.json'))).map(asBundle),
      ...lintExamples(dir, documents),
      ...lintSignedExamples(dir, documents),
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// `node scripts/lint.mjs [<specs dir>]`: the default is this package's specs.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const problems = await lintSpecs(process.argv[2] ?? specsDir);
    for (const problem of problems) console.log(formatProblem(problem));
    const errors = problems.filter((problem) => problem.severity === 'error').length;
    console.log(`specs lint: ${errors} errors, ${problems.length - errors} warnings`);
    if (problems.length > 0) process.exitCode = 1;
  } catch (error) {
    console.error(`specs lint: could not run: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  }
}
