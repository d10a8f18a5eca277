// Classifies the differences between the released spec and the spec of the change with
// `redocly diff` (Redocly CLI, npm-only), which rates each change by the semver bump it needs
// for OpenAPI and AsyncAPI alike: removed operations and properties, newly required request
// fields, narrowed request constraints, removed or widened response values are "major".
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
 * @param {{ asReceiver?: boolean }} [options] `asReceiver`: rate an AsyncAPI document's messages
 *   for the application that receives them (both files must be JSON), see {@link swapOperationActions}
 * @returns {Promise<{ bump: string, changes: SpecChange[] }>}
 */
export async function diffSpecs(baseFile, revisionFile, { asReceiver = false } = {}) {
  const outDir = mkdtempSync(path.join(tmpdir(), 'capi-spec-diff-'));
  const reportFile = path.join(outDir, 'diff.json');
  try {
    if (asReceiver) {
      baseFile = writeSwapped(baseFile, path.join(outDir, 'base.json'));
      revisionFile = writeSwapped(revisionFile, path.join(outDir, 'revision.json'));
    }
    await run(redoclyBin, ['diff', baseFile, revisionFile, '--format', 'json', '--fail-on', 'none', '-o', reportFile], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    const changes = (report.changes ?? []).map(toSpecChange);
    if (asReceiver) for (const change of changes) rateAddedEventKind(change);
    return { bump: changes.some((change) => change.impact === 'major') ? 'major' : report.bump ?? 'none', changes };
  } catch (error) {
    const detail = /** @type {any} */ (error).stderr || /** @type {Error} */ (error).message;
    throw new Error(`redocly diff could not compare ${baseFile} with ${revisionFile}: ${String(detail).trim()}`);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * redocly diff rates an AsyncAPI message for the other party of the operation: the message of
 * a `receive` operation is an input, like a request body, so a payload field removed, made
 * nullable or no longer required, or an enum that gained a value, is "compatible" (the sender
 * may send less). asyncapi.yaml describes the partner's receiver (`action: receive`), and the
 * packages built on it (types, validator, receiver) read those payloads: to them a message is
 * what a response is to a client. Swapping `send` and `receive` on both sides makes redocly
 * rate it that way (the same changes, seen from the receiving side).
 * @param {any} document a parsed AsyncAPI 3 document
 */
export function swapOperationActions(document) {
  for (const operation of Object.values(document.operations ?? {})) {
    if (operation.action === 'receive') operation.action = 'send';
    else if (operation.action === 'send') operation.action = 'receive';
  }
  return document;
}

function writeSwapped(file, to) {
  writeFileSync(to, JSON.stringify(swapOperationActions(JSON.parse(readFileSync(file, 'utf8')))));
  return to;
}

/**
 * A new event kind (an operation the receiver receives) is `major` for the packages built on
 * the AsyncAPI spec, as an event enum that gains a value is: `WebhookEvent` of
 * @capi/event-types is a closed union, so a new member breaks code that narrows it (an
 * exhaustive switch over `eventType`, `event.data.email` read from any event), and the
 * validator and the receiver hand that union to it. redocly rates an added operation `minor`.
 * @param {SpecChange} change
 */
function rateAddedEventKind(change) {
  if (change.kind !== 'added' || !/^operations › [^›]+$/.test(change.where)) return;
  change.impact = 'major';
  change.messages.push('A new event kind: the WebhookEvent union of @capi/event-types gains a member, which breaks code that narrows it (an exhaustive switch over eventType), as an event enum that gains a value does.');
  change.rules.push('capi/added-event-kind');
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
