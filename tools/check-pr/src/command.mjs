// Runs one shell command of a check and keeps its output for the report.
import { spawn } from 'node:child_process';

/**
 * Runs `command` through the shell in `cwd`; never throws on a non-zero exit.
 * @param {string} command
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv }} options
 * @returns {Promise<{ code: number, output: string }>}
 */
export function runCommand(command, { cwd, env = process.env }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { cwd, env, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
