// Checks one package the way consumers see it: publint on the packed manifest and files,
// arethetypeswrong (as `attw --profile strict`) on the same tarball, which resolves every entry
// point as Node 16+ ESM (`import`), Node 16+ CommonJS (`require`, what Node 20 users of the
// CJS build get), bundlers and node10 (a CommonJS project's default resolution) would, and reports types that do not match the JavaScript, and
// the registry page (metadata, LICENSE, README links) of the same tarball.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkPackage as checkTypes, createPackageFromTarballData } from '@arethetypeswrong/core';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { registryPageProblems } from './registry-page.mjs';

const run = promisify(execFile);

/**
 * @typedef {object} PackageCheck
 * @property {string} name
 * @property {boolean} ok
 * @property {string[]} publint  publint errors and warnings, formatted
 * @property {string[]} attw     arethetypeswrong problems, one line each
 * @property {string[]} registryPage what the registry page would lack (see registry-page.mjs)
 */

/**
 * Packs a package once, as `pnpm publish` would (workspace: ranges replaced), so both checks
 * look at exactly the tarball users get.
 * @param {string} dir
 * @param {string} destination
 * @returns {Promise<string>} the .tgz path
 */
export async function packPackage(dir, destination) {
  try {
    await run('pnpm', ['pack', '--pack-destination', destination], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`pnpm pack failed in ${dir}: ${/** @type {any} */ (error).stderr || /** @type {Error} */ (error).message}`);
  }
  const tarball = readdirSync(destination).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack wrote no tarball for ${dir}.`);
  return path.join(destination, tarball);
}

/**
 * Unpacks a tarball next to it.
 * @param {string} tarball
 * @returns {Promise<string>} the unpacked `package/` folder
 */
export async function unpackTarball(tarball) {
  const unpacked = path.join(path.dirname(tarball), 'unpacked');
  mkdirSync(unpacked, { recursive: true });
  await run('tar', ['xzf', tarball, '-C', unpacked]);
  return path.join(unpacked, 'package');
}

/**
 * Runs publint (errors and warnings fail) on the unpacked content of a tarball.
 * @param {string} pkgDir the unpacked `package/` folder
 * @returns {Promise<string[]>}
 */
export async function publintProblems(pkgDir) {
  const manifest = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  // The folder holds exactly the packed files, so publint looks at them as they are.
  const { messages } = await publint({ pkgDir, level: 'warning', strict: true, pack: false });
  return messages.map((message) => `${message.type}: ${formatMessage(message, manifest) ?? message.code}`);
}

/**
 * Runs arethetypeswrong on a packed tarball, in process (the library behind `attw`, so
 * TypeScript loads once for all packages), keeping every problem `attw --profile strict`
 * reports: node10 too, which a CommonJS project on `moduleResolution: node10` (TypeScript's
 * default for `module: commonjs`) uses, and which reaches a subpath's types only through
 * `typesVersions`.
 * @param {string} tarball
 * @returns {Promise<string[]>}
 */
export async function typeResolutionProblems(tarball) {
  const analysis = await checkTypes(createPackageFromTarballData(new Uint8Array(readFileSync(tarball))));
  if (!analysis.types) return ['NoTypes: the package ships no types (add a "types" condition to every export)'];
  return analysis.problems.map(describeTypeProblem);
}

/** What each attw problem means for users, and what to change. */
const typeProblemHints = {
  FalseESM: 'ESM types describe CommonJS JavaScript: give the require condition a .d.cts file',
  FalseCJS: 'CommonJS types describe ESM JavaScript: give the import condition a .d.ts file in an ESM scope',
  NoResolution: 'the entry point does not resolve: check exports and files (for a subpath under node10, add it to typesVersions)',
  UntypedResolution: 'the entry point resolves to JavaScript without types: add a types condition first',
  CJSResolvesToESM: 'require() resolves to an ESM-only file: add a require condition with a .cjs build',
  FallbackCondition: 'resolution relies on a fallback condition',
  NamedExports: 'the CommonJS build lacks named exports the types declare',
  InternalResolutionError: 'an import inside the types does not resolve',
};

/**
 * One readable line for an attw problem.
 * @param {any} problem
 */
function describeTypeProblem(problem) {
  const where = [problem.entrypoint && `"${problem.entrypoint}"`, problem.resolutionKind].filter(Boolean).join(', ');
  const files = problem.typesFileName ? ` ${problem.typesFileName.replace(/^\/node_modules\//, '')} for ${String(problem.implementationFileName ?? '').replace(/^\/node_modules\//, '')}` : problem.fileName ? ` ${problem.fileName}` : '';
  const hint = typeProblemHints[/** @type {keyof typeof typeProblemHints} */ (problem.kind)];
  return `${problem.kind}${where ? ` (${where})` : ''}:${files}${hint ? ` (${hint})` : ''}`;
}

/**
 * The three checks on one package, over one tarball.
 * @param {{ name: string, dir: string, dirName?: string }} pkg `dirName`: its folder under
 *   packages/, which its repository directory and homepage must name
 * @returns {Promise<PackageCheck>}
 */
export async function checkPackage(pkg) {
  const scratch = mkdtempSync(path.join(tmpdir(), 'capi-pack-check-'));
  try {
    const tarball = await packPackage(pkg.dir, scratch);
    const pkgDir = await unpackTarball(tarball);
    const registryPage = registryPageProblems(pkgDir, { dirName: pkg.dirName });
    const [publintResult, attwResult] = await Promise.all([publintProblems(pkgDir), typeResolutionProblems(tarball)]);
    const ok = publintResult.length === 0 && attwResult.length === 0 && registryPage.length === 0;
    return { name: pkg.name, ok, publint: publintResult, attw: attwResult, registryPage };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
