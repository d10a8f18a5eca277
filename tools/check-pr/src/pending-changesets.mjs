// Reads the changesets waiting in .changeset/ (the files `pnpm changeset` writes): which
// packages they bump and how far. Released changesets are deleted by `changeset version`,
// so what is here is exactly what the next release will apply.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const bumpOrder = { patch: 1, minor: 2, major: 3 };

/**
 * @typedef {'patch' | 'minor' | 'major'} Bump
 * @typedef {{ file: string, releases: Map<string, Bump> }} Changeset
 */

/**
 * Parses the frontmatter of one changeset file.
 * @param {string} text the file's content
 * @param {string} file its name, for error messages
 * @returns {Map<string, Bump>} package name -> bump
 */
export function parseChangeset(text, file) {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) {
    throw new Error(`${file}: no frontmatter. A changeset starts with "---", one line per package ("@capi/client": minor), then "---" and a summary.`);
  }
  const releases = new Map();
  for (const line of match[1].split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const entry = /^\s*["']?([^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line);
    if (!entry) {
      throw new Error(`${file}: cannot read the line ${JSON.stringify(line)}. Write it as "@capi/<name>": patch|minor|major.`);
    }
    releases.set(entry[1], /** @type {Bump} */ (entry[2]));
  }
  return releases;
}

/**
 * Every pending changeset in `<root>/.changeset`.
 * @param {string} root
 * @returns {Changeset[]}
 */
export function readPendingChangesets(root) {
  const dir = path.join(root, '.changeset');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort()
    .map((file) => ({ file, releases: parseChangeset(readFileSync(path.join(dir, file), 'utf8'), file) }));
}

/**
 * The highest bump each package gets across all pending changesets.
 * @param {Changeset[]} changesets
 * @returns {Map<string, Bump>}
 */
export function highestBumps(changesets) {
  const bumps = new Map();
  for (const { releases } of changesets) {
    for (const [name, bump] of releases) {
      const current = bumps.get(name);
      if (!current || bumpOrder[bump] > bumpOrder[current]) bumps.set(name, bump);
    }
  }
  return bumps;
}
