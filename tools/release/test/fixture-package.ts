// Small packages written to the OS temp folder: a correct dual ESM/CJS package, and the
// faults the release checks must catch, seeded one at a time.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type Fault = 'none' | 'missing-types' | 'esm-types-for-require' | 'subpath-without-types-versions' | 'dist-not-published' | 'no-repository' | 'no-license-file' | 'relative-readme-link';

export function writeFixturePackage(name: string, fault: Fault = 'none'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'capi-fixture-package-'));
  const write = (file: string, content: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  };
  const requireTypes = fault === 'esm-types-for-require' ? './dist/index.d.ts' : './dist/index.d.cts';
  write(
    'package.json',
    JSON.stringify(
      {
        name,
        version: '1.0.0',
        description: 'A fixture package for the release checks.',
        license: 'MIT',
        ...(fault === 'no-repository' ? {} : { repository: { type: 'git', url: 'git+https://github.com/capi-dev/capi.git', directory: 'packages/fixture' } }),
        homepage: 'https://docs.capi.dev/packages/fixture/',
        bugs: { url: 'https://github.com/capi-dev/capi/issues' },
        keywords: ['capi', 'fixture'],
        publishConfig: { access: 'public', provenance: true },
        type: 'module',
        sideEffects: false,
        engines: { node: '>=20' },
        files: fault === 'dist-not-published' ? ['README.md'] : ['dist'],
        main: './dist/index.cjs',
        module: './dist/index.js',
        types: './dist/index.d.ts',
        exports: {
          '.': {
            import: { types: './dist/index.d.ts', default: './dist/index.js' },
            require: { types: requireTypes, default: './dist/index.cjs' },
          },
          ...(fault === 'subpath-without-types-versions'
            ? { './extra': { import: { types: './dist/index.d.ts', default: './dist/index.js' }, require: { types: './dist/index.d.cts', default: './dist/index.cjs' } } }
            : {}),
          './package.json': './package.json',
        },
      },
      null,
      2,
    ),
  );
  const example = fault === 'relative-readme-link' ? './examples/node-http.ts' : 'https://github.com/capi-dev/capi/blob/main/examples/node-http.ts';
  write('README.md', `# ${name}\n\nGuides: [the docs site](https://docs.capi.dev/). Example: [node-http](${example}).\n`);
  if (fault !== 'no-license-file') write('LICENSE', 'MIT License\n');
  write('dist/index.js', 'export function greet(name) {\n  return `hello ${name}`;\n}\n');
  write('dist/index.cjs', "'use strict';\nfunction greet(name) {\n  return `hello ${name}`;\n}\nexports.greet = greet;\n");
  if (fault !== 'missing-types') {
    write('dist/index.d.ts', 'export declare function greet(name: string): string;\n');
    write('dist/index.d.cts', 'export declare function greet(name: string): string;\n');
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
