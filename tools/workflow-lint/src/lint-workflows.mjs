// Lints the forge's workflow files before the forge ever runs them: @action-validator/core
// (the workflow JSON schema of SchemaStore plus job references, compiled to WebAssembly, so it
// runs offline from the npm package), a YAML parse that refuses what the forge refuses and
// action-validator lets through (a key defined twice in one map: the forge rejects the whole
// workflow), and two checks the schema cannot express. Also checks that
// CODEOWNERS gives the specs an owner, so a spec change always asks its owners for review.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { validateWorkflow } from '@action-validator/core';
import { parseDocument } from 'yaml';

/**
 * The readable leaves of action-validator's error tree: one line per concrete problem
 * ("/jobs/test/steps/0: Additional property 'usess' is not allowed"). Where no alternative of
 * a "one of" matched, only the alternative that was meant is reported: of those whose type
 * fits the value, the one with the fewest problems.
 * @param {any[]} errors
 * @returns {string[]}
 */
function describeErrors(errors) {
  const lines = [];
  for (const error of errors) {
    if (Array.isArray(error.states) && error.states.length > 0) {
      const alternatives = error.states.map((state) => ({ state, lines: describeErrors(state.errors ?? []) }));
      const typeFits = alternatives.filter(({ state }) => !(state.errors ?? []).some((inner) => inner.code === 'wrong_type' && inner.path === error.path));
      const candidates = typeFits.length > 0 ? typeFits : alternatives;
      lines.push(...candidates.reduce((best, next) => (next.lines.length < best.lines.length ? next : best)).lines);
    } else {
      lines.push(`${error.path || '/'}: ${error.detail ?? error.title}`);
    }
  }
  return [...new Set(lines)];
}

/**
 * Problems of one workflow file, one line each.
 * @param {string} text the workflow's YAML
 * @returns {string[]}
 */
export function lintWorkflow(text) {
  let result;
  try {
    result = validateWorkflow(text);
  } catch (error) {
    return [`not a readable workflow: ${/** @type {Error} */ (error).message}`];
  }
  const problems = describeErrors(result.errors ?? []);
  // action-validator reads a map with a repeated key as if the last one were the only one.
  const lineOf = (offset) => text.slice(0, offset).split('\n').length;
  for (const error of parseDocument(text, { uniqueKeys: true, prettyErrors: false }).errors) {
    problems.push(`line ${lineOf(error.pos[0])}: ${error.code === 'DUPLICATE_KEY' ? 'a key is defined twice in the same map (the forge rejects the workflow): keep one' : error.message}`);
  }
  text.split('\n').forEach((line, index) => {
    const opened = line.split('${{').length - 1;
    const closed = line.split('}}').length - 1;
    if (opened !== closed) problems.push(`line ${index + 1}: an expression "\${{ ... }}" is not closed on its line: ${line.trim()}`);
    const uses = /^\s*(?:-\s*)?uses:\s*["']?([^"'\s#]+)/.exec(line);
    if (uses && !uses[1].startsWith('./') && !uses[1].startsWith('docker://') && !/@[\w.\-/]+$/.test(uses[1])) {
      problems.push(`line ${index + 1}: "uses: ${uses[1]}" names no version: pin it (owner/action@v4 or a commit)`);
    }
  });
  return problems;
}

/**
 * Every workflow under `<root>/.github/workflows`, linted.
 * @param {string} root the repository root
 * @returns {{ file: string, problems: string[] }[]}
 */
export function lintWorkflowsIn(root) {
  const dir = path.join(root, '.github/workflows');
  if (!existsSync(dir)) return [{ file: '.github/workflows', problems: ['no workflows: the folder is missing'] }];
  return readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .map((file) => ({ file: `.github/workflows/${file}`, problems: lintWorkflow(readFileSync(path.join(dir, file), 'utf8')) }));
}

/**
 * Problems of `.github/CODEOWNERS`: it must give `specs/` an owner.
 * @param {string} root
 * @returns {string[]}
 */
export function codeownersProblems(root) {
  const file = path.join(root, '.github/CODEOWNERS');
  if (!existsSync(file)) return ['.github/CODEOWNERS is missing: add "/specs/ @<team>" so spec changes ask the spec owners for review'];
  const owned = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .some((line) => {
      const [pattern, ...owners] = line.split(/\s+/);
      return /^\/?specs\/?(\*\*)?$/.test(pattern) && owners.some((owner) => /^@[\w.-]+(\/[\w.-]+)?$|^[^@\s]+@[^@\s]+$/.test(owner));
    });
  return owned ? [] : ['.github/CODEOWNERS gives specs/ no owner: add a line "/specs/ @<org>/<team>"'];
}
