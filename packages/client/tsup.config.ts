import { defineConfig } from 'tsup';

export default defineConfig({
  // `siwe` is its own entry so that viem is only ever loaded by the sign-in code.
  entry: { index: 'src/index.ts', siwe: 'src/siwe.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['viem', '@capi/openapi-types', 'openapi-fetch'],
  clean: true,
  sourcemap: true,
});
