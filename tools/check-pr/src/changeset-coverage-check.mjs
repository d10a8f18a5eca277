// Gate 4: every publishable package this pull request touches is named in a changeset the
// pull request adds, so the release notes and versions cannot miss it. Changesets already
// pending on the base describe earlier changes and do not count. An empty changeset
// (`pnpm changeset --empty`) added by the pull request says that its changes need no release.
// Tests, benchmarks, examples and markdown do not reach users through npm and need none; a
// spec source change reaches the packages generated from that spec. A package.json whose only
// change is its "version" (the release commit of `pnpm release:version`) needs none either: the
// changesets it consumed were its release notes.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { publishablePackages } from '@capi/release-tools/workspace-packages';
import { changedFiles, resolveBaseRef } from './base-ref.mjs';
import { readPullRequestChangesets } from './changesets.mjs';
import { bundledSpecFiles, specConsumers } from './spec-consumers.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

const notShipped = [/^test\//, /^tests\//, /^bench\//, /^examples\//, /\.md$/, /(^|\/)[^/]+\.test\.[cm]?[jt]s$/];

/**
 * Whether a file inside a package reaches the package's users.
 * @param {string} fileInPackage path relative to the package folder
 */
export function isShippedFile(fileInPackage) {
  return !notShipped.some((pattern) => pattern.test(fileInPackage));
}

/**
 * Whether `file` (a package's package.json) differs from the base only in its "version": the
 * bump of a release commit, which releases what earlier changesets described.
 * @param {string} root
 * @param {string} baseCommit
 * @param {string} file repository-relative path
 */
export function isVersionBumpOnly(root, baseCommit, file) {
  if (!file.endsWith('/package.json')) return false;
  try {
    const before = JSON.parse(execFileSync('git', ['show', `${baseCommit}:${file}`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const after = JSON.parse(readFileSync(path.join(root, file), 'utf8'));
    if (before.version === after.version) return false;
    delete before.version;
    delete after.version;
    return JSON.stringify(before) === JSON.stringify(after);
  } catch {
    return false; // new, deleted or unreadable: a change like any other
  }
}

/**
 * The specs (openapi, asyncapi) that a changed file under specs/ feeds.
 * @param {string} root
 * @param {string} file repository-relative path
 * @returns {('openapi' | 'asyncapi')[]}
 */
export function specsFedBy(root, file) {
  if (file === 'specs/openapi.yaml') return ['openapi'];
  if (file === 'specs/asyncapi.yaml') return ['asyncapi'];
  const schema = /^specs\/schemas\/([^/]+)\.ya?ml$/.exec(file);
  if (!schema) return [];
  const fed = /** @type {('openapi' | 'asyncapi')[]} */ (Object.keys(bundledSpecFiles)).filter((spec) => {
    const bundled = path.join(root, 'specs/dist', bundledSpecFiles[spec]);
    // Without a bundle to look in, assume the schema feeds both: over-asking beats missing.
    return !existsSync(bundled) || new RegExp(`"title"\\s*:\\s*"${schema[1]}"`).test(readFileSync(bundled, 'utf8'));
  });
  return fed;
}

/**
 * Checks that each publishable package changed since the base is named in a changeset that the
 * pull request adds (or that the pull request adds an empty changeset).
 * @param {{ root: string, env?: NodeJS.ProcessEnv }} options
 * @returns {Promise<CheckResult>}
 */
export async function checkChangesetCoverage({ root, env = process.env }) {
  const name = 'changeset for each changed package';
  const base = resolveBaseRef(root, env);
  const files = changedFiles(root, base.commit);
  const packages = publishablePackages(root);
  const names = new Set(packages.map((pkg) => pkg.name));
  /** @type {Map<string, string[]>} package -> files that changed it */
  const touched = new Map();
  const touch = (pkg, file) => touched.set(pkg, [...(touched.get(pkg) ?? []), file]);

  for (const file of files) {
    const owner = packages.find((pkg) => file.startsWith(`${pkg.relDir}/`));
    if (owner && isShippedFile(file.slice(owner.relDir.length + 1)) && !isVersionBumpOnly(root, base.commit, file)) touch(owner.name, file);
    for (const spec of specsFedBy(root, file)) {
      for (const consumer of specConsumers[spec]) if (names.has(consumer)) touch(consumer, file);
    }
  }

  const { added, pending } = await readPullRequestChangesets(root, base.commit);
  const named = new Set(added.flatMap((changeset) => changeset.releases.map((release) => release.name)));
  const empty = added.filter((changeset) => changeset.releases.length === 0);
  const missing = [...touched.keys()].filter((pkg) => !named.has(pkg)).sort();
  const against = `${base.ref} (${base.how}, ${base.commit.slice(0, 10)})`;
  const addedNote = added.length === 0 ? 'the pull request adds no changeset' : `the pull request adds ${added.map((changeset) => `${changeset.id}.md`).join(', ')}`;
  if (missing.length === 0) {
    return {
      name,
      ok: true,
      summary: touched.size === 0 ? `no published package changed since ${against}` : `${touched.size} changed package(s) all have a changeset added by the pull request (base ${against})`,
      details: [],
    };
  }
  if (empty.length > 0 && named.size > 0) {
    // An empty changeset beside ones that name packages: which packages did it mean? Waiving
    // every package the others leave out made a forgotten changeset pass unnoticed.
    return {
      name,
      ok: false,
      summary: `the pull request adds the empty changeset ${empty.map((changeset) => `${changeset.id}.md`).join(', ')} (no release) beside changesets that name packages, and ${missing.length} changed package(s) are named by none (base ${against}): name each in a changeset, \`"<package>": none\` for one that needs no release, and drop the empty changeset`,
      details: missing.map((pkg) => `  ${pkg}, changed by: ${(touched.get(pkg) ?? []).slice(0, 3).join(', ')}`),
    };
  }
  if (empty.length > 0) {
    return {
      name,
      ok: true,
      summary: `${missing.length} changed package(s) need no release: the pull request adds the empty changeset ${empty.map((changeset) => `${changeset.id}.md`).join(', ')} (base ${against})`,
      details: missing.map((pkg) => `  ${pkg}: changed, not released`),
    };
  }
  const pendingForMissing = pending.filter((changeset) => !added.includes(changeset) && changeset.releases.some((release) => missing.includes(release.name)));
  return {
    name,
    ok: false,
    summary: `${missing.length} changed package(s) have no changeset added by this pull request (base ${against}; ${addedNote}): run \`pnpm changeset\`, or \`pnpm changeset --empty\` when the change needs no release`,
    details: [
      ...missing.flatMap((pkg) => [
        `  ${pkg}, changed by:`,
        ...(touched.get(pkg) ?? []).slice(0, 8).map((file) => `      ${file}`),
      ]),
      ...(pendingForMissing.length === 0
        ? []
        : [`  ${pendingForMissing.length} changeset(s) for these packages were already pending on the base (e.g. ${pendingForMissing[0].id}.md): they describe earlier changes, so they do not count for this one.`]),
    ],
  };
}
