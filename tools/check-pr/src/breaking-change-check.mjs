// Gate 3: a breaking change of a spec against the last released spec (specs/released/) ships
// only as a major release of every package generated from or implementing that spec: a major
// changeset in the pull request, or one already pending on the base (the next release applies
// both), as changesets' own release plan says. And a breaking change that the pull request
// itself makes (its spec against the base's) needs the pull request's OWN changeset to be major
// for those packages, even when a major is already pending: otherwise the release is major but
// the change is listed under "Patch Changes" or "Minor Changes" of the changelog, where no user
// looks for what breaks them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { publishablePackages } from '@capi/release-tools/workspace-packages';
import { bundleBaseSpecs, changesSpecSources } from './base-spec-bundles.mjs';
import { changedFiles, resolveBaseRef } from './base-ref.mjs';
import { diffSpecs } from './breaking-changes.mjs';
import { plannedBumps, readPullRequestChangesets } from './changesets.mjs';
import { bundledSpecFiles, specConsumers } from './spec-consumers.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

/**
 * Compares specs/dist/<spec>.json with specs/released/<spec>.json for both specs, and checks
 * that the packages a breaking change breaks get a major release; then, when the pull request
 * changes a spec source, compares it with the base's spec (bundled from git), and checks that
 * the pull request's own changesets are major for the packages its breaks break.
 * @param {{ root: string, releasedDir?: string, currentDir?: string, env?: NodeJS.ProcessEnv }} options
 * @returns {Promise<CheckResult>}
 */
export async function checkBreakingChanges({ root, releasedDir = path.join(root, 'specs/released'), currentDir = path.join(root, 'specs/dist'), env = process.env }) {
  const name = 'breaking changes have a major changeset';
  const bumps = await plannedBumps(root);
  const pullRequest = await pullRequestSpecs(root, env);
  try {
    return await check();
  } finally {
    pullRequest?.remove();
  }

  async function check() {
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
      if (missing.length === 0) notes.push(`${spec}: ${breaking.length} breaking change(s), released as major for ${consumers.join(', ')}`);
      // Both checks at once, so that one run names every package the changeset must make major.
      const own = await ownBreaks(spec, consumers, current, planned);
      if (missing.length === 0) {
        if (own !== undefined) {
          ok = false;
          details.push(...own);
        }
        continue;
      }
      ok = false;
      if (own !== undefined) {
        // The pull request makes (some of) these breaks: its own changeset must be major for
        // every consumer, which covers the release plan too.
        details.push(`${spec}: ${breaking.length} breaking change(s) against ${path.relative(root, released)}:`, ...listing, ...own);
        continue;
      }
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

    /**
     * The report lines when the pull request itself breaks `spec` (its spec against the base's)
     * and its own changesets are not major for every consumer; `undefined` when all is well.
     * @param {string} spec
     * @param {string[]} consumers
     * @param {string} current
     * @param {string} notMajorInPlan the consumers the release plan is not major for, described ('' when none)
     */
    async function ownBreaks(spec, consumers, current, notMajorInPlan) {
      const before = pullRequest && path.join(pullRequest.dir, bundledSpecFiles[/** @type {'openapi'|'asyncapi'} */ (spec)]);
      if (before === undefined || !existsSync(before)) return undefined;
      const { changes } = await diffSpecs(before, current, { asReceiver: spec === 'asyncapi' });
      const made = changes.filter((change) => change.impact === 'major');
      if (made.length === 0) {
        notes.push(`${spec}: none of them made by this pull request`);
        return undefined;
      }
      const missingOwn = consumers.filter((pkg) => pullRequest.ownBumps.get(pkg) !== 'major');
      if (missingOwn.length === 0) {
        notes.push(`${spec}: ${made.length} of them made by this pull request, whose changeset says major`);
        return undefined;
      }
      return [
        `${spec}: this pull request makes ${made.length} breaking change(s) (its spec against the base's, ${pullRequest.against}):`,
        ...made.map((change) => `    ✖ ${change.kind} ${change.where}\n${change.messages.map((m) => `        ${m}`).join('\n')}`),
        notMajorInPlan === ''
          ? `  The next release is major for ${consumers.join(', ')} already (changesets pending on the base),`
          : `  These break users of ${consumers.join(', ')}; the next release, planned from every pending changeset, is not major for them: ${notMajorInPlan},`,
        `  ${notMajorInPlan === '' ? 'but ' : 'and '}this pull request's own changesets are not major for ${missingOwn.map((pkg) => `${pkg} (${pullRequest.ownBumps.get(pkg) ?? 'not named'})`).join(', ')}:`,
        `  the changelog would list this break under a patch or minor change, where users do not look for`,
        `  what breaks them. Make the change compatible, or say major in this pull request's changeset:`,
        '    ---',
        ...missingOwn.map((pkg) => `    "${pkg}": major`),
        '    ---',
        '    What changed and what users must do.',
      ];
    }
  }
}

/**
 * The base's specs, bundled, when the pull request changes a spec source, with the bumps the
 * pull request's own changesets give: `undefined` when it changes no spec source or the base has
 * none.
 * @param {string} root
 * @param {NodeJS.ProcessEnv} env
 */
async function pullRequestSpecs(root, env) {
  let base;
  try {
    base = resolveBaseRef(root, env);
  } catch (error) {
    // No commit to compare with (a folder that is not a repository yet): the released baseline
    // is all there is. A CHECK_PR_BASE that is not a commit is the caller's mistake: say so.
    if (env.CHECK_PR_BASE) throw error;
    return undefined;
  }
  if (!changesSpecSources(changedFiles(root, base.commit))) return undefined;
  const bundled = await bundleBaseSpecs(root, base.commit);
  if (bundled === undefined) return undefined;
  const { added } = await readPullRequestChangesets(root, base.commit);
  const rank = { none: 0, patch: 1, minor: 2, major: 3 };
  /** @type {Map<string, import('./changesets.mjs').Bump>} */
  const ownBumps = new Map();
  for (const release of added.flatMap((changeset) => changeset.releases)) {
    if (rank[release.type] > rank[ownBumps.get(release.name) ?? 'none']) ownBumps.set(release.name, release.type);
  }
  return { ...bundled, ownBumps, against: `${base.ref}, ${base.commit.slice(0, 10)}` };
}
