// The guides: docs/guides/*.md at the repo root, ordered by their numeric prefix
// ("01-quick-start.md"), each titled by its first "# " heading. A guide whose text says it is
// "For maintainers" goes to the maintainers' section of the site, apart from the partners'.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * @typedef {{ slug: string, title: string, file: string, markdown: string, audience: 'partners' | 'maintainers' }} Guide
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
      const audience = /^For maintainers\b/m.test(markdown) ? 'maintainers' : 'partners';
      return { slug: file.replace(/\.md$/, '').replace(/^\d+-/, ''), title: heading[1].trim(), file: path.join(dir, file), markdown, audience };
    });
}

/**
 * A guide as a VitePress page: links between guides (`./02-sign-in.md`) and to the built site
 * (`../events/index.html`) point at the site's pages, and code spans naming an operation
 * (`getNonce`) or an exported symbol (`createPartnerClient()`) link to its reference page.
 * Code blocks are left alone.
 * @param {Guide} guide
 * @param {{ operations: Set<string>, symbols: Map<string, string>, diagrams?: Record<string, string> }} links
 * @returns {string}
 */
export function guidePage(guide, { operations, symbols, diagrams = {} }) {
  const parts = guide.markdown.split(/(^```[\s\S]*?^```\s*$)/m);
  const body = parts
    .map((part, index) => {
      if (index % 2 === 1) return part;
      return part
        .replace(/\]\(\.\/(?:\d+-)?([a-z0-9-]+)\.md(#[^)]*)?\)/g, ']($1.md$2)')
        .replace(/\]\(\.\.\/((?:events|api|packages)\/[^)#]*?)\.html(#[^)]*)?\)/g, '](../$1.md$2)')
        .replace(/(?<!\[)`([A-Za-z][A-Za-z0-9]*)(\(\))?`(?!\])/g, (whole, name, call) => {
          if (operations.has(name)) return `[\`${name}${call ?? ''}\`](../api/${name}.md)`;
          const symbol = symbols.get(name);
          return symbol ? `[\`${name}${call ?? ''}\`](${symbol})` : whole;
        })
        .replace(/\{\{/g, '{<!-- -->{');
    })
    .join('');
  const picture = guide.slug === 'sign-in' && diagrams.signIn ? `\n![The sign-in sequence: nonce, SIWE message signed by the wallet, challenge, access token, renewal by signing in again](${diagrams.signIn})\n\n` : '';
  const firstSection = body.search(/^## /m);
  const withPicture = picture && firstSection > 0 ? `${body.slice(0, firstSection)}${picture}${body.slice(firstSection)}` : body;
  return `---\ntitle: ${JSON.stringify(guide.title)}\n---\n\n${withPicture}`;
}
