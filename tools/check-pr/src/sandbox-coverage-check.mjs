// Gate 3: the sandbox serves what the specs define. A new operation, a newly documented status
// or a new event kind otherwise passed every other gate while @capi/sandbox could not answer or
// send it, and only `pnpm test` noticed. This runs the sandbox's conformance tests (a scenario
// for every operation and status of specs/dist/openapi.json, each answered as its response
// schema says) and its event kinds test (every event kind of specs/dist/asyncapi.json sent with
// data its schema accepts): seconds, after the packages the sandbox imports are built (turbo:
// cached when nothing changed).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCommand } from './command.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

/** Where the gate's tests are, each with at least one test named "spec coverage: ...". */
export const SANDBOX_COVERAGE_FILES = ['test/conformance.test.ts', 'test/spec-coverage.test.ts'];
const BUILD = 'pnpm turbo run build --output-logs=errors-only --filter=@capi/sandbox^...';

// vitest colours its output when it can; the report is read as plain text.
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * Builds what the sandbox imports (cached when current; `build: false` leaves that to the
 * caller, as turbo does before the tests of this package), then runs the sandbox's conformance
 * and event kinds tests, and checks from vitest's JSON report that the "spec coverage:" tests
 * ran in both files: renamed, they would no longer say that every operation has a scenario.
 * @param {{ root: string, build?: boolean, files?: string[], env?: NodeJS.ProcessEnv }} options `files`: the sandbox's test files to run (default {@link SANDBOX_COVERAGE_FILES})
 * @returns {Promise<CheckResult>}
 */
export async function checkSandboxCoverage({ root, build = true, files = SANDBOX_COVERAGE_FILES, env = process.env }) {
  const name = 'the sandbox serves the specs';
  const reportDir = mkdtempSync(path.join(tmpdir(), 'capi-sandbox-gate-'));
  const reportFile = path.join(reportDir, 'report.json');
  try {
    // Every test of these files, not only the "spec coverage:" ones: those say that each
    // operation and status has a scenario, the scenarios that the sandbox answers it.
    const tests = `pnpm --filter @capi/sandbox exec vitest run ${files.join(' ')} --reporter=default --reporter=json --outputFile.json=${JSON.stringify(reportFile)}`;
    const { code, output } = await runCommand(build ? `${BUILD} && ${tests}` : tests, { cwd: root, env });
    const ran = readRanTests(reportFile);
    if (ran === undefined) {
      return { name, ok: false, summary: `the sandbox's tests did not run (exit ${code}): the build of the packages it imports, or vitest, failed; see below`, details: lastLines(output) };
    }
    if (code !== 0) {
      return {
        name,
        ok: false,
        summary:
          `the sandbox cannot serve everything the specs define (exit ${code}): give @capi/sandbox each missing operation and status (a route, and a scenario in test/conformance.test.ts) ` +
          'and each missing event kind (SANDBOX_EVENT_TYPES and sampleEventData in src/webhooks/sample-event-data.ts) or User field (its default in src/users/complete-user.ts), then run `pnpm --filter @capi/sandbox test`',
        details: failures(output.replace(ANSI, '')),
      };
    }
    const missing = files.filter((file) => !ran.some((test) => test.file.endsWith(file) && test.title.startsWith('spec coverage:') && test.status === 'passed'));
    if (missing.length > 0) {
      return { name, ok: false, summary: `no test named "spec coverage: ..." ran in ${missing.join(', ')} of @capi/sandbox: the gate runs those tests, so keep that name on them (renamed or removed, the gate would check nothing)`, details: [] };
    }
    return { name, ok: true, summary: `every operation, documented status and event kind of the specs has its sandbox behaviour (${ran.length} tests)`, details: [] };
  } finally {
    rmSync(reportDir, { recursive: true, force: true });
  }
}

/**
 * The tests vitest's JSON report lists, or `undefined` when it wrote none.
 * @param {string} file
 * @returns {{ file: string, title: string, status: string }[] | undefined}
 */
function readRanTests(file) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  return (report.testResults ?? []).flatMap((/** @type {any} */ result) =>
    (result.assertionResults ?? []).map((/** @type {any} */ test) => ({ file: String(result.name), title: String(test.title), status: String(test.status) })));
}

/** @param {string} output */
function lastLines(output) {
  return output.replace(ANSI, '').trim().split('\n').filter((line) => line.trim() !== '').slice(-40);
}

/**
 * vitest's failure section (its skipped tests listed before it are noise here), else the last
 * 60 lines.
 * @param {string} output
 */
function failures(output) {
  const lines = output.trim().split('\n');
  const start = lines.findIndex((line) => /⎯ Failed Tests \d+ ⎯/.test(line));
  // Not pnpm's own lines after a failed exec (a bare "undefined", the folder, ERR_PNPM_...),
  // nor where the JSON report went (a temporary file, gone by now).
  const noise = /^\s*(undefined|JSON report written to .*|\S+\/packages\/sandbox:|ERR_PNPM_\w+.*)$/;
  return (start === -1 ? lines.slice(-60) : lines.slice(start)).filter((line) => line.trim() !== '' && !noise.test(line));
}
