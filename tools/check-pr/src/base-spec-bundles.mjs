// The specs as they were on the base of a pull request, bundled: what the pull request's own
// spec changes are measured against. specs/dist is not committed, so the base's sources are taken
// from git (`git archive`) into a temporary folder and bundled with the bundler of the
// repository this tool lives in (@capi/specs' scripts/bundle.mjs, Redocly's bundler, with its
// installed dependencies), the same way `pnpm build` does.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundledSpecFiles } from './spec-consumers.mjs';

// This tool's own repository: tools/check-pr/src -> the root.
const toolRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SPEC_SOURCE = /^specs\/(openapi\.yaml|asyncapi\.yaml|schemas\/.+\.yaml)$/;

/**
 * Whether any of `files` (paths from the repository root) is a spec source.
 * @param {string[]} files
 */
export function changesSpecSources(files) {
  return files.some((file) => SPEC_SOURCE.test(file));
}

/**
 * Bundles the base commit's specs into a temporary folder holding `openapi.json` and
 * `asyncapi.json` (the names of {@link bundledSpecFiles}); `undefined` when the base has no spec
 * sources. Call `remove()` when done.
 * @param {string} root the repository
 * @param {string} base the base commit
 * @returns {Promise<{ dir: string, remove: () => void } | undefined>}
 */
export async function bundleBaseSpecs(root, base) {
  const bundler = path.join(toolRepo, 'specs/scripts/bundle.mjs');
  let archive;
  try {
    archive = execFileSync('git', ['archive', '--format=tar', base, 'specs/openapi.yaml', 'specs/asyncapi.yaml', 'specs/schemas'], { cwd: root, maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined; // the base has no spec sources
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'capi-check-pr-base-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    // The bundler resolves its dependencies (Redocly) from the specs package's node_modules.
    if (existsSync(path.join(toolRepo, 'specs/node_modules'))) symlinkSync(path.join(toolRepo, 'specs/node_modules'), path.join(dir, 'specs/node_modules'), 'dir');
    const { buildSpecOutputs } = await import(pathToFileURL(bundler).href);
    const outputs = await buildSpecOutputs(path.join(dir, 'specs'));
    const out = path.join(dir, 'bundled');
    mkdirSync(out);
    for (const file of Object.values(bundledSpecFiles)) {
      const text = outputs.get(file);
      if (text !== undefined) writeFileSync(path.join(out, file), text);
    }
    return { dir: out, remove };
  } catch (error) {
    remove();
    throw new Error(`could not bundle the base's specs (${base.slice(0, 10)}) to compare this pull request's spec changes with: ${/** @type {Error} */ (error).message}`);
  }
}
