import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTsc } from './run-tsc.mjs';
import { temporaryDirectory } from './temporary-directory.mjs';

/**
 * The specification that a package's README examples compile: every ` ```ts ` block of
 * README.md, in order, type-checked as one module against the package's `src/index.ts`.
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package
 * @param {string} options.packageName e.g. `@capi/event-types`, the import the snippets use
 * @param {string} options.prelude declarations of the free names the snippets stand for
 * @param {Record<string, string[]>} [options.extraPaths] more `paths` mappings, e.g. a peer the snippets import
 * @example
 * describeReadmeExamples({ packageDir, packageName: '@capi/openapi-types', prelude: 'declare const accessToken: string;\n' });
 */
export function describeReadmeExamples({ packageDir, packageName, prelude, extraPaths = {} }) {
  const shortName = packageName.slice(packageName.indexOf('/') + 1);
  describe('the README examples compile against the package', () => {
    it('type-checks every ts block of README.md, in order, as one module', () => {
      const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
      const blocks = [...readme.matchAll(/```ts\n([^]*?)```/g)].map((match) => match[1] ?? '');
      expect(blocks.length).toBeGreaterThan(0);
      const dir = temporaryDirectory(join(tmpdir(), `${shortName}-readme-`));
      // Each block in a function of its own so that `return` statements in snippets are legal.
      const imports = blocks.join('\n').match(/^import [^]*?;$/gm) ?? [];
      const bodies = blocks.map((block) => block.replace(/^import [^]*?;$/gm, ''));
      writeFileSync(join(dir, 'readme.ts'), `${imports.join('\n')}\n${prelude}${bodies.map((code, i) => `export async function example${i}() {\n${code}\n}`).join('\n')}\n`);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          noEmit: true, strict: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom'], types: [],
          noUnusedLocals: false, paths: { [packageName]: [join(packageDir, 'src/index.ts')], ...extraPaths },
        },
        files: ['readme.ts'],
      }));
      const result = runTsc(join(dir, 'tsconfig.json'));
      expect(result.output).toBe('');
      expect(result.status).toBe(0);
    });
  });
}
