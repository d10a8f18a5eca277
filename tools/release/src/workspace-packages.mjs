// Discovers the publishable packages of the workspace (packages/*/package.json without
// "private": true) so every release and review check follows the packages that exist
// instead of a list that goes stale as packages land.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo root (two levels above tools/release/src). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * @typedef {object} WorkspacePackage
 * @property {string} name     package name, e.g. "@capi/client"
 * @property {string} dirName  folder name under packages/, e.g. "client"
 * @property {string} dir      absolute folder
 * @property {string} relDir   folder relative to the root, with forward slashes
 * @property {Record<string, any>} manifest the parsed package.json
 */

/**
 * Every package under `packages/` that is published (not private), sorted by folder name.
 * @param {string} [root] the monorepo root
 * @returns {WorkspacePackage[]}
 */
export function publishablePackages(root = repoRoot) {
  return workspacePackagesIn(root, 'packages').filter((pkg) => pkg.manifest.private !== true);
}

/**
 * Every package.json one level below `parent` (e.g. "packages", "tools").
 * @param {string} root
 * @param {string} parent
 * @returns {WorkspacePackage[]}
 */
export function workspacePackagesIn(root, parent) {
  const parentDir = path.join(root, parent);
  if (!existsSync(parentDir)) return [];
  return readdirSync(parentDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(parentDir, entry.name, 'package.json')))
    .map((entry) => {
      const dir = path.join(parentDir, entry.name);
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      return { name: manifest.name, dirName: entry.name, dir, relDir: `${parent}/${entry.name}`, manifest };
    })
    .sort((a, b) => a.dirName.localeCompare(b.dirName));
}

/**
 * Publishable packages whose build output exists (dist/), i.e. that can be packed now.
 * @param {string} [root]
 * @returns {WorkspacePackage[]}
 */
export function builtPublishablePackages(root = repoRoot) {
  return publishablePackages(root).filter((pkg) => existsSync(path.join(pkg.dir, 'dist')));
}
