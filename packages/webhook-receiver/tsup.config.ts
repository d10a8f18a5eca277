import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/durable-object.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  target: 'es2022',
  clean: true,
  sourcemap: true,
});
