// Which commit a pull request is compared with. CI sets CHECK_PR_BASE (e.g. origin/main);
// locally the fork point from main is the natural base, and a checkout without a main
// branch falls back to the previous commit.
import { execFileSync } from 'node:child_process';

function git(cwd, args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function tryGit(cwd, args) {
  try {
    return git(cwd, args);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the base commit of the change under review.
 * Order: `env.CHECK_PR_BASE`, then `git merge-base HEAD origin/main`, then `git merge-base HEAD main`
 * when that is not HEAD itself (we are not on main), then `HEAD~1`.
 * @param {string} cwd a folder inside the repository
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ ref: string, commit: string, how: string }}
 */
export function resolveBaseRef(cwd, env = process.env) {
  const head = git(cwd, ['rev-parse', 'HEAD']);
  if (env.CHECK_PR_BASE) {
    const commit = tryGit(cwd, ['rev-parse', '--verify', `${env.CHECK_PR_BASE}^{commit}`]);
    if (!commit) {
      throw new Error(`CHECK_PR_BASE=${env.CHECK_PR_BASE} is not a commit in this repository. Fetch it first (git fetch origin main) or unset CHECK_PR_BASE.`);
    }
    return { ref: env.CHECK_PR_BASE, commit, how: 'CHECK_PR_BASE' };
  }
  for (const branch of ['origin/main', 'main']) {
    const commit = tryGit(cwd, ['merge-base', 'HEAD', branch]);
    if (commit && commit !== head) return { ref: branch, commit, how: `merge-base with ${branch}` };
  }
  const previous = tryGit(cwd, ['rev-parse', '--verify', 'HEAD~1^{commit}']);
  if (previous) return { ref: 'HEAD~1', commit: previous, how: 'previous commit (HEAD~1)' };
  return { ref: 'HEAD', commit: head, how: 'first commit: nothing to compare' };
}

/**
 * Files changed between the base and HEAD (`git diff --name-only BASE...HEAD`).
 * @param {string} cwd
 * @param {string} base
 * @returns {string[]}
 */
export function changedFiles(cwd, base) {
  const out = git(cwd, ['diff', '--name-only', `${base}...HEAD`]);
  return out === '' ? [] : out.split('\n');
}
