import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built main entry, which the browser tests load (run the build first). */
export const mainEntry = join(packageDir, 'dist', 'index.js');

/**
 * A page's module for the browser tests, bundled by esbuild for the browser: `contents` (JavaScript,
 * or TypeScript with `loader: 'ts'`) with its imports resolved from this package (viem included),
 * `@capi/client` being the built main entry.
 */
export async function bundleForBrowser(contents: string, loader: 'js' | 'ts' = 'js'): Promise<string> {
  const bundled = await build({
    stdin: { contents, resolveDir: packageDir, sourcefile: `page.${loader}`, loader },
    alias: { '@capi/client': mainEntry },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return bundled.outputFiles[0]!.text;
}
