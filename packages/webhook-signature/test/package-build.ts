// The package's build for tests that need it as consumers get it: dist/ when it is newer than
// every file it is built from (as right after `turbo build`), else a fresh build with the real
// tsup config. Either way into `outDir`, so a concurrent rebuild of dist/ cannot interfere.
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build as tsup } from 'tsup';
import tsupConfig from '../tsup.config.js';

const CODE_OUTPUTS = ['index.js', 'index.cjs', 'node.js', 'node.cjs'];
const TYPE_OUTPUTS = ['index.d.ts', 'index.d.cts'];

function isFresh(outputs: string[]): boolean {
  const inputs = [...readdirSync('src').map((name) => join('src', name)), 'tsup.config.ts', 'package.json'];
  const newestInput = Math.max(...inputs.map((path) => statSync(path).mtimeMs));
  return outputs.every((name) => existsSync(join('dist', name)) && statSync(join('dist', name)).mtimeMs >= newestInput);
}

/** Puts the package's built files (dist/ content) into `outDir`; `types: false` if only the code is needed. */
export async function placeBuild(outDir: string, { types = true } = {}): Promise<void> {
  const outputs = types ? [...CODE_OUTPUTS, ...TYPE_OUTPUTS] : CODE_OUTPUTS;
  try {
    if (!isFresh(outputs)) throw new Error('dist/ is missing or older than its inputs');
    cpSync('dist', outDir, { recursive: true });
    if (!outputs.every((name) => existsSync(join(outDir, name)))) throw new Error('dist/ changed while it was copied');
  } catch {
    rmSync(outDir, { recursive: true, force: true });
    await tsup({ ...(tsupConfig as object), outDir, silent: true, ...(types ? {} : { dts: false }) });
  }
}
