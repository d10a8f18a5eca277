// The frame shared by every page the site renders itself: one navigation across guides,
// API reference, event reference and the package references.
import { escapeHtml } from './escape-html.mjs';

/**
 * @typedef {{ title: string, href: string }} NavLink
 * @typedef {{ guides: NavLink[], references: NavLink[], packages: NavLink[] }} Navigation
 */

/**
 * Wraps a page body in the site frame.
 * @param {{ title: string, body: string, navigation: Navigation, pathToRoot: string }} page
 *   `pathToRoot` is "" for pages at the root, "../" one level down; links stay relative so the
 *   site works from any folder and from file://.
 * @returns {string}
 */
export function renderPage({ title, body, navigation, pathToRoot }) {
  const section = (heading, links) =>
    `<h2>${escapeHtml(heading)}</h2><ul>${links.map((link) => `<li><a href="${escapeHtml(pathToRoot + link.href)}">${escapeHtml(link.title)}</a></li>`).join('')}</ul>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · capi docs</title>
<link rel="stylesheet" href="${pathToRoot}assets/site.css">
</head>
<body>
<nav class="site-nav" aria-label="capi docs">
<a class="home" href="${pathToRoot}index.html">capi docs</a>
${section('Guides', navigation.guides)}
${section('Reference', navigation.references)}
${section('Packages', navigation.packages)}
</nav>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The one stylesheet: system fonts only, so nothing is fetched. */
export const siteCss = `
:root { color-scheme: light; --accent: #1f4fd1; --muted: #5b6472; --line: #dde1e7; }
* { box-sizing: border-box; }
body { margin: 0; display: flex; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; }
.site-nav { position: sticky; top: 0; align-self: flex-start; width: 250px; height: 100vh; overflow: auto; padding: 1rem; border-right: 1px solid var(--line); background: #f7f8fa; font-size: 14px; }
.site-nav .home { font-weight: 700; font-size: 1.1rem; text-decoration: none; color: inherit; }
.site-nav h2 { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 1.2rem 0 .3rem; }
.site-nav ul { list-style: none; margin: 0; padding: 0; }
.site-nav li { margin: .15rem 0; }
main { flex: 1; min-width: 0; max-width: 980px; padding: 1.5rem 2rem 4rem; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
pre { background: #f3f4f6; padding: .8rem 1rem; overflow: auto; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); padding: .35rem .5rem; }
th { font-size: 13px; color: var(--muted); }
.method { display: inline-block; min-width: 4.5em; font-weight: 700; text-transform: uppercase; }
.operation, .event { border-top: 2px solid var(--line); margin-top: 2rem; padding-top: 1rem; }
.operation-id, .event-type { font-family: ui-monospace, monospace; background: #eef2ff; padding: .1rem .4rem; border-radius: 4px; }
.badge { font-size: 12px; color: var(--muted); }
.assumption { border-left: 3px solid #c68a00; background: #fff8e6; padding: .4rem .8rem; margin: .5rem 0; font-size: 14px; }
.card-list { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 1rem; padding: 0; list-style: none; }
.card-list li { border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
`;
