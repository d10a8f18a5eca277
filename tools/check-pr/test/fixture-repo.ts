// Builds throwaway monorepos in the OS temp folder, so every seeded fault is made on a copy
// and never on the real tree.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export function released(spec: 'openapi' | 'asyncapi'): any {
  return JSON.parse(readFileSync(path.join(fixturesDir, `released-${spec}.json`), 'utf8'));
}

export const publishedPackages = ['openapi-types', 'client', 'sandbox', 'event-types', 'webhook-validator', 'webhook-receiver'];

export interface FixtureRepo {
  root: string;
  write(file: string, content: string | object): void;
  commit(message: string): string;
  git(...args: string[]): string;
  remove(): void;
}

/** A temp monorepo with the six spec-consuming packages, a .changeset folder and git. */
export function createFixtureRepo(): FixtureRepo {
  const root = mkdtempSync(path.join(tmpdir(), 'capi-check-pr-'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@localhost', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@localhost' },
    }).trim();
  const write = (file: string, content: string | object) => {
    const target = path.join(root, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
  };
  git('init', '-q', '-b', 'main');
  write('package.json', { name: 'fixture-root', private: true });
  write('pnpm-workspace.yaml', "packages:\n  - 'packages/*'\n  - 'specs'\n");
  write('.changeset/config.json', { baseBranch: 'main' });
  write('.changeset/README.md', 'changesets live here');
  write('specs/package.json', { name: '@capi/specs', private: true });
  for (const dir of publishedPackages) {
    write(`packages/${dir}/package.json`, { name: `@capi/${dir}`, version: '1.0.0' });
    write(`packages/${dir}/src/index.ts`, 'export const version = 1;\n');
  }
  write('packages/bench-only/package.json', { name: '@capi/private-thing', private: true });
  return {
    root,
    write,
    git,
    commit(message: string) {
      git('add', '-A');
      git('commit', '-q', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Writes a changeset file bumping the given packages. */
export function changeset(bumps: Record<string, 'patch' | 'minor' | 'major' | 'none'>, summary = 'A change.'): string {
  const lines = Object.entries(bumps).map(([name, bump]) => `"${name}": ${bump}`);
  return `---\n${lines.join('\n')}\n---\n\n${summary}\n`;
}
