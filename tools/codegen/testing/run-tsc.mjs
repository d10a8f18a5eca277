import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * Runs this kit's TypeScript compiler on a tsconfig, in a process of its own.
 *
 * @param {string} project path of the tsconfig.json
 * @param {string} [cwd]
 * @returns {{ status: number | null, output: string }} exit status and stdout + stderr
 * @example
 * expect(runTsc(join(dir, 'tsconfig.json')).output).toBe('');
 */
export function runTsc(project, cwd) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '--project', project], { cwd, encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}
