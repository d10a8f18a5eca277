#!/usr/bin/env node
// `pnpm release:dry`: the whole release, rehearsed on copies. publint, attw and the registry
// page of every publishable package; `changeset version` applied to a temp copy of the workspace (the real
// tree is never touched); every package published with `pnpm publish` to a local verdaccio
// (loopback, no uplinks); then a fresh consumer project outside the workspace installs them
// with plain npm, type-checks (bundler and node16) and runs an ESM and a CommonJS consumer.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkPackages, formatPackageChecks } from './check-packages.mjs';
import { consumerStep, tsconfigs, writeConsumerProject } from './consumer-project.mjs';
import { authLine, startLocalRegistry } from './local-registry.mjs';
import { copyWorkspaceForRelease } from './workspace-copy.mjs';
import { resolveWorkspaceRanges } from './workspace-ranges.mjs';
import { repoRoot } from './workspace-packages.mjs';

const run = promisify(execFile);

/**
 * Applies the pending changesets in the copy.
 * @param {string} copyRoot
 */
export async function versionWithChangesets(copyRoot) {
  // changeset version rewrites manifests and deletes changesets: only ever in a copy made by
  // this dry run (a `capi-release-dry-*` scratch folder), never in the repository itself,
  // wherever the repository lives (a fresh CI clone may well sit under the temp folder).
  const target = path.resolve(copyRoot);
  const inRepo = target === path.resolve(repoRoot) || target.startsWith(path.resolve(repoRoot) + path.sep);
  const inScratch = path.basename(path.dirname(target)).startsWith('capi-release-dry-');
  if (inRepo || !inScratch) {
    throw new Error(`Refusing to run changeset version outside the temp folder: ${copyRoot} is not a copy made by release:dry`);
  }
  const bin = path.join(repoRoot, 'node_modules/@changesets/cli/bin.js');
  const { stdout, stderr } = await run(process.execPath, [bin, 'version'], { cwd: copyRoot });
  return `${stdout}${stderr}`.trim();
}

/**
 * Publishes each package of the copy to the registry.
 * @param {{ name: string, dir: string }[]} packages
 * @param {import('./local-registry.mjs').LocalRegistry} registry
 * @param {string} copyRoot
 * @returns {Promise<{ name: string, version: string }[]>}
 */
export async function publishToRegistry(packages, registry, copyRoot) {
  writeFileSync(path.join(copyRoot, '.npmrc'), `${readFileSafe(path.join(copyRoot, '.npmrc'))}\n${authLine(registry)}\n`);
  // Two at a time: publishing is mostly waiting on pnpm's start-up and the registry.
  const queue = [...packages];
  const published = [];
  const worker = async () => {
    for (let pkg = queue.shift(); pkg; pkg = queue.shift()) {
      const { version } = JSON.parse(readFileSync(path.join(pkg.dir, 'package.json'), 'utf8'));
      try {
        // The manifests ask for provenance (publishConfig), which only a CI with an OIDC
        // identity can sign; a flag on the command line wins over publishConfig.
        await run('pnpm', ['publish', '--registry', registry.url, '--no-git-checks', '--ignore-scripts', '--access', 'public', '--provenance=false'], { cwd: pkg.dir, maxBuffer: 16 * 1024 * 1024 });
      } catch (error) {
        throw new Error(`pnpm publish of ${pkg.name}@${version} failed: ${/** @type {any} */ (error).stderr || /** @type {Error} */ (error).message}`);
      }
      published.push({ name: pkg.name, version });
    }
  };
  await Promise.all([worker(), worker()]);
  published.sort((a, b) => a.name.localeCompare(b.name));
  return published;
}

function readFileSafe(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Third-party packages the consumer needs itself (the signer, which the client takes as a peer; Node's types), from npm. */
function consumerThirdParty(root) {
  const client = JSON.parse(readFileSync(path.join(root, 'packages/client/package.json'), 'utf8'));
  return { viem: client.peerDependencies?.viem ?? '^2.31.0', '@types/node': '^20.19.0' };
}

/**
 * Runs the dry run; resolves with the log lines, rejects on the first failing step.
 * @param {{ root?: string, log?: (line: string) => void, keep?: boolean, packageChecks?: boolean }} [options]
 *   `packageChecks: false` skips publint, attw and the registry page (they also run alone as `check:packages`).
 */
export async function releaseDryRun({ root = repoRoot, log = console.log, keep = false, packageChecks = true } = {}) {
  const timings = [];
  const step = async (name, work) => {
    const started = Date.now();
    const result = await work();
    const seconds = (Date.now() - started) / 1000;
    timings.push(`${name}: ${seconds.toFixed(1)} s`);
    log(`✔ ${name} (${seconds.toFixed(1)} s)`);
    return result;
  };
  const scratch = mkdtempSync(path.join(tmpdir(), 'capi-release-dry-'));
  let registry;
  try {
    const copyRoot = path.join(scratch, 'repo');
    const { published: packages, manifestDirs } = await step('copy the workspace', async () => copyWorkspaceForRelease(root, copyRoot));
    const versionLog = await step('changeset version (in the copy)', () => versionWithChangesets(copyRoot));
    log(`    ${versionLog.split('\n').pop()}`);
    resolveWorkspaceRanges(manifestDirs);
    // Checked after versioning, in the copy: exactly the manifests and files that get published.
    const checks = !packageChecks ? ['publint, attw and registry page skipped'] : await step('publint, attw and registry page of every package to publish', async () => {
      const results = await checkPackages(packages);
      const lines = formatPackageChecks(results);
      if (!results.every((result) => result.ok)) throw new Error(`Package checks failed:\n${lines.join('\n')}`);
      return lines;
    });
    checks.forEach((line) => log(`    ${line}`));

    registry = await step('start verdaccio on loopback (no uplinks)', () => startLocalRegistry(path.join(scratch, 'registry')));
    const published = await step(`pnpm publish ${packages.length} packages to ${registry.url}`, () => publishToRegistry(packages, registry, copyRoot));
    log(`    ${published.map((pkg) => `${pkg.name}@${pkg.version}`).join(', ')}`);

    const consumerDir = path.join(scratch, 'consumer');
    writeConsumerProject(consumerDir, { registryUrl: registry.url, packages: published, thirdParty: consumerThirdParty(root) });
    await step('npm install in a fresh consumer (@capi from verdaccio only)', () => consumerStep('npm install', 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], consumerDir));
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    for (const tsconfig of Object.keys(tsconfigs)) {
      await step(`tsc -p ${tsconfig}`, () => consumerStep(`type-check (${tsconfig})`, process.execPath, [tsc, '-p', tsconfig], consumerDir));
    }
    for (const program of ['consumer.mjs', 'consumer.cjs']) {
      const output = await step(`node ${program}`, () => consumerStep(`run ${program}`, process.execPath, [program], consumerDir));
      log(`    ${output.split('\n').filter((line) => line.includes('consumer:')).join(' ')}`);
    }
    return { timings, published };
  } finally {
    await registry?.close();
    if (keep) log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  releaseDryRun({ keep: process.env.RELEASE_DRY_KEEP === '1', packageChecks: process.env.RELEASE_DRY_SKIP_PACKAGE_CHECKS !== '1' }).then(
    () => console.log(`release:dry passed in ${((Date.now() - started) / 1000).toFixed(1)} s`),
    (error) => {
      console.error(`✖ release:dry failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
