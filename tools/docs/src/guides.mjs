// The guides: docs/guides/*.md at the repo root, ordered by their numeric prefix
// ("01-quick-start.md"), each titled by its first "# " heading.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { renderMarkdown } from './markdown.mjs';

/**
 * @typedef {{ slug: string, title: string, file: string, markdown: string }} Guide
 */

/**
 * Reads every guide of a folder.
 * @param {string} dir
 * @returns {Guide[]}
 */
export function readGuides(dir) {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => {
      const markdown = readFileSync(path.join(dir, file), 'utf8');
      const heading = /^#\s+(.+)$/m.exec(markdown);
      if (!heading) throw new Error(`${path.join(dir, file)} has no "# Title" line: every guide starts with one.`);
      return { slug: file.replace(/\.md$/, '').replace(/^\d+-/, ''), title: heading[1].trim(), file: path.join(dir, file), markdown };
    });
}

/**
 * A guide's body as HTML; links between guides ("./sign-in.md") point at the rendered pages.
 * @param {Guide} guide
 * @returns {string}
 */
export function renderGuide(guide) {
  return renderMarkdown(guide.markdown).replace(/href="\.\/(?:\d+-)?([a-z0-9-]+)\.md(#[^"]*)?"/g, 'href="$1.html$2"');
}
