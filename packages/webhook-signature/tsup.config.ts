import { defineConfig } from 'tsup';

export default defineConfig({
  // index: the web build (WebCrypto only, no node: imports); node: the node:crypto fast path.
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm', 'cjs'],
  // Both builds have one API; its types and docs come from index.ts.
  dts: { entry: { index: 'src/index.ts' } },
  target: 'es2022',
  clean: true,
  sourcemap: true,
  // Each entry self-contained: a runtime loads exactly one file, and the web size is exact.
  splitting: false,
  treeshake: true,
});
