// Rewrites `workspace:` dependency ranges of the copied packages into the versions that
// `changeset version` just set, exactly as `pnpm publish` does inside an installed workspace
// (workspace:^ -> ^1.2.3, workspace:~ -> ~1.2.3, workspace:* -> 1.2.3), so the copy can be
// published without installing it first.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const sections = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'];

/**
 * @param {string} range e.g. "workspace:^"
 * @param {string} version the workspace package's version
 * @returns {string}
 */
export function resolveWorkspaceRange(range, version) {
  const spec = range.slice('workspace:'.length);
  if (spec === '*' || spec === '') return version;
  if (spec === '^' || spec === '~') return `${spec}${version}`;
  return spec;
}

/**
 * Rewrites every workspace: range in the given package folders.
 * @param {string[]} manifestDirs every workspace package folder of the copy
 */
export function resolveWorkspaceRanges(manifestDirs) {
  const manifests = manifestDirs.map((dir) => ({ file: path.join(dir, 'package.json'), manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) }));
  const versions = new Map(manifests.map(({ manifest }) => [manifest.name, manifest.version ?? '0.0.0']));
  for (const { file, manifest } of manifests) {
    let changed = false;
    for (const section of sections) {
      for (const [name, range] of Object.entries(manifest[section] ?? {})) {
        if (typeof range !== 'string' || !range.startsWith('workspace:')) continue;
        const version = versions.get(name);
        if (!version) throw new Error(`${manifest.name} depends on ${name}@${range}, which is not in the workspace.`);
        manifest[section][name] = resolveWorkspaceRange(range, version);
        changed = true;
      }
    }
    if (changed) writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  }
}
