#!/usr/bin/env node
// `pnpm --filter @capi/docs build`: writes the whole static site into tools/docs/dist.
// Layout: index.html (navigation), api/index.html, events/index.html, guides/<slug>.html,
// packages/<dir>/index.html (TypeDoc), assets/site.css. Everything is local: no CDN, no
// remote font, relative links only.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishablePackages, repoRoot } from '@capi/release-tools/workspace-packages';
import { loadOpenApi, renderApiReference } from './api-reference.mjs';
import { escapeHtml } from './escape-html.mjs';
import { loadAsyncApi, renderEventReference } from './event-reference.mjs';
import { readGuides, renderGuide } from './guides.mjs';
import { entrySources, writePackageReference } from './package-reference.mjs';
import { renderPage, siteCss } from './site-layout.mjs';

/**
 * Builds the site.
 * @param {{ root?: string, outDir?: string }} [options]
 * @returns {Promise<{ outDir: string, pages: string[] }>}
 */
export async function buildSite({ root = repoRoot, outDir = path.join(root, 'tools/docs/dist') } = {}) {
  const guides = readGuides(path.join(root, 'docs/guides'));
  const packages = publishablePackages(root).filter((pkg) => entrySources(pkg).length > 0);
  /** @type {import('./site-layout.mjs').Navigation} */
  const navigation = {
    guides: guides.map((guide) => ({ title: guide.title, href: `guides/${guide.slug}.html` })),
    references: [
      { title: 'API reference (OpenAPI)', href: 'api/index.html' },
      { title: 'Event reference (AsyncAPI)', href: 'events/index.html' },
    ],
    packages: packages.map((pkg) => ({ title: pkg.name, href: `packages/${pkg.dirName}/index.html` })),
  };
  const pages = [];
  const write = (file, html) => {
    const target = path.join(outDir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, html);
    pages.push(file);
  };

  rmSync(outDir, { recursive: true, force: true });
  write('assets/site.css', siteCss);

  const openapi = await loadOpenApi(path.join(root, 'specs/openapi.yaml'));
  write('api/index.html', renderPage({ title: 'API reference', body: renderApiReference(openapi), navigation, pathToRoot: '../' }));

  const asyncapi = await loadAsyncApi(path.join(root, 'specs/asyncapi.yaml'));
  write('events/index.html', renderPage({ title: 'Event reference', body: renderEventReference(asyncapi), navigation, pathToRoot: '../' }));

  for (const guide of guides) {
    write(`guides/${guide.slug}.html`, renderPage({ title: guide.title, body: renderGuide(guide), navigation, pathToRoot: '../' }));
  }

  for (const pkg of packages) {
    await writePackageReference(pkg, path.join(outDir, 'packages', pkg.dirName), '../../');
    pages.push(`packages/${pkg.dirName}/index.html`);
  }

  const cards = (links, describe) => `<ul class="card-list">${links.map((link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.title)}</a>${describe(link)}</li>`).join('')}</ul>`;
  const descriptions = new Map(packages.map((pkg) => [pkg.name, pkg.manifest.description ?? '']));
  write(
    'index.html',
    renderPage({
      title: 'Home',
      navigation,
      pathToRoot: '',
      body: `<h1>capi: the partner SDK of the Card Account Partner Interface</h1>
<p>Sign users in with a wallet (SIWE → JWT), read and set the account's daily spending limit, and receive the platform's signed webhooks.</p>
<h2>Guides</h2>${cards(navigation.guides, () => '')}
<h2>Reference</h2>${cards(navigation.references, () => '')}
<h2>Packages</h2>${cards(navigation.packages, (link) => `<p>${escapeHtml(descriptions.get(link.title) ?? '')}</p>`)}`,
    }),
  );
  return { outDir, pages };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  buildSite().then(
    ({ outDir, pages }) => console.log(`docs: ${pages.length} files in ${path.relative(process.cwd(), outDir) || '.'} (${((Date.now() - started) / 1000).toFixed(1)} s)`),
    (error) => {
      console.error(`docs build failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
