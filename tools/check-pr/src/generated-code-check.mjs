// Gate 2: generated code committed to the repo is what the generators make from the specs
// now, so a spec change cannot land without the regenerated code (or the reverse).
import { execFileSync } from 'node:child_process';
import { publishablePackages } from '@capi/release-tools/workspace-packages';
import { runCommand } from './command.mjs';

/** @typedef {import('./spec-lint-check.mjs').CheckResult} CheckResult */

/**
 * `pnpm turbo run gen` limited to the packages that have a gen script, so turbo builds only
 * what the generators need (the specs, and the packages they import) instead of everything.
 * @param {string} root
 */
export function defaultGenCommand(root) {
  const generated = publishablePackages(root).filter((pkg) => pkg.manifest.scripts?.gen);
  return ['pnpm turbo run gen --output-logs=errors-only', ...generated.map((pkg) => `--filter=${pkg.name}`)].join(' ');
}

/**
 * Runs the generators, then asks git whether anything under packages/<pkg>/src/generated changed.
 * @param {{ root: string, genCommand?: string }} options `genCommand` defaults to {@link defaultGenCommand}
 * @returns {Promise<CheckResult>}
 */
export async function checkGeneratedCode({ root, genCommand = defaultGenCommand(root) }) {
  const name = 'generated code up to date';
  const gen = await runCommand(genCommand, { cwd: root });
  if (gen.code !== 0) {
    return { name, ok: false, summary: `the generators failed (exit ${gen.code}): run \`pnpm gen\` and fix the error`, details: gen.output.trim().split('\n').slice(-40) };
  }
  const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--', ':(glob)packages/*/src/generated/**'], { cwd: root, encoding: 'utf8' });
  const stale = status.split('\n').filter(Boolean);
  if (stale.length === 0) {
    return { name, ok: true, summary: 'regenerating from the specs changes no committed file', details: [] };
  }
  return {
    name,
    ok: false,
    summary: `${stale.length} generated file(s) differ from what the specs generate: this gate has regenerated them in your tree (listed below); review and commit packages/*/src/generated`,
    details: stale.map((line) => `  ${line}`),
  };
}
