import { defineConfig } from 'tsup';

export default defineConfig({
  // index: the library; cli: the `capi-sandbox` binary (package.json "bin").
  entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  target: 'es2022',
  platform: 'node',
  clean: true,
  sourcemap: true,
});
