// The guides: docs/guides/*.md at the repo root, ordered by their numeric prefix
// ("01-quick-start.md"), each titled by its first "# " heading. A guide whose text says it is
// "For maintainers" goes to the maintainers' section of the site, apart from the partners'.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * @typedef {{ slug: string, title: string, file: string, markdown: string, audience: 'partners' | 'maintainers' }} Guide
 * @typedef {{ operations: Set<string>, routes: Map<string, string>, symbols: Map<string, string>, members: Map<string, string[]>, diagrams?: Record<string, string> }} GuideLinks
 *   what a guide can link to: operationIds, `METHOD /path` to operationId, exported symbols
 *   and class methods (by name) to their reference sections
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
 * A guide as a VitePress page: links between guides (`./02-sign-in.md`), to the built site
 * (`../events/index.html`), to the AsyncAPI spec (`../../specs/asyncapi.yaml`, which resolves
 * in the repository; the site's event reference is built from it) and to a package's README
 * (`../../packages/client/README.md`; the site's package page is built from it) point at the
 * site's pages, and code spans naming an operation or a
 * package symbol link to its reference page (see {@link referenceLink}). Code blocks are left
 * alone.
 * @param {Guide} guide
 * @param {GuideLinks} links
 * @returns {string}
 */
export function guidePage(guide, links) {
  const { diagrams = {} } = links;
  const parts = guide.markdown.split(/(^```[\s\S]*?^```\s*$)/m);
  const body = parts
    .map((part, index) => {
      if (index % 2 === 1) return part;
      return part
        .replace(/\]\(\.\/(?:\d+-)?([a-z0-9-]+)\.md(#[^)]*)?\)/g, ']($1.md$2)')
        .replace(/\]\(\.\.\/((?:events|api|packages)\/[^)#]*?)\.html(#[^)]*)?\)/g, '](../$1.md$2)')
        .replace(/\]\(\.\.\/\.\.\/specs\/asyncapi\.yaml(#[^)]*)?\)/g, '](../events/index.md$1)')
        .replace(/\]\(\.\.\/\.\.\/packages\/([a-z0-9-]+)\/README\.md(#[^)]*)?\)/g, '](../packages/$1/index.md$2)')
        .replace(/(?<![[`])`([^`\n]+)`(?![\]`])/g, (whole, code) => {
          const target = referenceLink(code, links);
          return target ? `[\`${code}\`](${target})` : whole;
        })
        .replace(/\{\{/g, '{<!-- -->{');
    })
    .join('');
  const picture = guide.slug === 'sign-in' && diagrams.signIn ? `\n![The sign-in sequence: nonce, SIWE message signed by the wallet, challenge, access token, renewal by signing in again](${diagrams.signIn})\n\n` : '';
  const firstSection = body.search(/^## /m);
  const withPicture = picture && firstSection > 0 ? `${body.slice(0, firstSection)}${picture}${body.slice(firstSection)}` : body;
  return `---\ntitle: ${JSON.stringify(guide.title)}\n---\n\n${withPicture}`;
}

/**
 * Where a guide's code span points, if it names something the site documents:
 * - an operation by its route, `GET /api/v1/auth/nonce` (a server variable may lead the path:
 *   `GET {webhooks_url}/api/v1/public-key`), or by its operationId, `getNonce`;
 * - an exported symbol, `createPartnerClient()`; a call with arguments, `acceptTerms(client)`,
 *   is the package's function even where an operation has the same name;
 * - a method reached through a value, `client.signInWithEthereum(...)`, when exactly one
 *   documented class or interface has a method of that name.
 * @param {string} code the text of the code span
 * @param {GuideLinks} links
 * @returns {string | undefined} the page (and #anchor) to link to
 */
export function referenceLink(code, { operations, routes, symbols, members }) {
  const route = /^(GET|POST|PUT|PATCH|DELETE) (?:\{[a-z_]+\})?(\/[^\s?#]*)$/.exec(code);
  if (route) {
    const operationId = routes.get(`${route[1]} ${route[2]}`);
    return operationId && `../api/${operationId}.md`;
  }
  const named = /^([A-Za-z][A-Za-z0-9]*)(\(.*\))?$/.exec(code);
  if (named) {
    const [, name, call] = named;
    const withArguments = call !== undefined && call !== '()';
    if (operations.has(name) && !(withArguments && symbols.has(name))) return `../api/${name}.md`;
    return symbols.get(name);
  }
  const member = /^[a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)*\.([A-Za-z][A-Za-z0-9]*)(\(.*\))?$/.exec(code);
  const found = member ? members.get(member[1]) : undefined;
  return found?.length === 1 ? found[0] : undefined;
}
