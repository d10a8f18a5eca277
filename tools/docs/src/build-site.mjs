#!/usr/bin/env node
// `pnpm --filter @capi/docs build` (root: `pnpm docs:build`): writes the VitePress sources into
// tools/docs/content (guides, API and event reference, package references, diagrams, the
// bundled specs), then `vitepress build` writes the static site into tools/docs/dist.
// `--content-only` stops after the sources (what `pnpm docs:dev` serves live).
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishablePackages, repoRoot } from '@capi/release-tools/workspace-packages';
import { build } from 'vitepress';
import { apiIndexPage, listOperations, operationPage, schemasPage } from './api-pages.mjs';
import { renderDiagrams } from './diagrams.mjs';
import { eventIndexPage, eventPage, listEvents } from './event-pages.mjs';
import { guidePage, readGuides } from './guides.mjs';
import { anchorOf, cell } from './markdown-text.mjs';
import { entrySources, writePackageReference } from './package-reference.mjs';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Writes the VitePress sources of the site.
 * @param {{ root?: string, contentDir?: string }} [options]
 * @returns {Promise<{ contentDir: string, pages: string[] }>}
 */
export async function writeContent({ root = repoRoot, contentDir = path.join(packageDir, 'content') } = {}) {
  const pages = [];
  const write = (file, text) => {
    const target = path.join(contentDir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
    if (file.endsWith('.md')) pages.push(file);
  };
  rmSync(contentDir, { recursive: true, force: true });
  mkdirSync(contentDir, { recursive: true });

  const openapiFile = path.join(root, 'specs/dist/openapi.json');
  const asyncapiFile = path.join(root, 'specs/dist/asyncapi.json');
  const read = (file) => {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new Error(`Cannot read ${path.relative(root, file)} (${error.message}); run \`pnpm --filter @capi/specs build\` first (\`pnpm docs:build\` does).`);
    }
  };
  const openapi = read(openapiFile);
  const asyncapi = read(asyncapiFile);
  mkdirSync(path.join(contentDir, 'public'), { recursive: true });
  copyFileSync(openapiFile, path.join(contentDir, 'public/openapi.json'));
  copyFileSync(asyncapiFile, path.join(contentDir, 'public/asyncapi.json'));

  const rendered = await renderDiagrams(path.join(packageDir, 'diagrams'), path.join(contentDir, 'public/diagrams'));
  const diagram = (name) => (rendered.includes(name) ? `/diagrams/${name}.svg` : undefined);
  const diagrams = { signIn: diagram('sign-in'), onboarding: diagram('onboarding'), retries: diagram('retries') };

  // Package references first: the guides link to their symbols.
  const packages = publishablePackages(root).filter((pkg) => entrySources(pkg).length > 0);
  const symbols = new Map();
  const members = new Map();
  const packageSidebars = {};
  for (const pkg of packages) {
    const reference = await writePackageReference(pkg, contentDir);
    for (const [name, link] of reference.symbols) if (!symbols.has(name)) symbols.set(name, link);
    for (const [name, links] of reference.members) members.set(name, [...(members.get(name) ?? []), ...links]);
    packageSidebars[`/packages/${pkg.dirName}/`] = [
      { text: pkg.name, items: [{ text: 'Overview', link: `/packages/${pkg.dirName}/` }, { text: 'API', link: `/packages/${pkg.dirName}/reference/api` }] },
      ...reference.sidebar,
    ];
  }
  write(
    'packages/index.md',
    `---\ntitle: Packages\n---\n\n# Packages\n\n| Package | What it does |\n| --- | --- |\n${packages.map((pkg) => `| [\`${pkg.name}\`](./${pkg.dirName}/index.md) | ${cell(pkg.manifest.description)} |`).join('\n')}\n`,
  );

  const operations = listOperations(openapi);
  write('api/index.md', apiIndexPage(openapi, { diagrams }));
  write('api/schemas.md', schemasPage(openapi));
  for (const entry of operations) write(`api/${entry.operation.operationId}.md`, operationPage(entry, openapi));

  const events = await listEvents(asyncapi);
  const openapiSchemas = new Set(Object.keys(openapi.components?.schemas ?? {}));
  const schemaLink = (name) => (openapiSchemas.has(name) ? `../api/schemas.md#${anchorOf(name)}` : undefined);
  write('events/index.md', eventIndexPage(asyncapi, { diagrams, events }));
  for (const event of events) write(`events/${event.eventType}.md`, await eventPage(event, asyncapi, { schemaLink }));

  const guides = readGuides(path.join(root, 'docs/guides'));
  const links = {
    operations: new Set(operations.map((entry) => entry.operation.operationId)),
    routes: new Map(operations.map((entry) => [`${entry.method.toUpperCase()} ${entry.path}`, entry.operation.operationId])),
    symbols,
    members,
    diagrams,
  };
  for (const guide of guides) write(`${guide.audience === 'partners' ? 'guides' : 'maintainers'}/${guide.slug}.md`, guidePage(guide, links));
  const partnerGuides = guides.filter((guide) => guide.audience === 'partners');
  const maintainerGuides = guides.filter((guide) => guide.audience === 'maintainers');
  write(
    'maintainers/index.md',
    `---\ntitle: For maintainers\n---\n\n# For maintainers of the SDK\n\n::: warning Not for partners\nThese pages are for the people who change and release the capi SDK itself. To use the SDK, start with the [quick start](../guides/${partnerGuides[0]?.slug ?? 'quick-start'}.md).\n:::\n\n${maintainerGuides.map((guide) => `- [${guide.title}](./${guide.slug}.md)`).join('\n')}\n`,
  );

  write(
    'index.md',
    `---
layout: home
title: capi docs
hero:
  name: capi
  text: The partner SDK of the Card Account Partner Interface
  tagline: Sign users in with a wallet (SIWE → JWT), read and set the account's daily spending limit, and receive the platform's signed webhooks.
  actions:
    - theme: brand
      text: Quick start
      link: /guides/${partnerGuides[0]?.slug ?? 'quick-start'}
    - theme: alt
      text: API reference
      link: /api/
    - theme: alt
      text: Event reference
      link: /events/
features:
${partnerGuides.map((guide) => `  - title: ${JSON.stringify(guide.title)}\n    link: /guides/${guide.slug}\n    details: Guide`).join('\n')}
  - title: API reference
    link: /api/
    details: Every operation with its servers, request samples and named examples. Download openapi.json.
  - title: Event reference
    link: /events/
    details: Every webhook event with signed example deliveries, the delivery rules and the retry schedule.
  - title: Packages
    link: /packages/
    details: The TypeDoc reference of every published package.
---
`,
  );

  const navigation = {
    nav: [
      { text: 'Guides', link: `/guides/${partnerGuides[0]?.slug ?? ''}`, activeMatch: '^/guides/' },
      { text: 'API', link: '/api/', activeMatch: '^/api/' },
      { text: 'Events', link: '/events/', activeMatch: '^/events/' },
      { text: 'Packages', items: [{ text: 'All packages', link: '/packages/' }, ...packages.map((pkg) => ({ text: pkg.name, link: `/packages/${pkg.dirName}/` }))] },
      { text: 'Maintainers', link: '/maintainers/', activeMatch: '^/maintainers/' },
    ],
    sidebar: {
      '/guides/': [{ text: 'Guides', items: partnerGuides.map((guide) => ({ text: guide.title, link: `/guides/${guide.slug}` })) }, { text: 'Reference', items: [{ text: 'API reference', link: '/api/' }, { text: 'Event reference', link: '/events/' }, { text: 'Packages', link: '/packages/' }] }],
      '/api/': [
        { text: 'API reference', items: [{ text: 'Overview', link: '/api/' }, { text: 'Schemas', link: '/api/schemas' }] },
        ...[...new Set(operations.map((entry) => entry.tag))].map((tag) => ({
          text: tag,
          items: operations.filter((entry) => entry.tag === tag).map((entry) => ({ text: entry.operation.operationId, link: `/api/${entry.operation.operationId}` })),
        })),
      ],
      '/events/': [{ text: 'Event reference', items: [{ text: 'Overview', link: '/events/' }, ...events.map((event) => ({ text: event.eventType, link: `/events/${event.eventType}` }))] }],
      ...packageSidebars,
      '/packages/': [{ text: 'Packages', items: packages.map((pkg) => ({ text: pkg.name, link: `/packages/${pkg.dirName}/` })) }],
      '/maintainers/': [{ text: 'For maintainers', items: [{ text: 'Overview', link: '/maintainers/' }, ...maintainerGuides.map((guide) => ({ text: guide.title, link: `/maintainers/${guide.slug}` }))] }],
    },
  };
  writeFileSync(path.join(contentDir, '.navigation.json'), JSON.stringify(navigation, null, 2));
  return { contentDir, pages };
}

/**
 * Builds the site: the sources, then VitePress.
 * @param {{ root?: string }} [options]
 * @returns {Promise<{ outDir: string, pages: string[] }>}
 */
export async function buildSite({ root = repoRoot } = {}) {
  const { pages } = await writeContent({ root });
  await build(packageDir);
  return { outDir: path.join(packageDir, 'dist'), pages };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const contentOnly = process.argv.includes('--content-only');
  (contentOnly ? writeContent() : buildSite()).then(
    ({ pages }) => console.log(`docs: ${pages.length} pages${contentOnly ? ' written to content/' : ' built into dist/'} (${((Date.now() - started) / 1000).toFixed(1)} s)`),
    (error) => {
      console.error(`docs build failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
