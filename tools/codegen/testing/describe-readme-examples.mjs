import { symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeBlocks } from './readme-blocks.mjs';
import { readmeModules } from './readme-modules.mjs';
import { runTsc } from './run-tsc.mjs';
import { temporaryDirectory } from './temporary-directory.mjs';

/**
 * The specification that a package's README examples compile: every ` ```ts ` block of
 * README.md, in order, type-checked as one module against the package's `src/index.ts`.
 *
 * The imports and `declare` statements of the blocks go to the top of the module (an import
 * that several blocks repeat, once); the rest of each block is the body of a function of its
 * own, so that `return` is legal. A block that binds a name another block already bound to
 * something else (the same name imported from another module, or declared otherwise) is
 * type-checked as a module of its own, with the prelude.
 *
 * With `js`, every ` ```js ` block is type-checked too, each as a JavaScript module of its own
 * (`checkJs`, strict except for implicit `any`, which JavaScript has no way to avoid), with
 * `jsPrelude` as global declarations for their free names.
 *
 * Each check runs twice: with `moduleResolution: "bundler"` (a partner's bundler or framework)
 * and with `module` / `moduleResolution: "node16"` in a `"type": "module"` package (a partner's
 * Node app built with tsc), where a default import of a CommonJS package such as
 * `import Redis from 'ioredis'` is the module object and not the class. Under node16 the
 * dependencies resolve as a partner's would, from the package's `node_modules` (`paths` to a
 * folder do not apply to ES module imports under node16, so those fall back to it).
 *
 * @param {object} options
 * @param {string} options.packageDir absolute path of the package
 * @param {string} options.packageName e.g. `@capi/event-types`, the import the snippets use
 * @param {string} options.prelude declarations of the free names the snippets stand for
 * @param {Record<string, string[]>} [options.extraPaths] more `paths` mappings, e.g. a peer or a subpath entry the snippets import
 * @param {string[]} [options.types] type packages to include (`['node']` for `process`, `node:http`), from the package's `node_modules/@types`; none by default
 * @param {boolean} [options.js] also type-check the ` ```js ` blocks (a README may then have no ` ```ts ` block)
 * @param {string} [options.jsPrelude] global declarations (a script `.d.ts`) of the free names of the js blocks
 * @example
 * describeReadmeExamples({ packageDir, packageName: '@capi/openapi-types', prelude: 'declare const accessToken: string;\n' });
 */
export function describeReadmeExamples({ packageDir, packageName, prelude, extraPaths = {}, types = [], js = false, jsPrelude = '' }) {
  const shortName = packageName.slice(packageName.indexOf('/') + 1);
  /** @param {string} language */
  const blocksOf = (language) => readmeBlocks(packageDir, language);
  /**
   * @param {Record<string, string>} fileTexts file name -> text, in a fresh directory
   * @param {'bundler' | 'node16'} resolution
   * @param {object} [options] more compiler options
   */
  const typeCheck = (fileTexts, resolution, options = {}) => {
    const dir = temporaryDirectory(join(tmpdir(), `${shortName}-readme-`));
    for (const [file, text] of Object.entries(fileTexts)) writeFileSync(join(dir, file), text);
    if (resolution === 'node16') {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      symlinkSync(join(packageDir, 'node_modules'), join(dir, 'node_modules'), 'dir');
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        noEmit: true, strict: true, target: 'es2022', lib: ['es2023', 'dom'], types,
        ...(resolution === 'node16' ? { module: 'node16', moduleResolution: 'node16' } : { module: 'esnext', moduleResolution: 'bundler' }),
        ...(types.length > 0 ? { typeRoots: [join(packageDir, 'node_modules/@types')] } : {}),
        // Declaration files of dependencies are their authors' to check (as in the packages' own tsconfig).
        skipLibCheck: true, noUnusedLocals: false, paths: { [packageName]: [join(packageDir, 'src/index.ts')], ...extraPaths },
        ...options,
      },
      files: Object.keys(fileTexts),
    }));
    return runTsc(join(dir, 'tsconfig.json'));
  };
  describe('the README examples compile against the package', () => {
    for (const resolution of /** @type {const} */ (['bundler', 'node16'])) {
      if (!js || blocksOf('ts').length > 0) {
        it(`type-checks every ts block of README.md, in order, as one module (moduleResolution ${resolution})`, () => {
          const blocks = blocksOf('ts');
          expect(blocks.length).toBeGreaterThan(0);
          const modules = readmeModules(blocks, prelude);
          const result = typeCheck(Object.fromEntries(modules.map((text, i) => [i === 0 ? 'readme.ts' : `readme-${i}.ts`, text])), resolution);
          expect(result.output).toBe('');
          expect(result.status).toBe(0);
        }, 120_000);
      }
      if (js) {
        it(`type-checks every js block of README.md, each as a JavaScript module (moduleResolution ${resolution})`, () => {
          const blocks = blocksOf('js');
          expect(blocks.length).toBeGreaterThan(0);
          const files = Object.fromEntries(blocks.map((block, i) => [`readme-${i}.js`, block]));
          const result = typeCheck({ 'globals.d.ts': jsPrelude, ...files }, resolution, { allowJs: true, checkJs: true, noImplicitAny: false });
          expect(result.output).toBe('');
          expect(result.status).toBe(0);
        }, 120_000);
      }
    }
  });
}
