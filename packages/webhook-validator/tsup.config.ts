import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', schemas: 'src/schemas.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  target: 'es2022',
  platform: 'neutral',
  clean: true,
  sourcemap: true,
  splitting: false,
  treeshake: true,
});
