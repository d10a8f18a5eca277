// The readable summary a reviewer sees at the end of `pnpm check:pr`.

/**
 * @param {(import('./spec-lint-check.mjs').CheckResult & { seconds?: number })[]} results
 * @returns {string}
 */
export function formatReport(results) {
  const lines = ['', 'check:pr'];
  for (const result of results) {
    const time = result.seconds === undefined ? '' : ` (${result.seconds.toFixed(1)} s)`;
    lines.push(`${result.ok ? '✔' : '✖'} ${result.name}${time}: ${result.summary}`);
    for (const detail of result.details) lines.push(`  ${detail}`);
  }
  const failed = results.filter((result) => !result.ok).length;
  lines.push('', failed === 0 ? 'check:pr passed' : `check:pr failed: ${failed} of ${results.length} gate(s)`, '');
  return lines.join('\n');
}

/** The first line of the Markdown report: lets a workflow find and update its own comment. */
export const markdownMarker = '<!-- capi-check-pr -->';

/** A table cell: no line breaks, no unescaped pipes. */
function cell(text) {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

/**
 * The same report as Markdown, for a CI job summary or a pull-request comment: a verdict, a
 * table of the gates, and the details of each failed gate (or a passed gate that has notes)
 * in a fenced block.
 * @param {(import('./spec-lint-check.mjs').CheckResult & { seconds?: number })[]} results
 * @returns {string}
 */
export function formatMarkdownReport(results) {
  const failed = results.filter((result) => !result.ok).length;
  const lines = [
    markdownMarker,
    `## check:pr ${failed === 0 ? 'passed' : `failed: ${failed} of ${results.length} gate(s)`}`,
    '',
    '| | gate | result | time |',
    '| --- | --- | --- | --- |',
    ...results.map((result) => `| ${result.ok ? '✅' : '❌'} | ${cell(result.name)} | ${cell(result.summary)} | ${result.seconds === undefined ? '' : `${result.seconds.toFixed(1)} s`} |`),
  ];
  for (const result of results.filter((entry) => entry.details.length > 0)) {
    // A fence longer than any backtick run inside, so no detail line can close it.
    const longestRun = Math.max(2, ...result.details.map((line) => Math.max(0, ...(line.match(/`+/g) ?? []).map((run) => run.length))));
    const fence = '`'.repeat(longestRun + 1);
    lines.push('', `### ${result.ok ? '✅' : '❌'} ${result.name}`, '', `${fence}text`, ...result.details, fence);
  }
  lines.push('', failed === 0 ? 'Every gate passed.' : 'Run `pnpm check:pr` locally to see the same report; each failed gate says what to change.', '');
  return lines.join('\n');
}
