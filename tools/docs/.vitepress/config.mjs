// VitePress configuration of the docs site. The pages under content/ and the navigation in
// content/.navigation.json are written by src/build-site.mjs; this file only says how to show
// them. Everything the site needs is bundled: local search (minisearch), system and bundled
// fonts, no analytics, no CDN.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitepress';

const navigation = JSON.parse(readFileSync(new URL('../content/.navigation.json', import.meta.url), 'utf8'));

export default defineConfig({
  srcDir: 'content',
  outDir: 'dist',
  title: 'capi docs',
  description: 'The partner SDK of the Card Account Partner Interface: guides, API and event reference, package references.',
  lang: 'en-US',
  cleanUrls: false,
  lastUpdated: false,
  // Dead internal links fail the build; links to a local sandbox (http://localhost:4010) are examples.
  ignoreDeadLinks: 'localhostLinks',
  head: [['link', { rel: 'icon', href: 'data:,' }]],
  markdown: {
    // Shiki highlights at build time and marks every code block focusable (tabindex=0), and
    // VitePress does the same for tables: a block that scrolls sideways is keyboard-reachable.
    // The high-contrast themes keep every token at 4.5:1 or more on the code background, in
    // light and in dark mode (axe color-contrast, which the tests run in both).
    theme: { light: 'github-light-high-contrast', dark: 'github-dark-high-contrast' },
  },
  themeConfig: {
    nav: navigation.nav,
    sidebar: navigation.sidebar,
    search: { provider: 'local' },
    outline: { level: [2, 3], label: 'On this page' },
    docFooter: { prev: 'Previous', next: 'Next' },
    footer: { message: 'capi SDK: MIT licensed. Every example on this site works offline against @capi/sandbox.' },
  },
  vite: {
    build: { chunkSizeWarningLimit: 4096 },
    logLevel: 'warn',
  },
});
