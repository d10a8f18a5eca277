// Gate 3: the sandbox serves what the specs define. A new operation, a newly documented status
// or a new event kind otherwise passed every other gate while @capi/sandbox could not answer or
// send it, and only `pnpm test` noticed. This runs the sandbox's "spec coverage:" tests (a
// scenario for every operation and status of specs/dist/openapi.json, and every event kind of
// specs/dist/asyncapi.json sent with data its schema accepts): seconds, after the packages the
// sandbox imports are built (turbo: cached when nothing changed).
import { runCommand } from './command.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

/** The sandbox's "spec coverage:" tests, once what the sandbox imports is built. */
export const SANDBOX_COVERAGE_TESTS = 'pnpm --filter @capi/sandbox exec vitest run test/conformance.test.ts test/spec-coverage.test.ts --testNamePattern "spec coverage:"';

/** Builds what the sandbox imports (cached when current), then runs {@link SANDBOX_COVERAGE_TESTS}. */
export const SANDBOX_COVERAGE_COMMAND = `pnpm turbo run build --output-logs=errors-only --filter=@capi/sandbox^... && ${SANDBOX_COVERAGE_TESTS}`;

// vitest colours its output when it can; the report is read as plain text.
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * Runs the sandbox's spec-coverage tests.
 * @param {{ root: string, command?: string, env?: NodeJS.ProcessEnv }} options `command` defaults to {@link SANDBOX_COVERAGE_COMMAND}
 * @returns {Promise<CheckResult>}
 */
export async function checkSandboxCoverage({ root, command = SANDBOX_COVERAGE_COMMAND, env = process.env }) {
  const name = 'the sandbox serves the specs';
  const { code, output } = await runCommand(command, { cwd: root, env });
  if (code === 0) return { name, ok: true, summary: 'every operation, documented status and event kind of the specs has its sandbox behaviour', details: [] };
  return {
    name,
    ok: false,
    summary:
      `the sandbox cannot serve everything the specs define (exit ${code}): give @capi/sandbox each missing operation and status (a route, and a scenario in test/conformance.test.ts) ` +
      'and each missing event kind (SANDBOX_EVENT_TYPES and sampleEventData in src/webhooks/sample-event-data.ts), then run `pnpm --filter @capi/sandbox test`',
    details: failures(output.replace(ANSI, '')),
  };
}

/**
 * vitest's failure section (its skipped tests listed before it are noise here), else the last
 * 60 lines (a build that failed, say).
 * @param {string} output
 */
function failures(output) {
  const lines = output.trim().split('\n');
  const start = lines.findIndex((line) => /⎯ Failed Tests \d+ ⎯/.test(line));
  return (start === -1 ? lines.slice(-60) : lines.slice(start)).filter((line) => line.trim() !== '');
}
