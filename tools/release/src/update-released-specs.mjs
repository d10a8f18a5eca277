#!/usr/bin/env node
// `pnpm --filter @capi/release-tools update-released-specs`, run at release time after
// `changeset version`: copies the bundled specs (specs/dist/openapi.json, asyncapi.json) to
// specs/released/, the baseline `check:pr` compares the next pull request with.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './workspace-packages.mjs';

export const releasedSpecFiles = ['openapi.json', 'asyncapi.json'];

/**
 * Copies the bundled specs into specs/released.
 * @param {string} [root]
 * @returns {string[]} the files written, relative to the root
 */
export function updateReleasedSpecs(root = repoRoot) {
  const from = path.join(root, 'specs/dist');
  const to = path.join(root, 'specs/released');
  const missing = releasedSpecFiles.filter((file) => !existsSync(path.join(from, file)));
  if (missing.length) throw new Error(`specs/dist has no ${missing.join(', ')}: run \`pnpm --filter @capi/specs build\` first.`);
  mkdirSync(to, { recursive: true });
  return releasedSpecFiles.map((file) => {
    copyFileSync(path.join(from, file), path.join(to, file));
    return path.relative(root, path.join(to, file));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(`released specs updated: ${updateReleasedSpecs().join(', ')}`);
  } catch (error) {
    console.error(/** @type {Error} */ (error).message);
    process.exitCode = 1;
  }
}
