// Gate 3: a breaking change of a spec against the last released spec (specs/released/) ships
// only as a major release of every package generated from or implementing that spec: a major
// changeset in the pull request, or one already pending on the base (the next release applies
// both), as changesets' own release plan says.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { publishablePackages } from '@capi/release-tools/workspace-packages';
import { diffSpecs } from './breaking-changes.mjs';
import { plannedBumps } from './changesets.mjs';
import { bundledSpecFiles, specConsumers } from './spec-consumers.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

/**
 * Compares specs/dist/<spec>.json with specs/released/<spec>.json for both specs, and checks
 * that the packages a breaking change breaks get a major release.
 * @param {{ root: string, releasedDir?: string, currentDir?: string }} options
 * @returns {Promise<CheckResult>}
 */
export async function checkBreakingChanges({ root, releasedDir = path.join(root, 'specs/released'), currentDir = path.join(root, 'specs/dist') }) {
  const name = 'breaking changes have a major changeset';
  const bumps = await plannedBumps(root);
  const workspace = new Set(publishablePackages(root).map((pkg) => pkg.name));
  const details = [];
  const notes = [];
  let ok = true;

  for (const [spec, file] of Object.entries(bundledSpecFiles)) {
    const released = path.join(releasedDir, file);
    const current = path.join(currentDir, file);
    if (!existsSync(current)) {
      ok = false;
      details.push(`${spec}: ${path.relative(root, current)} is missing: run \`pnpm --filter @capi/specs build\` first.`);
      continue;
    }
    if (!existsSync(released)) {
      notes.push(`${spec}: no released baseline (${path.relative(root, released)}), nothing to compare`);
      continue;
    }
    // The AsyncAPI packages receive the events: rate the changes for the receiving side.
    const { changes } = await diffSpecs(released, current, { asReceiver: spec === 'asyncapi' });
    const breaking = changes.filter((change) => change.impact === 'major');
    if (breaking.length === 0) {
      notes.push(`${spec}: ${changes.length} change(s) since the release, none breaking`);
      continue;
    }
    const consumers = specConsumers[/** @type {'openapi'|'asyncapi'} */ (spec)].filter((pkg) => workspace.has(pkg));
    const missing = consumers.filter((pkg) => bumps.get(pkg) !== 'major');
    const planned = missing.map((pkg) => `${pkg} (${bumps.get(pkg) ?? 'no release'})`).join(', ');
    const listing = breaking.map((change) => `    ✖ ${change.kind} ${change.where}\n${change.messages.map((m) => `        ${m}`).join('\n')}`);
    if (missing.length === 0) {
      notes.push(`${spec}: ${breaking.length} breaking change(s), released as major for ${consumers.join(', ')}`);
      continue;
    }
    ok = false;
    details.push(
      `${spec}: ${breaking.length} breaking change(s) against ${path.relative(root, released)}:`,
      ...listing,
      `  These break users of ${missing.join(', ')}, but the next release, planned from every pending`,
      `  changeset (this pull request's and those already on the base), is not major for them: ${planned}.`,
      `  Either make the change compatible (optional fields, wider inputs, new operations), or add`,
      `  .changeset/<name>.md with:`,
      '    ---',
      ...missing.map((pkg) => `    "${pkg}": major`),
      '    ---',
      '    What changed and what users must do.',
    );
  }
  return {
    name,
    ok,
    summary: ok ? notes.join('; ') : 'a spec has breaking changes without a major changeset for the packages they break',
    details,
  };
}
