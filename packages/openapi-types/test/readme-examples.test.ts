import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh temporary directory, removed when the current test finishes. */
function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(prefix);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// The free name the README's snippets stand for (the token from signing in).
const PRELUDE = 'declare const accessToken: string;\n';

describe('the README examples compile against the package', () => {
  it('type-checks every ts block of README.md, in order, as one module', () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```ts\n([^]*?)```/g)].map((match) => match[1] ?? '');
    expect(blocks.length).toBeGreaterThan(0);
    const dir = temporaryDirectory(join(tmpdir(), 'openapi-types-readme-'));
    // Each block in a function of its own so that `return` statements in snippets are legal.
    const imports = blocks.join('\n').match(/^import [^]*?;$/gm) ?? [];
    const bodies = blocks.map((block) => block.replace(/^import [^]*?;$/gm, ''));
    writeFileSync(join(dir, 'readme.ts'), `${imports.join('\n')}\n${PRELUDE}${bodies.map((code, i) => `export async function example${i}() {\n${code}\n}`).join('\n')}\n`);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        noEmit: true, strict: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom'], types: [],
        noUnusedLocals: false, paths: { '@capi/openapi-types': [join(packageDir, 'src/index.ts')], 'openapi-fetch': [join(packageDir, 'node_modules/openapi-fetch')] },
      },
      files: ['readme.ts'],
    }));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '--project', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
