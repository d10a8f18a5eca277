import { readdir, readFile, writeFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';

// esbuild's code splitting imports some chunks for their evaluation alone
// (`import "./chunk-X.js";`). Nothing here has side effects (`"sideEffects": false`), so a
// bundler drops those imports anyway, and esbuild warned about each one: 14 warnings in an app
// that imports the client. Blanked after the build, each line kept empty, so that the source
// maps still point at the right lines.
async function blankBareChunkImports(): Promise<void> {
  for (const file of await readdir('dist')) {
    if (!file.endsWith('.js')) continue;
    const code = await readFile(`dist/${file}`, 'utf8');
    const blanked = code.replace(/^import "\.\/chunk-[\w-]+\.js";$/gm, '');
    if (blanked !== code) await writeFile(`dist/${file}`, blanked);
  }
}

export default defineConfig({
  // `siwe` is its own entry so that viem is only ever loaded by the sign-in code; `onboarding`
  // (newer generation) so that the main entry stays within its size budget.
  entry: { index: 'src/index.ts', siwe: 'src/siwe.ts', onboarding: 'src/onboarding.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['viem', '@capi/openapi-types', 'openapi-fetch'],
  clean: true,
  sourcemap: true,
  onSuccess: blankBareChunkImports,
});
