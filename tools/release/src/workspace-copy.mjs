// A copy of the workspace to version and publish from, so a dry run never touches the real
// tree: the root manifests and changesets, every publishable package as it is built (dist
// included, node_modules left out), and only the manifests of the private workspace
// packages (pnpm needs them to resolve workspace: ranges).
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { workspacePackagesIn } from './workspace-packages.mjs';

const skipped = new Set(['node_modules', '.turbo', '.cache']);

/**
 * Copies the workspace into `destination`.
 * @param {string} root the real monorepo root
 * @param {string} destination an empty folder
 * @returns {{ published: { name: string, dir: string, dirName: string }[], manifestDirs: string[] }} the
 *   publishable packages in the copy, and the folder of every workspace package copied
 */
export function copyWorkspaceForRelease(root, destination) {
  mkdirSync(destination, { recursive: true });
  for (const file of ['package.json', 'pnpm-workspace.yaml', '.npmrc', '.changeset']) {
    if (existsSync(path.join(root, file))) cpSync(path.join(root, file), path.join(destination, file), { recursive: true });
  }
  // Changesets loads its changelog generator from the root's node_modules.
  symlinkSync(path.join(root, 'node_modules'), path.join(destination, 'node_modules'), 'dir');
  const published = [];
  const manifestDirs = [];
  for (const parent of ['packages', 'tools', 'specs']) {
    const packages = parent === 'specs' ? specsPackage(root) : workspacePackagesIn(root, parent);
    for (const pkg of packages) {
      const target = path.join(destination, pkg.relDir);
      manifestDirs.push(target);
      if (pkg.manifest.private === true) {
        mkdirSync(target, { recursive: true });
        cpSync(path.join(pkg.dir, 'package.json'), path.join(target, 'package.json'));
        continue;
      }
      cpSync(pkg.dir, target, { recursive: true, filter: (source) => !skipped.has(path.basename(source)) });
      published.push({ name: pkg.name, dir: target, dirName: pkg.dirName });
    }
  }
  return { published, manifestDirs };
}

function specsPackage(root) {
  const manifestFile = path.join(root, 'specs/package.json');
  if (!existsSync(manifestFile)) return [];
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  return [{ name: manifest.name, dirName: 'specs', dir: path.join(root, 'specs'), relDir: 'specs', manifest }];
}
