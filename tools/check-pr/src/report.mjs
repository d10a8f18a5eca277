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
