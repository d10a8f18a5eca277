// The site's diagrams (diagrams/*.mmd, Mermaid), rendered to SVG files at build time by
// Mermaid itself inside headless Chromium, loaded from node_modules: the pages show plain SVG
// images and no diagram script is sent to readers.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);

/** The Chromium the docs build and tests drive: Debian's, or `CHROMIUM_PATH`. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags that keep Chromium from calling home during the build and the tests. */
export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Renders every `*.mmd` of `sourceDir` to `<name>.svg` in `outDir`.
 * @param {string} sourceDir
 * @param {string} outDir
 * @returns {Promise<string[]>} the names rendered (file names without `.mmd`)
 */
export async function renderDiagrams(sourceDir, outDir) {
  const names = readdirSync(sourceDir).filter((file) => file.endsWith('.mmd')).map((file) => file.replace(/\.mmd$/, ''));
  if (names.length === 0) return [];
  mkdirSync(outDir, { recursive: true });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    const page = await browser.newPage();
    await page.route(/^(?!about:|data:)/, (route) => route.abort());
    await page.setContent('<!doctype html><html><body></body></html>');
    await page.addScriptTag({ path: require.resolve('mermaid/dist/mermaid.min.js') });
    for (const name of names) {
      const source = readFileSync(path.join(sourceDir, `${name}.mmd`), 'utf8');
      const svg = await page.evaluate(
        async ({ id, text }) => {
          const mermaid = /** @type {any} */ (globalThis).mermaid;
          mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'neutral', htmlLabels: false, flowchart: { htmlLabels: false }, fontFamily: 'system-ui, sans-serif' });
          const { svg: rendered } = await mermaid.render(id, text);
          return rendered;
        },
        { id: `diagram-${name}`, text: source },
      ).catch((error) => {
        throw new Error(`diagrams/${name}.mmd does not render: ${error.message}`);
      });
      writeFileSync(path.join(outDir, `${name}.svg`), svg.replace(/^<svg /, '<svg xmlns:xlink="http://www.w3.org/1999/xlink" '));
    }
  } finally {
    await browser.close();
  }
  return names;
}
