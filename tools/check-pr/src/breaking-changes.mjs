// Classifies the differences between the released spec and the spec of the change with
// `redocly diff` (Redocly CLI, npm-only), which rates each change by the semver bump it needs
// for OpenAPI and AsyncAPI alike: removed operations and properties, newly required request
// fields, narrowed request constraints, removed or widened response values are "major".
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const redoclyBin = path.join(packageDir, 'node_modules', '.bin', 'redocly');

/**
 * @typedef {object} SpecChange
 * @property {'major' | 'minor' | 'patch'} impact
 * @property {'added' | 'removed' | 'modified'} kind
 * @property {string} where   readable location, e.g. "PUT /user-api/user/account/limit requestBody/.../amount"
 * @property {string[]} messages what changed, one line per rule
 * @property {string[]} rules  the redocly rule ids
 */

/**
 * Compares two API descriptions (OpenAPI or AsyncAPI, YAML or JSON).
 * @param {string} baseFile the released spec
 * @param {string} revisionFile the spec of the change
 * @returns {Promise<{ bump: string, changes: SpecChange[] }>}
 */
export async function diffSpecs(baseFile, revisionFile) {
  const outDir = mkdtempSync(path.join(tmpdir(), 'capi-spec-diff-'));
  const reportFile = path.join(outDir, 'diff.json');
  try {
    await run(redoclyBin, ['diff', baseFile, revisionFile, '--format', 'json', '--fail-on', 'none', '-o', reportFile], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    return { bump: report.bump ?? 'none', changes: (report.changes ?? []).map(toSpecChange) };
  } catch (error) {
    const detail = /** @type {any} */ (error).stderr || /** @type {Error} */ (error).message;
    throw new Error(`redocly diff could not compare ${baseFile} with ${revisionFile}: ${String(detail).trim()}`);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** @returns {SpecChange} */
function toSpecChange(change) {
  const verdicts = change.verdicts ?? [];
  return {
    impact: change.impact,
    kind: change.kind,
    where: decodePointer(change.path) + (change.property ? ` · ${change.property}` : ''),
    messages: verdicts.map((verdict) => verdict.message),
    rules: verdicts.map((verdict) => verdict.ruleId),
  };
}

function decodePointer(pointer = '') {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join(' › ');
}
