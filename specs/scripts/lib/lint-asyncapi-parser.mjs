// @asyncapi/parser: the AsyncAPI document must parse with no error (or warning) diagnostics.
import { Parser, fromFile } from '@asyncapi/parser';
import { relative } from 'node:path';

// Spectral's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint.
const SEVERITY = { 0: 'error', 1: 'warning' };

/** Parses `file`; returns its error and warning diagnostics as LintProblems. */
export async function lintWithAsyncApiParser(specsDir, file, { ignoredCodes = [] } = {}) {
  const parser = new Parser();
  const { document, diagnostics } = await fromFile(parser, file).parse();
  const problems = diagnostics
    .filter((diagnostic) => SEVERITY[diagnostic.severity] && !ignoredCodes.includes(diagnostic.code))
    .map((diagnostic) => ({
      tool: 'asyncapi-parser',
      rule: String(diagnostic.code),
      severity: SEVERITY[diagnostic.severity],
      file: relative(specsDir, diagnostic.source ?? file) || relative(specsDir, file),
      line: (diagnostic.range?.start?.line ?? -1) + 1,
      column: (diagnostic.range?.start?.character ?? -1) + 1,
      message: `${diagnostic.message}${diagnostic.path?.length ? ` (at ${diagnostic.path.join('.')})` : ''}`,
    }));
  if (!document && problems.length === 0) {
    problems.push({ tool: 'asyncapi-parser', rule: 'parse', severity: 'error', file: relative(specsDir, file), line: 0, column: 0, message: 'the document did not parse' });
  }
  return problems;
}
