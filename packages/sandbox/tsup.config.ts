import { defineConfig } from 'tsup';

export default defineConfig({
  // index: the library; dev-wallet: DEV_WALLET alone, for a browser bundle; cli: the
  // `capi-sandbox` binary (package.json "bin").
  entry: { index: 'src/index.ts', 'dev-wallet': 'src/dev-wallet.ts', cli: 'src/cli.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts', 'dev-wallet': 'src/dev-wallet.ts' } },
  target: 'es2022',
  platform: 'node',
  clean: true,
  sourcemap: true,
});
