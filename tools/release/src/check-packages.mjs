#!/usr/bin/env node
// `pnpm --filter @capi/release-tools check:packages`: publint, attw and the registry page
// (metadata, LICENSE, README links) of every publishable package (discovered under
// packages/), packed as published, one readable line per problem.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPackage } from './package-checks.mjs';
import { publishablePackages, repoRoot } from './workspace-packages.mjs';
import { existsSync } from 'node:fs';

/**
 * Checks every publishable package; throws when one has not been built.
 * @param {string} [root]
 * @returns {Promise<import('./package-checks.mjs').PackageCheck[]>}
 */
export async function checkAllPackages(root = repoRoot) {
  const packages = publishablePackages(root);
  const unbuilt = packages.filter((pkg) => !existsSync(path.join(pkg.dir, 'dist')));
  if (unbuilt.length > 0) throw new Error(`Not built yet: ${unbuilt.map((pkg) => pkg.name).join(', ')}. Run \`pnpm build\` first.`);
  return checkPackages(packages);
}

/**
 * Checks the given package folders.
 * @param {{ name: string, dir: string, dirName?: string }[]} packages
 * @returns {Promise<import('./package-checks.mjs').PackageCheck[]>}
 */
export async function checkPackages(packages) {
  // Two at a time: packing waits on pnpm, the type analysis on the CPU.
  const queue = [...packages];
  const results = [];
  const worker = async () => {
    for (let pkg = queue.shift(); pkg; pkg = queue.shift()) results.push(await checkPackage(pkg));
  };
  await Promise.all([worker(), worker()]);
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The report lines of the checks.
 * @param {import('./package-checks.mjs').PackageCheck[]} results
 */
export function formatPackageChecks(results) {
  return results.flatMap((result) => [
    `${result.ok ? '✔' : '✖'} ${result.name}: ${result.ok ? 'publint, attw and registry page clean' : `${result.publint.length} publint, ${result.attw.length} attw, ${result.registryPage.length} registry page problem(s)`}`,
    ...result.publint.map((line) => `    publint ${line}`),
    ...result.attw.map((line) => `    attw ${line}`),
    ...result.registryPage.map((line) => `    registry page ${line}`),
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  checkAllPackages().then(
    (results) => {
      console.log(formatPackageChecks(results).join('\n'));
      process.exitCode = results.every((result) => result.ok) ? 0 : 1;
    },
    (error) => {
      console.error(error.message);
      process.exitCode = 1;
    },
  );
}
