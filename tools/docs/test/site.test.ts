import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyWebhookSignature } from '@capi/webhook-signature';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { listOperations, serverUrl } from '../src/api-pages.mjs';
import { buildSite } from '../src/build-site.mjs';
import { chromiumArgs, chromiumPath } from '../src/diagrams.mjs';
import { examplePublicKey, listEvents } from '../src/event-pages.mjs';
import { brokenLinks, crawl, notVisible, remoteRequests, seriousViolations, sidewaysScroll, type PageFacts } from './site-checks';
import { serveDirectory } from './static-server';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const distDir = path.join(packageDir, 'dist');
/** Where the screenshots go (named in the README): screenshots/<width>/<page>.png. */
const screenshotsDir = path.join(packageDir, 'screenshots');
const widths = [1280, 390] as const;
const openapi = JSON.parse(readFileSync(path.join(repoRoot, 'specs/dist/openapi.json'), 'utf8'));
const asyncapi = JSON.parse(readFileSync(path.join(repoRoot, 'specs/dist/asyncapi.json'), 'utf8'));

let browser: Browser;
let site: Awaited<ReturnType<typeof serveDirectory>>;
const requested: string[] = [];

beforeAll(async () => {
  // `turbo run test` builds first; a bare `vitest run` on a clean checkout builds here.
  if (!existsSync(path.join(distDir, 'index.html'))) await buildSite();
  site = await serveDirectory(distDir);
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function open(pathname: string, width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('request', (request) => requested.push(request.url()));
  const response = await page.goto(`${site.origin}${pathname}`, { waitUntil: 'load' });
  expect(response?.status(), pathname).toBe(200);
  return page;
}

const fetchStatus = async (pathname: string) => (await fetch(`${site.origin}${pathname}`)).status;

for (const width of widths) {
  describe(`every page at ${width} px`, () => {
    let pages: Map<string, PageFacts>;
    const sideways: string[] = [];
    const violations: string[] = [];

    beforeAll(async () => {
      // Links, anchors and widths need HTML and CSS only: crawled with scripts off (VitePress
      // pages are rendered at build time), which is what makes crawling every page affordable.
      const crawling = await browser.newContext({ viewport: { width, height: 900 }, javaScriptEnabled: false });
      crawling.on('request', (request) => requested.push(request.url()));
      pages = await crawl(crawling, site.origin, '/', {
        visit: async (page, facts) => {
          const overflow = await sidewaysScroll(page);
          if (overflow > 0) sideways.push(`${facts.path} scrolls ${overflow} px sideways`);
        },
      });
      await crawling.close();
      // axe-core on every page as readers get it, scripts on.
      const reading = await browser.newContext({ viewport: { width, height: 900 } });
      reading.on('request', (request) => requested.push(request.url()));
      const page = await reading.newPage();
      for (const pathname of pages.keys()) {
        await page.goto(`${site.origin}${pathname}`, { waitUntil: 'load' });
        violations.push(...(await seriousViolations(page)).map((violation) => `${pathname}: ${violation}`));
      }
      await reading.close();
    }, 1_200_000);

    it('reaches every part of the site: guides, API, events, packages, maintainers', () => {
      const paths = [...pages.keys()];
      expect(paths.length).toBeGreaterThan(40);
      for (const section of ['/guides/', '/api/', '/events/', '/packages/client/', '/maintainers/']) expect(paths.some((page) => page.startsWith(section)), section).toBe(true);
      expect([...pages.values()].filter((facts) => facts.status !== 200).map((facts) => `${facts.path}: ${facts.status}`)).toEqual([]);
    });

    it('resolves every internal link and #anchor', async () => {
      expect(await brokenLinks(pages, fetchStatus)).toEqual([]);
    }, 120_000);

    it('scrolls no page sideways', () => {
      expect(sideways).toEqual([]);
    });

    it('has no serious or critical axe-core violation on any page', () => {
      expect(violations).toEqual([]);
    });

    it(`writes screenshots of the main pages to screenshots/${width}/`, async () => {
      const dir = path.join(screenshotsDir, String(width));
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const shots = ['/', '/guides/quick-start.html', '/guides/sign-in.html', '/api/', '/api/verifySiweSignature.html', '/api/getWebhookPublicKey.html', '/events/', '/events/user.created.html', '/packages/client/', '/maintainers/'];
      for (const shot of shots) {
        const page = await open(shot, width);
        const file = path.join(dir, `${shot.replace(/^\/|\.html$/g, '').replace(/\/$/, '').replace(/\//g, '_') || 'home'}.png`);
        await page.screenshot({ path: file, fullPage: true });
        await page.close();
        expect(existsSync(file)).toBe(true);
      }
    }, 300_000);
  });
}

describe('the API reference shows every operation, server and named example', () => {
  const operations = listOperations(openapi);

  it('lists the operations of the spec', () => {
    expect(operations.map((entry) => entry.operation.operationId)).toEqual(expect.arrayContaining(['getNonce', 'verifySiweSignature', 'getAccountLimit', 'setAccountLimit', 'getWebhookPublicKey']));
  });

  for (const width of widths) {
    it(`shows on each operation's page its operationId, its servers and every named example, at ${width} px`, async () => {
      const missing: string[] = [];
      for (const { operation, servers } of operations) {
        const page = await open(`/api/${operation.operationId}.html`, width);
        const examples = [operation.requestBody, ...Object.values(operation.responses ?? {})]
          .flatMap((part: any) => Object.values((part?.$ref ? openapi.components.responses[part.$ref.split('/').pop()] : part)?.content ?? {}))
          .flatMap((media: any) => Object.keys(media.examples ?? {}));
        const expected = [operation.operationId, ...servers.map(serverUrl), ...examples.map((name) => `Example: ${name}`), 'Request samples'];
        missing.push(...(await notVisible(page, expected)).map((text) => `${operation.operationId}: ${text}`));
        await page.close();
      }
      expect(missing).toEqual([]);
    }, 180_000);
  }

  it('shows both base URLs on the overview and that getWebhookPublicKey lives on {webhooks_url}', async () => {
    const page = await open('/api/', 1280);
    expect(await notVisible(page, ['https://sandbox.capi.invalid', 'https://api.capi.invalid', 'getWebhookPublicKey on https://webhooks.capi.invalid'])).toEqual([]);
    await page.close();
    const key = await open('/api/getWebhookPublicKey.html', 1280);
    expect(await notVisible(key, ['is not on the core API', 'https://webhooks.capi.invalid'])).toEqual([]);
    expect(await key.getByText('https://sandbox.capi.invalid').count()).toBe(0);
    await key.close();
  }, 60_000);

  it('describes an error body once, on the schema page, instead of under every error', async () => {
    const page = await open('/api/verifySiweSignature.html', 1280);
    expect(await page.locator('a[href*="schemas.html#errorbody"]').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('td code', { hasText: /^code$/ }).count()).toBe(0);
    await page.close();
  }, 60_000);

  it('offers the specs for download', async () => {
    for (const file of ['openapi.json', 'asyncapi.json']) {
      const response = await fetch(`${site.origin}/${file}`);
      expect(response.status, file).toBe(200);
      expect(JSON.parse(await response.text())).toEqual(file === 'openapi.json' ? openapi : asyncapi);
    }
  });
});

describe('the event reference shows every event with signed example deliveries', () => {
  let events: Awaited<ReturnType<typeof listEvents>>;
  beforeAll(async () => {
    events = await listEvents(asyncapi);
  });

  it('lists the event types of the spec', () => {
    expect(events.map((event) => event.eventType)).toEqual(expect.arrayContaining(['user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed', 'card.transaction.created']));
  });

  for (const width of widths) {
    it(`shows each event type with a delivery whose signature verifies with the documentation key, at ${width} px`, async () => {
      for (const { eventType, message } of events) {
        const page = await open(`/events/${eventType}.html`, width);
        expect(await notVisible(page, [eventType, 'X-Webhook-Signature', 'X-Webhook-Timestamp', ...message.examples.map((example: any) => `Example: ${example.name}`)]), eventType).toEqual([]);
        const delivery = await page.locator('div.language-http pre').first().innerText();
        const [head, rawBody] = delivery.split(/\n\n/) as [string, string];
        const header = (name: string) => new RegExp(`^${name}: (.+)$`, 'm').exec(head)?.[1];
        await expect(verifyWebhookSignature({ rawBody: rawBody.trim(), timestamp: header('X-Webhook-Timestamp'), signature: header('X-Webhook-Signature'), publicKey: examplePublicKey, toleranceSeconds: 0 })).resolves.toBeUndefined();
        expect(JSON.parse(rawBody).eventType).toBe(eventType);
        await page.close();
      }
    }, 120_000);
  }

  it('shows the delivery rules, the retry schedule and its timeline on the overview', async () => {
    const page = await open('/events/', 1280);
    expect(await notVisible(page, ['30 seconds', '1 minutes after the previous attempt failed', '5 minutes after the previous attempt failed', '15 minutes after the previous attempt failed', 'about 21 minutes after the first attempt', 'Documentation test key'])).toEqual([]);
    expect(await page.locator('img[src$="/diagrams/retries.svg"]').isVisible()).toBe(true);
    await page.close();
  }, 60_000);
});

describe('shows the diagrams as SVG rendered at build time', () => {
  it('has the sign-in sequence, the onboarding steps and the retry timeline, each a real SVG', async () => {
    for (const [pathname, image] of [['/guides/sign-in.html', 'sign-in'], ['/api/', 'onboarding'], ['/events/', 'retries']] as const) {
      const page = await open(pathname, 1280);
      const img = page.locator(`img[src$="/diagrams/${image}.svg"]`);
      expect(await img.isVisible(), image).toBe(true);
      expect(await img.evaluate((element) => (element as HTMLImageElement).complete && (element as HTMLImageElement).naturalWidth > 0), image).toBe(true);
      expect(await img.evaluate((element) => element.getBoundingClientRect().width), image).toBeGreaterThan(300);
      expect(await img.getAttribute('alt'), image).toMatch(/sequence|steps|timeline/);
      await page.close();
    }
    expect(readFileSync(path.join(distDir, 'diagrams/onboarding.svg'), 'utf8')).toContain('action_complete_kyc');
  }, 60_000);
});

describe('one offline search across guides, API, events and packages', () => {
  async function search(query: string): Promise<string[]> {
    const page = await open('/', 1280);
    await page.getByRole('button', { name: /search/i }).first().click();
    const input = page.locator('#localsearch-input');
    await input.fill(query);
    await page.locator('.VPLocalSearchBox .result').first().waitFor();
    const hrefs = await page.locator('.VPLocalSearchBox .result').evaluateAll((links) => links.map((link) => (link as HTMLAnchorElement).getAttribute('href') ?? ''));
    await page.close();
    return hrefs;
  }

  it('finds an operation', async () => {
    expect((await search('Get the webhook public key')).some((href) => href.includes('/api/getWebhookPublicKey.html'))).toBe(true);
  }, 60_000);

  it('finds an event', async () => {
    expect((await search('kyc.source-of-funds.changed')).some((href) => href.includes('/events/kyc.source-of-funds.changed.html'))).toBe(true);
  }, 60_000);

  it('finds a package symbol', async () => {
    expect((await search('createPartnerClient')).some((href) => href.includes('/packages/client/reference/') && href.includes('#createpartnerclient'))).toBe(true);
  }, 60_000);
});

describe('links the guides to operations and package symbols', () => {
  it('links code spans naming an export to its reference page', async () => {
    const page = await open('/guides/sign-in.html', 1280);
    const hrefs = await page.locator('.vp-doc a').evaluateAll((links) => links.map((link) => (link as HTMLAnchorElement).pathname));
    expect(hrefs.some((href) => href.startsWith('/packages/client/reference/'))).toBe(true);
    await page.close();
  }, 60_000);
});

describe('works offline: no request leaves localhost', () => {
  it('recorded only requests to the local server (or in-page data and blob URLs)', () => {
    expect(requested.length).toBeGreaterThan(100);
    expect(remoteRequests(requested, site.origin)).toEqual([]);
  });

  it('catches a page that loads a remote font and a CDN script (seeded fault)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-leak-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>leak</title><link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto"><script src="https://cdn.example.invalid/redoc.js"></script><p>hi</p>');
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

describe('seeded faults fail their checks', () => {
  it('a broken link and a missing #anchor are reported', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-broken-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>home</title><h1 id="top">home</h1><a href="/missing.html">gone</a> <a href="/index.html#nowhere">no anchor</a> <a href="/index.html#top">fine</a>');
    const broken = await serveDirectory(dir);
    try {
      const context = await browser.newContext();
      const pages = await crawl(context, broken.origin, '/index.html');
      await context.close();
      const reported = await brokenLinks(pages, async (pathname) => (await fetch(`${broken.origin}${pathname}`)).status);
      expect(reported).toEqual(['/index.html -> /missing.html (HTTP 404)', '/index.html -> /index.html#nowhere (no element with id "nowhere")']);
    } finally {
      await broken.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  }, 60_000);

  it('a named example missing from its operation page is reported', async () => {
    const page = await open('/api/verifySiweSignature.html', 390);
    await page.evaluate(() => document.querySelectorAll('h4').forEach((heading) => heading.textContent?.includes('domainNotWhitelisted') && heading.remove()));
    expect(await notVisible(page, ['Example: wafForbidden', 'Example: domainNotWhitelisted'])).toEqual(['Example: domainNotWhitelisted']);
    await page.close();
  }, 60_000);

  it('a page that scrolls sideways is reported', async () => {
    const page = await open('/guides/quick-start.html', 390);
    expect(await sidewaysScroll(page)).toBe(0);
    await page.evaluate(() => {
      const wide = document.createElement('p');
      wide.textContent = 'x'.repeat(400);
      wide.style.whiteSpace = 'nowrap';
      wide.style.width = 'max-content';
      document.querySelector('.vp-doc')?.append(wide);
    });
    expect(await sidewaysScroll(page)).toBeGreaterThan(0);
    await page.close();
  }, 60_000);
});
