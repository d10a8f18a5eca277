// Gate 1: the specs pass the project's lint (Spectral rules, Redocly lint, examples vs schemas).
import { runCommand } from './command.mjs';

/**
 * @typedef {{ name: string, ok: boolean, summary: string, details: string[] }} CheckResult
 */

/**
 * Runs the spec lint of @capi/specs.
 * @param {{ root: string, command?: string }} options `command` defaults to `pnpm --filter @capi/specs lint`
 * @returns {Promise<CheckResult>}
 */
export async function checkSpecLint({ root, command = 'pnpm --filter @capi/specs lint' }) {
  const { code, output } = await runCommand(command, { cwd: root });
  return {
    name: 'spec lint',
    ok: code === 0,
    summary: code === 0 ? 'the specs pass lint' : `the spec lint failed (exit ${code}): fix the findings below, then run \`pnpm lint:specs\``,
    details: code === 0 ? [] : output.trim().split('\n').slice(-60),
  };
}
