// The changesets of a pull request, read with the changesets libraries themselves
// (@changesets/read parses them with @changesets/parse, exactly as `changeset version` will),
// so what the gates accept is what a release applies: the empty changeset of
// `pnpm changeset --empty` included.
import { execFileSync } from 'node:child_process';
import getReleasePlan from '@changesets/get-release-plan';
import readChangesets from '@changesets/read';

/**
 * @typedef {'none' | 'patch' | 'minor' | 'major'} Bump
 * @typedef {{ id: string, summary: string, releases: { name: string, type: Bump }[] }} Changeset
 */

/**
 * Every changeset waiting in `<root>/.changeset`, parsed by @changesets/read.
 * @param {string} root
 * @returns {Promise<Changeset[]>}
 */
export async function readPendingChangesets(root) {
  try {
    return /** @type {Changeset[]} */ (await readChangesets(root));
  } catch (error) {
    throw new Error(`.changeset/ has a changeset the changesets tools cannot read (${/** @type {Error} */ (error).message.trim()}). Write it with \`pnpm changeset\`, or fix its front matter: one line per package ("@capi/client": minor) between two "---" lines.`);
  }
}

/**
 * The changesets this pull request adds: files `.changeset/<id>.md` added between the base and
 * HEAD (committed changes only, like the rest of check:pr). A pending changeset that was already
 * on the base describes an earlier change and does not count, and neither does editing one.
 * @param {string} root
 * @param {string} base the base commit
 * @returns {Promise<{ added: Changeset[], pending: Changeset[] }>}
 */
export async function readPullRequestChangesets(root, base) {
  const addedFiles = execFileSync('git', ['diff', '--name-only', '--diff-filter=A', `${base}...HEAD`, '--', '.changeset/'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /^\.changeset\/[^/]+\.md$/.test(file) && file !== '.changeset/README.md');
  const addedIds = new Set(addedFiles.map((file) => file.slice('.changeset/'.length, -'.md'.length)));
  const pending = await readPendingChangesets(root);
  return { added: pending.filter((changeset) => addedIds.has(changeset.id)), pending };
}

/**
 * The bump each package gets in the next release, as `changeset version` will plan it from all
 * pending changesets (the pull request's and those already on the base), dependents included.
 * @param {string} root
 * @returns {Promise<Map<string, Bump>>}
 */
export async function plannedBumps(root) {
  let plan;
  try {
    plan = await getReleasePlan(root);
  } catch (error) {
    throw new Error(`changesets cannot plan the next release (${/** @type {Error} */ (error).message.trim()}). Check that each changeset names packages of this workspace.`);
  }
  return new Map(plan.releases.map((release) => [release.name, /** @type {Bump} */ (release.type)]));
}
