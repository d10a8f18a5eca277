import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { listOperations, loadOpenApi } from '../src/api-reference.mjs';
import { buildSite } from '../src/build-site.mjs';
import { listEvents, loadAsyncApi } from '../src/event-reference.mjs';
import { serveDirectory } from './static-server';

const distDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let browser: Browser;
let site: Awaited<ReturnType<typeof serveDirectory>>;
const requested: string[] = [];

beforeAll(async () => {
  // `turbo run test` builds first; a bare `vitest run` on a clean checkout builds here.
  if (!existsSync(path.join(distDir, 'index.html'))) await buildSite({ outDir: distDir });
  site = await serveDirectory(distDir);
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** The requests that went anywhere but the local server (data: and blob: stay in the page). */
function remoteRequests(urls: string[], origin: string): string[] {
  return urls.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob|about):/.test(url));
}

async function open(relative: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('request', (request) => requested.push(request.url()));
  const response = await page.goto(`${site.origin}/${relative}`, { waitUntil: 'load' });
  expect(response?.status(), relative).toBe(200);
  return page;
}

describe('renders every operation of the OpenAPI spec', () => {
  it('shows each operationId on the API reference page', async () => {
    const spec = await loadOpenApi(path.join(repoRoot, 'specs/openapi.yaml'));
    const operationIds = listOperations(spec).map(({ operation }) => operation.operationId);
    expect(operationIds).toEqual(expect.arrayContaining(['getNonce', 'verifySiweSignature', 'getAccountLimit', 'setAccountLimit', 'getWebhookPublicKey']));
    const page = await open('api/index.html');
    for (const operationId of operationIds) {
      const section = page.locator(`[data-operation-id="${operationId}"]`);
      await expect(section.count(), operationId).resolves.toBe(1);
      expect(await section.locator('.operation-id').innerText()).toBe(operationId);
      expect(await section.isVisible()).toBe(true);
    }
    await page.close();
  }, 60_000);
});

describe('renders every event of the AsyncAPI spec', () => {
  it('shows each eventType with its headers and payload on the event reference page', async () => {
    const document = await loadAsyncApi(path.join(repoRoot, 'specs/asyncapi.yaml'));
    const eventTypes = listEvents(document).map(({ eventType }) => eventType);
    expect(eventTypes).toEqual(expect.arrayContaining(['user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed', 'card.transaction.created']));
    const page = await open('events/index.html');
    for (const eventType of eventTypes) {
      const section = page.locator(`[data-event-type="${eventType}"]`);
      await expect(section.count(), eventType).resolves.toBe(1);
      const text = await section.innerText();
      expect(text).toContain(eventType);
      expect(text).toContain('X-Webhook-Signature');
      expect(text).toContain('eventType');
    }
    await page.close();
  }, 60_000);
});

describe('links every part of the site from one navigation', () => {
  it('reaches the guides, both references and every package reference from the home page, each answering 200', async () => {
    const page = await open('index.html');
    const links = await page.locator('nav.site-nav a').evaluateAll((anchors) => anchors.map((anchor) => (anchor as HTMLAnchorElement).href));
    expect(links.some((href) => href.endsWith('/api/index.html'))).toBe(true);
    expect(links.some((href) => href.endsWith('/events/index.html'))).toBe(true);
    expect(links.filter((href) => href.includes('/guides/')).length).toBeGreaterThanOrEqual(5);
    expect(links.filter((href) => href.includes('/packages/')).length).toBeGreaterThanOrEqual(1);
    for (const href of new Set(links)) {
      const target = await browser.newPage();
      target.on('request', (request) => requested.push(request.url()));
      const response = await target.goto(href, { waitUntil: 'load' });
      expect(response?.status(), href).toBe(200);
      expect(await target.title(), href).not.toBe('');
      await target.close();
    }
    await page.close();
  }, 180_000);
});

describe('works offline: no request leaves localhost', () => {
  it('recorded only requests to the local server (or in-page data and blob URLs)', () => {
    expect(requested.length).toBeGreaterThan(10);
    expect(remoteRequests(requested, site.origin)).toEqual([]);
  });

  it('catches a page that loads a remote font and a CDN script (seeded fault)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-leak-'));
    writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><title>leak</title><link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto"><script src="https://cdn.example.invalid/redoc.js"></script><p>hi</p>',
    );
    const leaky = await serveDirectory(dir);
    try {
      const page = await browser.newPage();
      const seen: string[] = [];
      page.on('request', (request) => seen.push(request.url()));
      await page.goto(`${leaky.origin}/index.html`, { waitUntil: 'load' });
      await page.close();
      expect(remoteRequests(seen, leaky.origin).sort()).toEqual(['https://cdn.example.invalid/redoc.js', 'https://fonts.googleapis.com/css?family=Roboto']);
    } finally {
      await leaky.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  }, 60_000);
});
