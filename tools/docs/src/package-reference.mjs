// One TypeDoc API reference per publishable package, generated from the package's own
// sources and tsconfig, so the reference shows exactly the exported surface and its TSDoc.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Application, LogLevel } from 'typedoc';

/**
 * The source files behind a package's public entry points: "." is src/index.ts, a subpath
 * export "./schemas" is src/schemas.ts (or src/schemas/index.ts).
 * @param {import('@capi/release-tools/workspace-packages').WorkspacePackage} pkg
 * @returns {string[]}
 */
export function entrySources(pkg) {
  const subpaths = Object.keys(pkg.manifest.exports ?? { '.': null }).filter((key) => key !== './package.json' && !key.includes('*'));
  const sources = subpaths.map((subpath) => {
    const name = subpath === '.' ? 'index' : subpath.replace(/^\.\//, '');
    return [`src/${name}.ts`, `src/${name}/index.ts`].map((file) => path.join(pkg.dir, file)).find((file) => existsSync(file));
  });
  return /** @type {string[]} */ ([...new Set(sources.filter(Boolean))]);
}

/**
 * Writes the TypeDoc HTML of one package into `outDir`.
 * @param {import('@capi/release-tools/workspace-packages').WorkspacePackage} pkg
 * @param {string} outDir
 * @param {string} pathToSiteRoot relative link from the package pages back to the site
 */
export async function writePackageReference(pkg, outDir, pathToSiteRoot) {
  const entryPoints = entrySources(pkg);
  if (entryPoints.length === 0) throw new Error(`${pkg.name}: no src/index.ts to document. Every package exports from src/index.ts.`);
  const readme = path.join(pkg.dir, 'README.md');
  // The package's tsconfig also includes its tests; documenting only src/ keeps TypeDoc's
  // program small (tests pull in vitest and fixtures), which is most of its run time.
  const scratch = mkdtempSync(path.join(tmpdir(), 'capi-typedoc-'));
  const tsconfig = path.join(scratch, 'tsconfig.json');
  writeFileSync(tsconfig, JSON.stringify({ extends: path.join(pkg.dir, 'tsconfig.json'), include: [path.join(pkg.dir, 'src')] }));
  try {
    await generate(pkg, entryPoints, tsconfig, existsSync(readme) ? readme : 'none', outDir, pathToSiteRoot);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function generate(pkg, entryPoints, tsconfig, readme, outDir, pathToSiteRoot) {
  const app = await Application.bootstrapWithPlugins({
    name: pkg.name,
    entryPoints,
    tsconfig,
    readme,
    skipErrorChecking: true,
    excludePrivate: true,
    excludeInternal: true,
    disableSources: true,
    hideGenerator: true,
    navigationLinks: { 'capi docs': `${pathToSiteRoot}index.html` },
    logLevel: LogLevel.Error,
  });
  const project = await app.convert();
  if (!project) throw new Error(`${pkg.name}: TypeDoc could not convert ${entryPoints.join(', ')}; run \`pnpm --filter ${pkg.name} typecheck\`.`);
  await app.generateDocs(project, outDir);
}
