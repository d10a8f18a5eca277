// One shape for what every lint step finds, so the report prints them all the same way.

/**
 * @typedef {object} LintProblem
 * @property {string} tool      which step found it (spectral, redocly, asyncapi-parser, examples)
 * @property {string} rule      the rule or diagnostic code
 * @property {'error'|'warning'} severity
 * @property {string} file      path relative to specs/
 * @property {number} line      1-based, 0 when unknown
 * @property {number} column    1-based, 0 when unknown
 * @property {string} message
 */

/** `file:line:column severity tool/rule message`, the format editors and CI annotate. */
export function formatProblem(problem) {
  return `${problem.file}:${problem.line}:${problem.column} ${problem.severity} ${problem.tool}/${problem.rule} ${problem.message}`;
}
