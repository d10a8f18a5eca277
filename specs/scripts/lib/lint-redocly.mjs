// Redocly lint (config: specs/redocly.yaml) over the OpenAPI spec and its bundle.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const redoclyBin = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * Runs `redocly lint --format=json` on each of `files` (relative to `specsDir`), in child
 * processes that run while the caller does other checks; resolves to LintProblems.
 */
export async function lintWithRedocly(specsDir, files) {
  // One run per file: with several files Redocly prints several JSON reports back to back.
  const perFile = await Promise.all(files.map((file) => lintOneFile(specsDir, file)));
  return perFile.flat();
}

function runRedocly(specsDir, file) {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [redoclyBin, 'lint', file, '--format=json', '--config', 'redocly.yaml'],
      { cwd: specsDir, encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 64 * 1024 * 1024 },
      // Redocly exits 1 when it finds problems: the report on stdout is what counts.
      (error, stdout, stderr) => resolvePromise({ stdout, stderr, status: error ? error.code : 0 }),
    );
  });
}

async function lintOneFile(specsDir, file) {
  const files = [file];
  const result = await runRedocly(specsDir, file);
  const start = result.stdout.indexOf('{');
  if (start < 0) {
    return [{ tool: 'redocly', rule: 'run', severity: 'error', file: files.join(' '), line: 0, column: 0, message: `redocly lint did not report: ${result.stderr.trim() || `exit ${result.status}`}` }];
  }
  const report = JSON.parse(result.stdout.slice(start));
  return report.problems.map((problem) => {
    const location = problem.location?.[0] ?? {};
    const source = location.source?.ref ?? files[0];
    return {
      tool: 'redocly',
      rule: problem.ruleId,
      severity: problem.severity === 'error' ? 'error' : 'warning',
      file: relative(specsDir, resolve(specsDir, source)),
      line: location.start?.line ?? 0,
      column: location.start?.col ?? 0,
      message: `${problem.message}${location.pointer ? ` (at ${location.pointer})` : ''}`,
    };
  });
}
